package dev.verbs4j.verbs;

import dev.verbs4j.bindings.ibv_cq_ex;
import dev.verbs4j.bindings.ibv_cq_init_attr_ex;
import dev.verbs4j.bindings.ibv_poll_cq_attr;
import dev.verbs4j.bindings.verbs_context;
import dev.verbs4j.verbs.internal.ExtendedOps;
import dev.verbs4j.verbs.internal.Ibv;
import dev.verbs4j.verbs.internal.Native;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The extended polling API of a completion queue ({@code struct ibv_cq_ex}): {@link #start()},
 * read the current completion ({@link #wrId}, {@link #status}, {@link #opcode}, {@link
 * #byteLength}, …), {@link #next()}, and {@link #end()} once started. Every call goes straight to
 * the provider and allocates nothing, and holds the queue open while it runs (a close waits for
 * it; calls after the close throw). A polling pass belongs to the thread that started it: the
 * provider holds the queue's lock until {@code end()}, so {@code start()} again, or calls from
 * another thread, are an {@link IllegalStateException} rather than a deadlock. A view owned by its
 * {@link CompletionQueue}; its one native scratch structure lives as long as the queue.
 */
public final class ExtendedPoller {

    /** Report the byte count. */
    public static final long WITH_BYTE_LEN = 1;
    /** Report immediate data. */
    public static final long WITH_IMM = 1 << 1;
    /** Report the QP number. */
    public static final long WITH_QP_NUM = 1 << 2;
    /** Report the source QP. */
    public static final long WITH_SRC_QP = 1 << 3;
    /** Report the source LID. */
    public static final long WITH_SLID = 1 << 4;
    /** Report the service level. */
    public static final long WITH_SL = 1 << 5;
    /** Report the DLID path bits. */
    public static final long WITH_DLID_PATH_BITS = 1 << 6;
    /** The fields {@link WorkCompletion} reports. */
    public static final long STANDARD = WITH_BYTE_LEN | WITH_IMM | WITH_QP_NUM | WITH_SRC_QP | WITH_SLID | WITH_SL
            | WITH_DLID_PATH_BITS;

    private static final MethodHandle CREATE_CQ_EX = Native.downcallPointerWithErrno(verbs_context.create_cq_ex.descriptor());
    private static final MethodHandle START_POLL = Native.downcallPointer(ibv_cq_ex.start_poll.descriptor(), true);
    private static final MethodHandle NEXT_POLL = Native.downcallPointer(ibv_cq_ex.next_poll.descriptor(), true);
    private static final MethodHandle END_POLL = Native.downcallPointer(ibv_cq_ex.end_poll.descriptor(), true);
    private static final MethodHandle READ_INT = Native.downcallPointer(ibv_cq_ex.read_byte_len.descriptor(), true);
    private static final MethodHandle READ_OPCODE = Native.downcallPointer(ibv_cq_ex.read_opcode.descriptor(), true);
    private static final long WR_ID = ibv_cq_ex.wr_id$offset();
    private static final long STATUS = ibv_cq_ex.status$offset();
    private static final int ENOENT = 2;

    private final CompletionQueue owner;
    private final MemorySegment cq;
    private final MemorySegment pollAttr;
    private final MemorySegment startOp;
    private final MemorySegment nextOp;
    private final MemorySegment endOp;
    private final MemorySegment readOpcodeOp;
    private final MemorySegment readByteLenOp;
    private final MemorySegment readImmOp;
    private final MemorySegment readQpNumOp;
    private final MemorySegment readSrcQpOp;
    private final MemorySegment readWcFlagsOp;
    /** The thread whose polling pass is open, or null. */
    private final AtomicReference<Thread> polling = new AtomicReference<>();
    /**
     * Classic polls ({@link CompletionQueue#poll}) in progress: the provider holds the queue's lock
     * from {@code start_poll} to {@code end_poll}, across Java code, so a classic poll must never
     * wait for it inside its downcall (that would hold up every safepoint, the pass's owner's
     * too). A poll counts itself, then looks for a pass; a pass takes {@code polling}, then waits
     * for the counted polls to leave.
     */
    private final AtomicInteger classicPolls = new AtomicInteger();

    ExtendedPoller(CompletionQueue owner, MemorySegment cqEx) {
        this.owner = owner;
        this.cq = Native.sized(cqEx, ibv_cq_ex.sizeof());
        this.pollAttr = Arena.ofAuto().allocate(ibv_poll_cq_attr.layout());
        this.startOp = ibv_cq_ex.start_poll(cq);
        this.nextOp = ibv_cq_ex.next_poll(cq);
        this.endOp = ibv_cq_ex.end_poll(cq);
        this.readOpcodeOp = ibv_cq_ex.read_opcode(cq);
        this.readByteLenOp = ibv_cq_ex.read_byte_len(cq);
        this.readImmOp = ibv_cq_ex.read_imm_data(cq);
        this.readQpNumOp = ibv_cq_ex.read_qp_num(cq);
        this.readSrcQpOp = ibv_cq_ex.read_src_qp(cq);
        this.readWcFlagsOp = ibv_cq_ex.read_wc_flags(cq);
    }

    static MemorySegment create(Context context, int entries, MemorySegment channel, int compVector, long wcFlags, String what) {
        MemorySegment op = ExtendedOps.op(context.handle(), verbs_context.create_cq_ex$offset());
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(ibv_cq_init_attr_ex.layout());
            ibv_cq_init_attr_ex.cqe(attr, entries);
            ibv_cq_init_attr_ex.channel(attr, channel);
            ibv_cq_init_attr_ex.comp_vector(attr, compVector);
            ibv_cq_init_attr_ex.wc_flags(attr, wcFlags);
            // struct ibv_cq_ex starts with the members of struct ibv_cq (ibv_cq_ex_to_cq is a cast).
            return Ibv.createThrough(CREATE_CQ_EX, op, "ibv_create_cq_ex", what, ibv_cq_ex.sizeof(), context.handle(), attr);
        }
    }

    /**
     * Starts polling ({@code ibv_start_poll()}): true when a completion is current, false when the
     * queue is empty (then do not call {@link #end()}).
     */
    public boolean start() {
        Thread me = Thread.currentThread();
        Thread other = polling.compareAndExchange(null, me);
        if (other != null) {
            throw new IllegalStateException(other == me ? "start() again before end()"
                    : "a polling pass of " + other + " is open: one at a time");
        }
        // polls that counted themselves before the pass was taken finish without the provider's lock
        while (classicPolls.get() != 0) {
            Thread.onSpinWait();
        }
        int rc;
        try {
            owner.enterCall();
            try {
                rc = (int) START_POLL.invokeExact(startOp, cq, pollAttr);
            } finally {
                owner.exitCall();
            }
        } catch (Throwable t) {
            polling.set(null);
            throw Ibv.unchecked(t);
        }
        if (rc == ENOENT) {
            polling.set(null);
            return false;
        }
        if (rc != 0) {
            polling.set(null);
            throw new VerbsException("ibv_start_poll", Math.abs(rc), null);
        }
        return true;
    }

    /** Moves to the next completion ({@code ibv_next_poll()}): false when there is none. */
    public boolean next() {
        checkPolling();
        int rc;
        owner.enterCall();
        try {
            rc = (int) NEXT_POLL.invokeExact(nextOp, cq);
        } catch (Throwable t) {
            throw Ibv.unchecked(t);
        } finally {
            owner.exitCall();
        }
        if (rc == ENOENT) {
            return false;
        }
        if (rc != 0) {
            throw new VerbsException("ibv_next_poll", Math.abs(rc), null);
        }
        return true;
    }

    /** Ends polling ({@code ibv_end_poll()}), after a {@link #start()} that returned true. */
    public void end() {
        checkPolling();
        owner.enterCall();
        try {
            END_POLL.invokeExact(endOp, cq);
        } catch (Throwable t) {
            throw Ibv.unchecked(t);
        } finally {
            owner.exitCall();
            // only now: a classic poll let in earlier would find the provider's lock still held
            polling.set(null);
        }
    }

    /** The work request id of the current completion. */
    public long wrId() {
        checkPolling();
        owner.enterCall();
        try {
            return cq.get(ValueLayout.JAVA_LONG, WR_ID);
        } finally {
            owner.exitCall();
        }
    }

    /** The status of the current completion. */
    public WcStatus status() {
        checkPolling();
        owner.enterCall();
        try {
            return WcStatus.of(cq.get(ValueLayout.JAVA_INT, STATUS));
        } finally {
            owner.exitCall();
        }
    }

    /** The operation of the current completion ({@code ibv_wc_read_opcode()}). */
    public WcOpcode opcode() {
        checkPolling();
        if (readOpcodeOp.equals(MemorySegment.NULL)) {
            throw new IllegalStateException("the provider cannot read the opcode");
        }
        owner.enterCall();
        try {
            return WcOpcode.of((int) READ_OPCODE.invokeExact(readOpcodeOp, cq));
        } catch (Throwable t) {
            throw Ibv.unchecked(t);
        } finally {
            owner.exitCall();
        }
    }

    /** Bytes transferred ({@code ibv_wc_read_byte_len()}; needs {@link #WITH_BYTE_LEN}). */
    public int byteLength() {
        return readInt(readByteLenOp, WITH_BYTE_LEN);
    }

    /** Immediate data in host order ({@code ibv_wc_read_imm_data()}; needs {@link #WITH_IMM}). */
    public int immediateData() {
        return Integer.reverseBytes(readInt(readImmOp, WITH_IMM));
    }

    /** The local QP number ({@code ibv_wc_read_qp_num()}; needs {@link #WITH_QP_NUM}). */
    public int qpNum() {
        return readInt(readQpNumOp, WITH_QP_NUM);
    }

    /** The remote QP number ({@code ibv_wc_read_src_qp()}; needs {@link #WITH_SRC_QP}). */
    public int srcQp() {
        return readInt(readSrcQpOp, WITH_SRC_QP);
    }

    /** {@code IBV_WC_*} flags ({@code ibv_wc_read_wc_flags()}). */
    public int flags() {
        return readInt(readWcFlagsOp, 0);
    }

    private int readInt(MemorySegment op, long needed) {
        checkPolling();
        if (op.equals(MemorySegment.NULL)) {
            throw new IllegalStateException("the queue was created without the field (flag 0x" + Long.toHexString(needed) + ")");
        }
        owner.enterCall();
        try {
            return (int) READ_INT.invokeExact(op, cq);
        } catch (Throwable t) {
            throw Ibv.unchecked(t);
        } finally {
            owner.exitCall();
        }
    }

    /**
     * Begins a classic poll: refused while a pass is open (the provider would wait for its lock
     * until the pass ends); otherwise no pass starts until {@link #endClassicPoll()}.
     */
    void beginClassicPoll() {
        classicPolls.getAndIncrement();
        Thread p = polling.get();
        if (p != null) {
            classicPolls.getAndDecrement();
            throw new IllegalStateException("a polling pass of the extended API (" + p + ") is open: end() it before poll");
        }
    }

    /** Ends what {@link #beginClassicPoll()} began. */
    void endClassicPoll() {
        classicPolls.getAndDecrement();
    }

    private void checkPolling() {
        owner.ensureOpen();
        Thread p = polling.get();
        if (p != Thread.currentThread()) {
            throw new IllegalStateException(p == null ? "no current completion: call start() first"
                    : "the polling pass is open on another thread (" + p + ")");
        }
    }
}
