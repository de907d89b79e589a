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
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

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
    private final Map<Long, CompletionQueue> queues = new ConcurrentHashMap<>();
    private final ReentrantLock eventLock = new ReentrantLock();

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
        return waiter.await(timeout, this::tryGetEvent);
    }

    /** Returns the queue of a pending event without blocking, or null when there is none. */
    public CompletionQueue tryGetEvent() {
        try (Use held = use(); Arena arena = Arena.ofConfined()) {
            MemorySegment capture = Native.captureSegment(arena);
            MemorySegment cqOut = arena.allocate(ValueLayout.ADDRESS);
            MemorySegment ctxOut = arena.allocate(ValueLayout.ADDRESS);
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
                    MemorySegment cqPointer = cqOut.get(ValueLayout.ADDRESS, 0);
                    CompletionQueue cq = queues.get(cqPointer.address());
                    if (cq == null) {
                        // not one of ours: acknowledge it at once so that its destruction cannot wait for it
                        rdma_core_h.ibv_ack_cq_events(cqPointer, 1);
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

    void register(CompletionQueue cq, long address) {
        queues.put(address, cq);
    }

    void unregister(long address) {
        queues.remove(address);
    }

    @Override
    MemorySegment handle() {
        ensureOpen();
        return channel;
    }

    @Override
    protected void destroy() {
        waiter.close();
        Ibv.check(rdma_core_h.ibv_destroy_comp_channel(channel), "ibv_destroy_comp_channel", context.name());
    }

    @Override
    protected String describe() {
        return "CompletionChannel on " + context.name();
    }
}
