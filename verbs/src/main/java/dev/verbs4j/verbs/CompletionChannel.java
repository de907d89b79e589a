package dev.verbs4j.verbs;

import dev.verbs4j.bindings.ibv_comp_channel;
import dev.verbs4j.bindings.rdma_core_h;
import dev.verbs4j.verbs.event.DescriptorWaiter;
import dev.verbs4j.verbs.event.EventSource;
import dev.verbs4j.verbs.event.Readiness;
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
import java.lang.invoke.MethodHandle;

/**
 * A completion event channel ({@code struct ibv_comp_channel}, from {@code
 * ibv_create_comp_channel()}): completion queues created with it signal here when armed with
 * {@link CompletionQueue#requestNotify}. Owned by its {@link Context}; closing it first closes the
 * completion queues that use it and wakes threads blocked in {@link #await}.
 */
public final class CompletionChannel extends NativeResource implements EventSource {

    private static final MethodHandle CREATE_COMP_CHANNEL = Ibv.withErrno("ibv_create_comp_channel");
    private static final MethodHandle GET_CQ_EVENT = Ibv.withErrno("ibv_get_cq_event");

    private final Context context;
    private final MemorySegment channel;
    private final int fd;
    private final DescriptorWaiter waiter;
    private final ReentrantLock eventLock = new ReentrantLock();
    /** The queues that signal here and their native addresses, the first {@link #queueCount}: under {@link #eventLock}. */
    private CompletionQueue[] queues = new CompletionQueue[2];
    private long[] queueAddresses = new long[2];
    private int queueCount;
    /**
     * What {@code ibv_get_cq_event} writes (errno, the queue, its context): used under
     * {@link #eventLock} while a use of the channel is held. Freed by the garbage collector once the
     * channel is unreachable, so that closing the channel does not close a shared arena (which
     * would stop every thread for a handshake).
     */
    private final Arena eventArena = Arena.ofAuto();
    private final MemorySegment capture = Native.captureSegment(eventArena);
    private final MemorySegment cqOut = eventArena.allocate(ValueLayout.JAVA_LONG);
    private final MemorySegment ctxOut = eventArena.allocate(ValueLayout.ADDRESS);

    CompletionChannel(Context context) {
        super(context);
        this.context = context;
        try (Use held = context.use()) {
            this.channel = Ibv.create(CREATE_COMP_CHANNEL, "ibv_create_comp_channel", context.name(),
                    ibv_comp_channel.sizeof(), context.handle());
            this.fd = ibv_comp_channel.fd(channel);
            Libc.setNonBlocking(fd, true);
            this.waiter = new DescriptorWaiter(fd);
            attach();
        }
    }

    /** The channel's file descriptor: readable when an event is pending (usable with poll/epoll). */
    @Override
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

    /**
     * Runs {@code task} on a new virtual thread once an event is pending or the channel closes,
     * unless the returned watch is cancelled first; no thread waits meanwhile. Closing the channel
     * runs a pending task (which then finds the channel closed) before the descriptor goes.
     *
     * @throws IllegalStateException when the channel is closed
     */
    public Readiness.Watch whenReadable(Runnable task) {
        try (Use held = use()) {
            return waiter.whenReadable(task);
        }
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
                        rc = (int) GET_CQ_EVENT.invokeExact(capture, channel, cqOut, ctxOut);
                    } catch (Throwable t) {
                        throw Ibv.unchecked(t);
                    }
                    if (rc != 0 && DescriptorWaiter.nonePending(Native.errno(capture), "ibv_get_cq_event", context.name())) {
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

    /** The registered queue at {@code address}, or null (under {@link #eventLock}). */
    private CompletionQueue queue(long address) {
        for (int i = 0; i < queueCount; i++) {
            if (queueAddresses[i] == address) {
                return queues[i];
            }
        }
        return null;
    }

    void register(CompletionQueue cq, long address) {
        eventLock.lock();
        try {
            if (queueCount == queues.length) {
                queues = Arrays.copyOf(queues, 2 * queueCount);
                queueAddresses = Arrays.copyOf(queueAddresses, 2 * queueCount);
            }
            queues[queueCount] = cq;
            queueAddresses[queueCount] = address;
            queueCount++;
        } finally {
            eventLock.unlock();
        }
    }

    void unregister(long address) {
        eventLock.lock();
        try {
            for (int i = 0; i < queueCount; i++) {
                if (queueAddresses[i] == address) {
                    queueCount--;
                    queues[i] = queues[queueCount];
                    queueAddresses[i] = queueAddresses[queueCount];
                    queues[queueCount] = null;
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
        // no event is taken any more: every taker held a use of the channel, and the last has gone
        waiter.close();
        Ibv.check(rdma_core_h.ibv_destroy_comp_channel(channel), "ibv_destroy_comp_channel", context.name());
    }

    @Override
    protected String describe() {
        return "CompletionChannel on " + context.name();
    }
}
