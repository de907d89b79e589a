package dev.verbs4j.rdmacm;

import dev.verbs4j.verbs.Access;
import dev.verbs4j.verbs.AddressHandle;
import dev.verbs4j.verbs.Closeables;
import dev.verbs4j.verbs.CompletionChannel;
import dev.verbs4j.verbs.CompletionQueue;
import dev.verbs4j.verbs.Context;
import dev.verbs4j.verbs.MemoryRegion;
import dev.verbs4j.verbs.NativeResource;
import dev.verbs4j.verbs.Opcode;
import dev.verbs4j.verbs.ProtectionDomain;
import dev.verbs4j.verbs.QueuePair;
import dev.verbs4j.verbs.QueuePairInit;
import dev.verbs4j.verbs.ReceiveRequests;
import dev.verbs4j.verbs.SendRequest;
import dev.verbs4j.verbs.SendRequests;
import dev.verbs4j.verbs.SharedReceiveQueue;
import dev.verbs4j.verbs.WorkCompletions;

import dev.verbs4j.verbs.RdmaArena;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.UnaryOperator;

/**
 * The helpers of {@code <rdma/rdma_verbs.h>} over the queue pair of one {@link CmId}: register
 * buffers on the queue pair's protection domain, post a single-buffer receive, send, RDMA read,
 * RDMA write or UD send, and wait for the next send or receive completion.
 *
 * <p>The posting methods reuse one preallocated work request each: they allocate nothing. They are
 * meant for one thread posting sends and one posting receives, as in C; further threads queue
 * behind them (each request is filled and posted under a lock), and a close waits for a post in
 * progress.
 *
 * <p>The registering methods register the application's buffer in place, as {@link
 * ProtectionDomain#register} does: the buffer must come from an open {@link RdmaArena} (whose
 * close deregisters the region before freeing the memory) or from {@link Arena#global()}, so that
 * neither the device nor a peer can reach memory that was freed while registered. For memory of
 * another arena, register it with {@link ProtectionDomain#registerUnchecked} on {@link
 * #protectionDomain()} and keep it allocated until the region is closed.
 *
 * <p>{@link #getSendCompletion} and {@link #getReceiveCompletion} poll the send or receive
 * completion queue and, when it is empty, arm it and wait on its {@link CompletionChannel}, as
 * {@code rdma_get_send_comp()} / {@code rdma_get_recv_comp()} do. They need separate send and
 * receive completion queues, each with a channel of its own: {@link #createQueuePair} creates the
 * queue pair that way (what {@code rdma_create_qp()} does when given no completion queues). A queue
 * without a channel is busy-polled instead.
 *
 * <p>A {@code CmVerbs} is closed with its id (before the id's queue pair is destroyed); closing it
 * also closes what {@link #createQueuePair} created for it: the completion queues (and with them
 * the queue pair), their channels, and the protection domain when none was given (with the memory
 * regions registered on it).
 */
public final class CmVerbs extends NativeResource {

    /** The Q_Key of the connection manager's UD queue pairs ({@code RDMA_UDP_QKEY}). */
    public static final int RDMA_UDP_QKEY = 0x01234567;

    private final CmId id;
    private final QueuePair qp;
    private final ProtectionDomain pd;
    private final CompletionQueue sendCq;
    private final CompletionQueue recvCq;
    private final SharedReceiveQueue srq;
    private final NativeResource[] owned;
    private final SendRequests send = new SendRequests(1, 1);
    private final ReceiveRequests recv = new ReceiveRequests(1, 1);
    /** Each request is filled and posted by one thread at a time. */
    private final ReentrantLock sendLock = new ReentrantLock();
    private final ReentrantLock recvLock = new ReentrantLock();

    private CmVerbs(CmId id, QueuePair qp, CompletionQueue sendCq, CompletionQueue recvCq, SharedReceiveQueue srq,
                    NativeResource... owned) {
        super(null);
        this.id = id;
        this.qp = qp;
        this.pd = qp.protectionDomain();
        this.sendCq = sendCq;
        this.recvCq = recvCq;
        this.srq = srq;
        this.owned = owned;
        dependOn(id);
    }

    /**
     * The helpers over the queue pair {@code id} already has, which completes sends on {@code
     * sendCq} and receives on {@code recvCq} (the queues it was created with; not checked).
     *
     * @param srq the shared receive queue the queue pair takes its receives from, or null:
     *            {@link #postReceive} posts there when given, as {@code rdma_post_recv} does for
     *            an id with an SRQ
     * @throws IllegalStateException when the id has no queue pair
     */
    public static CmVerbs of(CmId id, CompletionQueue sendCq, CompletionQueue recvCq, SharedReceiveQueue srq) {
        QueuePair qp = id.queuePair();
        if (qp == null) {
            throw new IllegalStateException(id + " has no queue pair: create it first, or use CmVerbs.createQueuePair");
        }
        return new CmVerbs(id, qp, Objects.requireNonNull(sendCq, "sendCq"), Objects.requireNonNull(recvCq, "recvCq"), srq);
    }

    /**
     * Creates the id's queue pair as {@code rdma_create_qp()} does without completion queues: a
     * send queue of {@code maxSendWr} and a receive queue of {@code maxRecvWr} entries, each with a
     * completion channel of its own, on {@code pd} or, when null, on a new protection domain of
     * the id's device. {@code configure} may set the other capabilities ({@code
     * maxInlineData}, {@code signalAll}, an SRQ, ...) on the {@link QueuePairInit}; it may be null.
     * What is created here is closed with the returned object, which is closed with the id.
     */
    public static CmVerbs createQueuePair(CmId id, ProtectionDomain pd, int maxSendWr, int maxRecvWr,
                                          UnaryOperator<QueuePairInit> configure) {
        if (maxSendWr < 1 || maxRecvWr < 0) {
            throw new IllegalArgumentException("maxSendWr must be >= 1 and maxRecvWr >= 0, got " + maxSendWr + ", " + maxRecvWr);
        }
        Context ctx = id.context();
        ProtectionDomain ownPd = null;
        CompletionChannel sendCh = null;
        CompletionChannel recvCh = null;
        CompletionQueue scq = null;
        CompletionQueue rcq = null;
        try {
            if (pd == null) {
                ownPd = ctx.allocateProtectionDomain();
                pd = ownPd;
            }
            sendCh = ctx.createCompletionChannel();
            recvCh = ctx.createCompletionChannel();
            scq = ctx.createCompletionQueue(maxSendWr, sendCh, 0);
            rcq = ctx.createCompletionQueue(Math.max(1, maxRecvWr), recvCh, 0);
            QueuePairInit init = QueuePairInit.of(id.qpType(), scq, rcq).maxSendWr(maxSendWr).maxRecvWr(maxRecvWr);
            if (configure != null) {
                init = configure.apply(init);
            }
            QueuePair qp = id.createQueuePair(pd, init);
            return new CmVerbs(id, qp, scq, rcq, null, rcq, scq, recvCh, sendCh, ownPd);
        } catch (RuntimeException e) {
            throw Closeables.closeAfter(e, rcq, scq, recvCh, sendCh, ownPd);
        }
    }

    /** The id. */
    public CmId id() {
        return id;
    }

    /** The id's queue pair. */
    public QueuePair queuePair() {
        return qp;
    }

    /** The protection domain of the queue pair. */
    public ProtectionDomain protectionDomain() {
        return pd;
    }

    /** The send completion queue. */
    public CompletionQueue sendCompletionQueue() {
        return sendCq;
    }

    /** The receive completion queue. */
    public CompletionQueue receiveCompletionQueue() {
        return recvCq;
    }

    /**
     * Registers {@code buffer} for sends and receives ({@code rdma_reg_msgs}: local write).
     *
     * @throws IllegalArgumentException when {@code buffer} is not memory of an open {@link
     *                                  RdmaArena} or of {@link Arena#global()} (see the class
     *                                  documentation)
     */
    public MemoryRegion registerMessages(MemorySegment buffer) {
        return register(buffer, Access.LOCAL_WRITE);
    }

    /**
     * Registers {@code buffer} as the target of peers' RDMA reads ({@code rdma_reg_read}).
     *
     * @throws IllegalArgumentException as {@link #registerMessages}
     */
    public MemoryRegion registerRead(MemorySegment buffer) {
        return register(buffer, Access.LOCAL_WRITE | Access.REMOTE_READ);
    }

    /**
     * Registers {@code buffer} as the target of peers' RDMA writes ({@code rdma_reg_write}).
     *
     * @throws IllegalArgumentException as {@link #registerMessages}
     */
    public MemoryRegion registerWrite(MemorySegment buffer) {
        return register(buffer, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
    }

    private MemoryRegion register(MemorySegment buffer, int access) {
        try (Use held = use()) {
            // ProtectionDomain.register takes only RdmaArena and global memory, and says so
            return pd.register(buffer, access);
        }
    }

    /**
     * Posts a receive of {@code buffer}, which lies in {@code mr}, with {@code context} as work
     * request id ({@code rdma_post_recv}); to the SRQ when the helpers were given one.
     */
    public void postReceive(long context, MemorySegment buffer, MemoryRegion mr) {
        try (Use held = use()) {
            recvLock.lock();
            try {
                recv.get(0).wrId(context).sge(mr, offset(buffer, mr), length(buffer));
                if (srq != null) {
                    srq.postReceive(recv, 1);
                } else {
                    qp.postReceive(recv, 1);
                }
            } finally {
                recvLock.unlock();
            }
        }
    }

    /**
     * Posts a SEND of {@code buffer} ({@code rdma_post_send}); {@code mr} may be null for an
     * INLINE send (the INLINE flag is then added).
     */
    public void postSend(long context, MemorySegment buffer, MemoryRegion mr, int flags) {
        post(context, Opcode.SEND, buffer, mr, flags, 0, 0, null, 0);
    }

    /** Posts an RDMA READ from {@code remoteAddress}/{@code rkey} into {@code buffer} ({@code rdma_post_read}). */
    public void postRead(long context, MemorySegment buffer, MemoryRegion mr, int flags, long remoteAddress, int rkey) {
        Objects.requireNonNull(mr, "an RDMA read needs the memory region of its local buffer");
        post(context, Opcode.RDMA_READ, buffer, mr, flags, remoteAddress, rkey, null, 0);
    }

    /**
     * Posts an RDMA WRITE of {@code buffer} to {@code remoteAddress}/{@code rkey} ({@code
     * rdma_post_write}); {@code mr} may be null for an INLINE write.
     */
    public void postWrite(long context, MemorySegment buffer, MemoryRegion mr, int flags, long remoteAddress, int rkey) {
        post(context, Opcode.RDMA_WRITE, buffer, mr, flags, remoteAddress, rkey, null, 0);
    }

    /**
     * Posts a UD SEND of {@code buffer} to queue pair {@code remoteQpn} through {@code ah}, with
     * Q_Key {@link #RDMA_UDP_QKEY} ({@code rdma_post_ud_send}); {@code mr} may be null for INLINE.
     */
    public void postUdSend(long context, MemorySegment buffer, MemoryRegion mr, int flags, AddressHandle ah, int remoteQpn) {
        Objects.requireNonNull(ah, "a UD send needs the address handle of its destination");
        post(context, Opcode.SEND, buffer, mr, flags, 0, 0, ah, remoteQpn);
    }

    /** Fills the one send request and posts it, holding this object and the request. */
    private void post(long context, Opcode opcode, MemorySegment buffer, MemoryRegion mr, int flags, long remoteAddress,
                      int rkey, AddressHandle ah, int remoteQpn) {
        try (Use held = use()) {
            sendLock.lock();
            try {
                SendRequest wr = request(context, opcode, buffer, mr, flags);
                if (opcode != Opcode.SEND) {
                    wr.rdma(remoteAddress, rkey);
                } else if (ah != null) {
                    wr.ud(ah, remoteQpn, RDMA_UDP_QKEY);
                }
                qp.postSend(send, 1);
            } finally {
                sendLock.unlock();
            }
        }
    }

    private SendRequest request(long context, Opcode opcode, MemorySegment buffer, MemoryRegion mr, int flags) {
        SendRequest wr = send.reset(0).wrId(context).opcode(opcode).flags(flags);
        if (mr == null) {
            wr.inline(buffer);
        } else {
            wr.sge(mr, offset(buffer, mr), length(buffer));
        }
        return wr;
    }

    /**
     * Waits up to {@code timeout} for the next send completion ({@code rdma_get_send_comp}): polls
     * the send queue into {@code completions}; when it is empty, arms it and waits on its channel.
     *
     * @return how many completions arrived (at most {@code completions.capacity()}), 0 on timeout
     */
    public int getSendCompletion(WorkCompletions completions, Duration timeout) {
        return getCompletion(sendCq, completions, timeout);
    }

    /** The same as {@link #getSendCompletion} for the receive completion queue ({@code rdma_get_recv_comp}). */
    public int getReceiveCompletion(WorkCompletions completions, Duration timeout) {
        return getCompletion(recvCq, completions, timeout);
    }

    private int getCompletion(CompletionQueue cq, WorkCompletions completions, Duration timeout) {
        ensureOpen();
        long deadline = System.nanoTime() + timeout.toNanos();
        CompletionChannel channel = cq.channel();
        while (true) {
            int n = cq.poll(completions);
            if (n > 0) {
                return n;
            }
            if (channel == null) {
                if (System.nanoTime() - deadline >= 0) {
                    return 0;
                }
                Thread.onSpinWait();
                continue;
            }
            cq.requestNotify(false);
            n = cq.poll(completions);
            if (n > 0) {
                return n;
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return 0;
            }
            // an event of another queue on a shared channel only sends us round again
            channel.await(Duration.ofNanos(left));
        }
    }

    private static long offset(MemorySegment buffer, MemoryRegion mr) {
        long off = buffer.address() - mr.address();
        if (off < 0 || off + buffer.byteSize() > mr.length()) {
            throw new IndexOutOfBoundsException("the buffer (" + buffer.byteSize() + " bytes at 0x" + Long.toHexString(buffer.address())
                    + ") is not inside " + mr);
        }
        return off;
    }

    private static int length(MemorySegment buffer) {
        if (buffer.byteSize() > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("a work request carries at most 2 GiB, got " + buffer.byteSize() + " bytes");
        }
        return (int) buffer.byteSize();
    }

    @Override
    protected void destroy() {
        try {
            Closeables.closeAll(owned);
        } finally {
            send.close();
            recv.close();
        }
    }

    @Override
    protected String describe() {
        return "CmVerbs of " + id;
    }
}
