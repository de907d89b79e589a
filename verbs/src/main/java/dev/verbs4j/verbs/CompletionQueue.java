package dev.verbs4j.verbs;

import dev.verbs4j.bindings.ibv_context;
import dev.verbs4j.bindings.ibv_context_ops;
import dev.verbs4j.bindings.ibv_cq;
import dev.verbs4j.bindings.rdma_core_h;
import dev.verbs4j.verbs.internal.Ibv;
import dev.verbs4j.verbs.internal.Native;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * A completion queue ({@code struct ibv_cq}, from {@code ibv_create_cq()}). {@link #poll} and
 * {@link #requestNotify} call the provider's operations directly, as the C inline functions do,
 * and allocate nothing. Owned by its {@link Context} (and closed before its channel, if it has
 * one); closing it acknowledges pending events, then calls {@code ibv_destroy_cq()}.
 */
public final class CompletionQueue extends NativeResource {

    private static final MethodHandle CREATE_CQ = Ibv.withErrno("ibv_create_cq");

    private static final MethodHandle POLL_CQ = Native.downcallPointer(ibv_context_ops.poll_cq.descriptor(), true);
    private static final MethodHandle REQ_NOTIFY_CQ =
            Native.downcallPointer(ibv_context_ops.req_notify_cq.descriptor(), true);

    /** Events are acknowledged once this many have been received. */
    private static final int ACK_BATCH = 64;

    private final Context context;
    private final CompletionChannel channel;
    private final MemorySegment cq;
    private final MemorySegment pollOp;
    private final MemorySegment notifyOp;
    private final ExtendedPoller poller;
    private final boolean borrowed;
    private int unackedEvents;

    CompletionQueue(Context context, int entries, CompletionChannel channel, int compVector) {
        this(context, entries, channel, compVector, -1);
    }

    /** With {@code wcFlags >= 0}: created by {@code ibv_create_cq_ex()} for the extended polling API. */
    CompletionQueue(Context context, int entries, CompletionChannel channel, int compVector, long wcFlags) {
        super(context);
        if (entries < 1) {
            throw new IllegalArgumentException("a completion queue needs at least 1 entry, got " + entries);
        }
        if (compVector < 0 || compVector >= context.numCompVectors()) {
            throw new IllegalArgumentException("completion vector " + compVector + " out of range [0, "
                    + context.numCompVectors() + ")");
        }
        this.context = context;
        this.channel = channel;
        String what = context.name() + ", " + entries + " entries";
        try (Use heldContext = context.use(); Use heldChannel = channel == null ? null : channel.use()) {
            MemorySegment channelHandle = channel == null ? MemorySegment.NULL : channel.handle();
            if (wcFlags >= 0) {
                this.cq = ExtendedPoller.create(context, entries, channelHandle, compVector, wcFlags, what);
                this.poller = new ExtendedPoller(this, this.cq);
            } else {
                this.cq = Ibv.create(CREATE_CQ, "ibv_create_cq", what, ibv_cq.sizeof(), context.handle(), entries,
                        MemorySegment.NULL, channelHandle, compVector);
                this.poller = null;
            }
            this.borrowed = false;
            MemorySegment ops = ibv_context.ops(context.handle());
            this.pollOp = ibv_context_ops.poll_cq(ops);
            this.notifyOp = ibv_context_ops.req_notify_cq(ops);
            if (channel != null) {
                channel.register(this, cq.address());
            }
            attach(channel);
        }
        context.track(cq.address(), this);
    }

    /** A queue on {@code ibvCq}, made and freed by somebody else, without a channel. */
    CompletionQueue(Context context, MemorySegment ibvCq) {
        super(context);
        this.context = context;
        this.channel = null;
        this.cq = Native.sized(ibvCq, ibv_cq.sizeof());
        this.poller = null;
        this.borrowed = true;
        MemorySegment ops = ibv_context.ops(context.handle());
        this.pollOp = ibv_context_ops.poll_cq(ops);
        this.notifyOp = ibv_context_ops.req_notify_cq(ops);
        attach();
        context.track(cq.address(), this);
    }

    /** The number of entries the queue really has (at least the number asked for). */
    public int capacity() {
        try (Use held = use()) {
            return ibv_cq.cqe(cq);
        }
    }

    /**
     * The extended polling API ({@code ibv_start_poll()} and friends) of a queue created with
     * {@link Context#createExtendedCompletionQueue}.
     *
     * @throws IllegalStateException for a queue created the classic way
     */
    public ExtendedPoller extended() {
        try (Use held = use()) {
            if (poller == null) {
                throw new IllegalStateException(describe() + " was not created with ibv_create_cq_ex");
            }
            return poller;
        }
    }

    /** The channel that receives this queue's events, or null. */
    public CompletionChannel channel() {
        return channel;
    }

    /**
     * Confines this queue's data path to the calling thread: its {@link #poll} and {@link
     * #requestNotify} from this thread take no atomic operation (with {@link
     * WorkCompletions#confined}, none at all), and in exchange only this thread may close the queue
     * or anything whose close would close it (its channel, its context): such a close from another
     * thread is an {@link IllegalStateException}, before anything is closed, until this thread has
     * closed the queue (or has terminated). Other threads may still poll (counted, as before).
     *
     * @return this queue
     * @throws IllegalStateException when closed, or confined to another thread already
     */
    public CompletionQueue confine() {
        confineToCurrentThread();
        return this;
    }

    /**
     * Polls up to {@code completions.capacity()} completions into {@code completions} and returns
     * how many arrived (0 when none). Does not allocate.
     *
     * @throws VerbsException when the provider reports a polling error
     */
    public int poll(WorkCompletions completions) {
        int n;
        boolean counted = enterDataPath();
        ExtendedPoller classic = null;
        try {
            if (poller != null) {
                poller.beginClassicPoll();
                classic = poller;
            }
            boolean taken = completions.take();
            MemorySegment array = taken ? completions.address() : completions.segment();
            try {
                n = (int) POLL_CQ.invokeExact(pollOp, cq, completions.capacity(), array);
            } finally {
                if (taken) {
                    completions.release();
                }
            }
        } catch (Throwable t) {
            throw Ibv.unchecked(t);
        } finally {
            if (classic != null) {
                classic.endClassicPoll();
            }
            exitDataPath(counted);
        }
        if (n < 0) {
            throw new VerbsException("ibv_poll_cq", Math.abs(n), context.name());
        }
        completions.filled(n);
        return n;
    }

    /**
     * Arms the queue: the next completion ({@code solicitedOnly}: the next solicited one) sends an
     * event to the channel.
     */
    public void requestNotify(boolean solicitedOnly) {
        int rc;
        boolean counted = enterDataPath();
        try {
            rc = (int) REQ_NOTIFY_CQ.invokeExact(notifyOp, cq, solicitedOnly ? 1 : 0);
        } catch (Throwable t) {
            throw Ibv.unchecked(t);
        } finally {
            exitDataPath(counted);
        }
        if (rc != 0) {
            throw new VerbsException("ibv_req_notify_cq", Math.abs(rc), context.name());
        }
    }

    /** Resizes the queue to at least {@code entries} entries ({@code ibv_resize_cq()}). */
    public void resize(int entries) {
        try (Use held = use()) {
            Ibv.check(rdma_core_h.ibv_resize_cq(cq, entries), "ibv_resize_cq", context.name() + ", " + entries + " entries");
        }
    }

    /**
     * Acknowledges the events received so far ({@code ibv_ack_cq_events()}). Events are also
     * acknowledged in batches as they arrive and before the queue is destroyed, so this is never
     * needed for correctness.
     */
    public void ackEvents() {
        if (channel == null) {
            ensureOpen();
            return;
        }
        try (Use held = use()) {
            channel.withEventLock(this::ackPending);
        }
    }

    /** Counts an event the channel took for this queue; called under the channel's event lock. */
    void eventReceived() {
        if (++unackedEvents >= ACK_BATCH) {
            ackPending();
        }
    }

    /** Acknowledges the counted events; under the channel's event lock. */
    private void ackPending() {
        if (unackedEvents > 0) {
            rdma_core_h.ibv_ack_cq_events(cq, unackedEvents);
            unackedEvents = 0;
        }
    }

    Context context() {
        return context;
    }

    @Override
    MemorySegment handle() {
        ensureOpen();
        return cq;
    }

    @Override
    protected void destroy() {
        context.untrack(cq.address());
        if (borrowed) {
            return;
        }
        if (channel == null) {
            Ibv.check(rdma_core_h.ibv_destroy_cq(cq), "ibv_destroy_cq", context.name());
            return;
        }
        // ibv_destroy_cq waits until every event taken for the queue is acknowledged: no event may
        // be taken between the last acknowledgement and the destruction, so both happen under the
        // lock under which the channel takes events
        channel.withEventLock(() -> {
            channel.unregister(cq.address());
            ackPending();
            Ibv.check(rdma_core_h.ibv_destroy_cq(cq), "ibv_destroy_cq", context.name());
        });
    }

    @Override
    protected String describe() {
        return "CompletionQueue on " + context.name();
    }
}
