package dev.verbs4j.verbs;

import dev.verbs4j.bindings.ibv_comp_channel;
import dev.verbs4j.bindings.rdma_core_h;
import dev.verbs4j.verbs.internal.FdWaiter;
import dev.verbs4j.verbs.internal.Ibv;
import dev.verbs4j.verbs.internal.Libc;
import dev.verbs4j.verbs.internal.Native;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * A completion event channel ({@code struct ibv_comp_channel}, from {@code
 * ibv_create_comp_channel()}): completion queues created with it signal here when armed with
 * {@link CompletionQueue#requestNotify}. Owned by its {@link Context}; closing it first closes the
 * completion queues that use it and wakes threads blocked in {@link #await}.
 */
public final class CompletionChannel extends NativeResource {

    private final Context context;
    private final MemorySegment channel;
    private final int fd;
    private final FdWaiter waiter;
    /** The queues that signal here, looked up by their native address (few per channel; copied on change). */
    private volatile CompletionQueue[] queues = new CompletionQueue[0];
    private volatile long[] queueAddresses = new long[0];
    private final ReentrantLock eventLock = new ReentrantLock();
    /** What {@code ibv_get_cq_event} writes (errno, the queue, its context): used under {@link #eventLock} only. */
    private final Arena eventArena = Arena.ofShared();
    private final MemorySegment capture = Native.captureSegment(eventArena);
    private final MemorySegment cqOut = eventArena.allocate(ValueLayout.JAVA_LONG);
    private final MemorySegment ctxOut = eventArena.allocate(ValueLayout.ADDRESS);

    CompletionChannel(Context context) {
        super(context);
        this.context = context;
        try (Use held = context.use()) {
            this.channel = Ibv.create(Ibv.CREATE_COMP_CHANNEL, "ibv_create_comp_channel", context.name(),
                    ibv_comp_channel.sizeof(), context.handle());
            this.fd = ibv_comp_channel.fd(channel);
            Libc.setNonBlocking(fd, true);
            this.waiter = new FdWaiter(fd);
            attach();
        } catch (RuntimeException | Error e) {
            eventArena.close();
            throw e;
        }
    }

    /** The channel's file descriptor: readable when an event is pending (usable with poll/epoll). */
    public int fd() {
        return fd;
    }

    /**
     * Waits up to {@code timeout} for a completion event and returns the queue that signalled, or
     * null on timeout. The event is acknowledged in batches (and before the queue is destroyed).
     * The queue must be armed again with {@link CompletionQueue#requestNotify} for the next event.
     *
     * @throws IllegalStateException when the channel is closed, also while waiting
     */
    public CompletionQueue await(Duration timeout) {
        return waiter.await(timeout, takeEvent);
    }

    /** {@link #tryGetEvent}, made once (a method reference evaluated per wait may allocate). */
    private final Supplier<CompletionQueue> takeEvent = this::tryGetEvent;

    /** Returns the queue of a pending event without blocking, or null when there is none. */
    public CompletionQueue tryGetEvent() {
        try (Use held = use()) {
            eventLock.lock();
            try {
                while (true) {
                    int rc;
                    try {
                        rc = (int) Ibv.GET_CQ_EVENT.invokeExact(capture, channel, cqOut, ctxOut);
                    } catch (Throwable t) {
                        throw Ibv.unchecked(t);
                    }
                    if (rc != 0 && FdWaiter.nonePending(Native.errno(capture), "ibv_get_cq_event", context.name())) {
                        return null;
                    }
                    long cqAddress = cqOut.get(ValueLayout.JAVA_LONG, 0);
                    CompletionQueue cq = queue(cqAddress);
                    if (cq == null) {
                        // not one of ours: acknowledge it at once so that its destruction cannot wait for it
                        rdma_core_h.ibv_ack_cq_events(MemorySegment.ofAddress(cqAddress), 1);
                        continue;
                    }
                    // counted under the lock: the queue's destruction acknowledges it
                    cq.eventReceived();
                    if (!cq.isClosed()) {
                        return cq;
                    }
                }
            } finally {
                eventLock.unlock();
            }
        }
    }

    /**
     * Runs {@code action} under the lock under which events are taken: what a queue does there
     * (its last acknowledgement and its destruction) cannot race with an event taken for it.
     */
    void withEventLock(Runnable action) {
        eventLock.lock();
        try {
            action.run();
        } finally {
            eventLock.unlock();
        }
    }

    /** The registered queue at {@code address}, or null. */
    private CompletionQueue queue(long address) {
        long[] addresses = queueAddresses;
        CompletionQueue[] cqs = queues;
        for (int i = 0; i < addresses.length && i < cqs.length; i++) {
            if (addresses[i] == address) {
                return cqs[i];
            }
        }
        return null;
    }

    void register(CompletionQueue cq, long address) {
        eventLock.lock();
        try {
            int n = queueAddresses.length;
            CompletionQueue[] cqs = Arrays.copyOf(queues, n + 1);
            long[] addresses = Arrays.copyOf(queueAddresses, n + 1);
            cqs[n] = cq;
            addresses[n] = address;
            queues = cqs;
            queueAddresses = addresses;
        } finally {
            eventLock.unlock();
        }
    }

    void unregister(long address) {
        eventLock.lock();
        try {
            long[] addresses = queueAddresses;
            for (int i = 0; i < addresses.length; i++) {
                if (addresses[i] == address) {
                    CompletionQueue[] cqs = queues;
                    long[] a = new long[addresses.length - 1];
                    CompletionQueue[] q = new CompletionQueue[cqs.length - 1];
                    System.arraycopy(addresses, 0, a, 0, i);
                    System.arraycopy(addresses, i + 1, a, i, a.length - i);
                    System.arraycopy(cqs, 0, q, 0, i);
                    System.arraycopy(cqs, i + 1, q, i, q.length - i);
                    queues = q;
                    queueAddresses = a;
                    return;
                }
            }
        } finally {
            eventLock.unlock();
        }
    }

    @Override
    MemorySegment handle() {
        ensureOpen();
        return channel;
    }

    @Override
    protected void destroy() {
        try {
            waiter.close();
            Ibv.check(rdma_core_h.ibv_destroy_comp_channel(channel), "ibv_destroy_comp_channel", context.name());
        } finally {
            // no event is taken any more: every taker held a use of the channel, and the last has gone
            eventArena.close();
        }
    }

    @Override
    protected String describe() {
        return "CompletionChannel on " + context.name();
    }
}
