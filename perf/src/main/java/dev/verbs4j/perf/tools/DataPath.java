package dev.verbs4j.perf.tools;

import dev.verbs4j.perf.tools.PerfOptions.Kind;
import dev.verbs4j.perf.tools.PerfOptions.Verb;
import dev.verbs4j.tools.ToolExit;
import dev.verbs4j.verbs.CompletionChannel;
import dev.verbs4j.verbs.CompletionQueue;
import dev.verbs4j.verbs.MemoryRegion;
import dev.verbs4j.verbs.Opcode;
import dev.verbs4j.verbs.SendFlags;
import dev.verbs4j.verbs.SendRequest;
import dev.verbs4j.verbs.WorkCompletion;
import dev.verbs4j.verbs.WorkCompletions;

import java.io.PrintStream;
import java.time.Duration;
import java.util.Locale;

/**
 * The allocation-free data path of a perftest run on its {@link PerftestResources}: the work
 * requests of each measurement prepared once, then posted again and again; receives posted and
 * counted per queue pair; completions polled (or, with {@code -e}, waited for) and checked, a
 * failed one ending the run as perftest ends it.
 */
final class DataPath {

    /** How long one wait for a completion event lasts before the interrupt flag is looked at. */
    private static final Duration EVENT_SLICE = Duration.ofMillis(200);

    private final PerfOptions o;
    private final PrintStream err;
    private final PerftestResources res;
    private final MemoryRegion mr;
    private final CompletionChannel events;
    private final WorkCompletions wcs;
    /** Per queue pair, the receives posted in this round. */
    private final int[] recvPosted;
    /** Completed receives not yet posted again, per queue pair (--recv_post_list posts them in lists). */
    private final int[] unused;

    DataPath(PerfOptions o, PrintStream err, PerftestResources res) {
        this.o = o;
        this.err = err;
        this.res = res;
        this.mr = res.mr();
        this.events = res.events();
        this.wcs = res.wcs();
        this.recvPosted = new int[o.numQps];
        this.unused = new int[o.numQps];
    }

    private ToolExit exit(String message, int status) {
        return ToolExit.printed(err, message, status);
    }

    // ---- the work requests ----

    /** The send flags of a {@code size}-byte operation: signaled, inline up to {@code -I}. */
    int flags(long size) {
        return SendFlags.SIGNALED | (size <= o.inlineSize ? SendFlags.INLINE : 0);
    }

    /** QP 0's one request, signaled: a SEND of {@code size} bytes from its send area. */
    void prepareSend(long size) {
        datagram(res.sends(0).reset(0).wrId(0).opcode(Opcode.SEND).flags(flags(size)).sge(mr, res.localOffset(0), (int) size), 0);
    }

    /** QP 0's one request, signaled: an RDMA WRITE of {@code size} bytes into the peer's area. */
    void prepareWrite(long size) {
        Wire.Dest r = res.peer(0);
        res.sends(0).reset(0).wrId(0).opcode(Opcode.RDMA_WRITE).flags(flags(size)).sge(mr, res.localOffset(0), (int) size)
                .rdma(r.vaddr(), r.rkey());
    }

    /** QP 0's one request, signaled and never inline: an RDMA READ of {@code size} bytes, or the atomic. */
    void prepareRead(long size) {
        SendRequest wr = res.sends(0).reset(0).wrId(0).flags(SendFlags.SIGNALED).sge(mr, res.localOffset(0), (int) size);
        if (o.verb == Verb.READ) {
            wr.opcode(Opcode.RDMA_READ).rdma(res.peer(0).vaddr(), res.peer(0).rkey());
        } else {
            atomic(wr, res.peer(0));
        }
    }

    /**
     * The work requests of every queue pair for a stream of {@code size}-byte operations,
     * unsignaled (a post list of {@code -l} each); returns those flags.
     */
    int prepareStream(long size) {
        int list = Math.max(1, o.postList);
        for (int i = 0; i < o.numQps; i++) {
            Wire.Dest r = res.peer(i);
            for (int k = 0; k < list; k++) {
                SendRequest wr = res.sends(i).reset(k).wrId(i).flags(flags(size) & ~SendFlags.SIGNALED)
                        .sge(res.mr(i), res.localOffset(i), (int) size);
                switch (o.verb) {
                    case SEND -> datagram(wr.opcode(Opcode.SEND), i);
                    case WRITE -> wr.opcode(Opcode.RDMA_WRITE).rdma(r.vaddr(), r.rkey());
                    case READ -> wr.opcode(Opcode.RDMA_READ).rdma(r.vaddr(), r.rkey());
                    case ATOMIC -> atomic(wr, r);
                }
            }
        }
        return flags(size) & ~SendFlags.SIGNALED;
    }

    /** Sets the flags of request {@code k} of queue pair {@code i}'s post list. */
    void flags(int i, int k, int flags) {
        res.sends(i).get(k).flags(flags);
    }

    /** UD: addresses a SEND of queue pair {@code i} to the peer's queue pair. */
    private void datagram(SendRequest wr, int i) {
        if (o.isUd()) {
            if (o.rdmaCm) {
                wr.ud(res.ah(i), res.peerQpn(i), res.peerQkey(i));
            } else {
                wr.ud(res.ah(i), res.peer(i).qpn(), PerftestResources.QKEY);
            }
        }
    }

    private void atomic(SendRequest wr, Wire.Dest r) {
        if (o.atomicType == PerfOptions.AtomicType.FETCH_AND_ADD) {
            wr.opcode(Opcode.ATOMIC_FETCH_AND_ADD).atomic(r.vaddr(), r.rkey(), 1, 0);
        } else {
            wr.opcode(Opcode.ATOMIC_CMP_AND_SWP).atomic(r.vaddr(), r.rkey(), 0, 0);
        }
    }

    // ---- posting ----

    /** Posts up to rx_depth receives of {@code size} bytes per queue pair for the next round. */
    void postInitialReceives(long size) throws ToolExit {
        int list = Math.max(1, o.recvPostList);
        for (int i = 0; i < o.numQps; i++) {
            for (int k = 0; k < list; k++) {
                if (o.isUd()) {
                    // the 40-byte GRH lands just before the cache line the payload starts on
                    res.recvs(i).get(k).wrId(i).sge(res.mr(i), res.remoteOffset(i) + res.device().cacheLine()
                            - PerftestResources.UD_ADDITION, (int) size + PerftestResources.UD_ADDITION);
                } else {
                    res.recvs(i).get(k).wrId(i).sge(res.mr(i), res.remoteOffset(i), (int) size);
                }
            }
            recvPosted[i] = 0;
            unused[i] = 0;
            int first = o.duration > 0 ? o.rxDepth : Math.min(o.rxDepth, o.iters);
            if (res.srq() != null) {
                first /= o.numQps; // perftest: the SRQ's depth shared out among the queue pairs
            }
            // --recv_post_list: the depth in lists of that many receives, each list one post
            for (int k = 0; k < first / list; k++) {
                postReceive(i);
            }
        }
    }

    /** The receives queue pair {@code i} has posted in this round. */
    int receivesPosted(int i) {
        return recvPosted[i];
    }

    /**
     * A receive of queue pair {@code i} completed: with --recv_post_list once that many are used,
     * they are posted again as one list, as long as fewer than {@code limit} (-1: no limit) have been posted.
     */
    void received(int i, long limit) throws ToolExit {
        int list = Math.max(1, o.recvPostList);
        unused[i]++;
        if ((limit < 0 || recvPosted[i] + list <= limit) && unused[i] >= list) {
            postReceive(i);
            unused[i] -= list;
        }
    }

    void postReceive(int i) throws ToolExit {
        int list = Math.max(1, o.recvPostList);
        try {
            if (res.srq() != null) {
                res.srq().postReceive(res.recvs(i), list);
            } else {
                res.qp(i).postReceive(res.recvs(i), list);
            }
        } catch (RuntimeException e) {
            throw exit("Couldn't post receive: rcnt=" + recvPosted[i], completionStatus());
        }
        recvPosted[i] += list;
    }

    /** Posts the first {@code count} requests of queue pair {@code i}; {@code scnt} goes in the failure message. */
    void post(int i, int count, int scnt) throws ToolExit {
        try {
            res.qp(i).postSend(res.sends(i), count);
        } catch (RuntimeException e) {
            throw exit("Couldn't post send: scnt=" + scnt, completionStatus());
        }
    }

    /**
     * Posts the next list of a stream without a fixed end (duration and infinite modes) on queue
     * pair {@code i}, which has posted {@code scnt} requests before: its {@code list} requests carry
     * {@code baseFlags}, and those whose count is a multiple of {@code cqMod} are signaled.
     */
    void postStreamList(int i, int list, long scnt, int cqMod, int baseFlags) throws ToolExit {
        for (int k = 0; k < list; k++) {
            boolean signal = (scnt + k + 1) % cqMod == 0;
            flags(i, k, signal ? baseFlags | SendFlags.SIGNALED : baseFlags);
        }
        post(i, list, (int) scnt);
    }

    // ---- completions ----

    CompletionQueue sendCq() {
        return res.sendCq();
    }

    CompletionQueue recvCq() {
        return res.recvCq();
    }

    /** Whether completions are waited for through a channel ({@code -e}). */
    boolean events() {
        return events != null;
    }

    /** Polls {@code cq}; the completions are {@link #completion}(0) up to the count returned. */
    int poll(CompletionQueue cq) throws ToolExit {
        try {
            return cq.poll(wcs);
        } catch (RuntimeException e) {
            throw exit("Poll CQ failed", completionStatus());
        }
    }

    /** Completion {@code w} of the last poll. */
    WorkCompletion completion(int w) {
        return wcs.get(w);
    }

    /** Waits for one completion on {@code cq} (interruptibly) and checks it. */
    void awaitOne(CompletionQueue cq, boolean recv, int a, int b) throws ToolExit {
        int spins = 0;
        int ne;
        while ((ne = poll(cq)) == 0) {
            if (events != null) {
                awaitEvent();
            } else if ((++spins & 0xfff) == 0 && Thread.currentThread().isInterrupted()) {
                throw exit(" Interrupted", 1);
            }
        }
        for (int w = 0; w < ne; w++) {
            check(wcs.get(w), recv, a, b);
        }
    }

    /** One completion of {@code cq} during the set-up, waited for interruptibly (not checked). */
    WorkCompletion awaitSetup(CompletionQueue cq) throws ToolExit {
        int spins = 0;
        while (poll(cq) == 0) {
            if (events != null) {
                awaitEvent();
            } else if ((++spins & 0xfff) == 0) {
                if (Thread.currentThread().isInterrupted()) {
                    throw exit(" Interrupted", 1);
                }
                Thread.onSpinWait();
            }
        }
        return wcs.get(0);
    }

    /**
     * With -e: sleeps until a completion queue of the channel signals (or a slice passes), then
     * arms that queue again; the caller polls next. Every queue is armed from its creation on and
     * again after each of its events, so a completion after the caller's empty poll always wakes.
     */
    void awaitEvent() throws ToolExit {
        CompletionQueue cq;
        try {
            cq = events.await(EVENT_SLICE);
        } catch (RuntimeException e) {
            throw exit("Failed to get cq_event", 1);
        }
        if (cq != null) {
            try {
                cq.requestNotify(false);
            } catch (RuntimeException e) {
                throw exit("Couldn't request CQ notification", 1);
            }
        }
        interrupted();
    }

    /** Ends the run when the thread is interrupted. */
    void interrupted() throws ToolExit {
        if (Thread.currentThread().isInterrupted()) {
            throw exit(" Interrupted", 1);
        }
    }

    /**
     * A failed completion ends the run as perftest ends it: its message names the side by the queue
     * (a receive "at server", a send "at client", whatever the role), then the counters.
     */
    void check(WorkCompletion wc, boolean recv, int a, int b) throws ToolExit {
        if (!wc.isSuccess()) {
            err.print(" Completion with error at " + (recv ? "server" : "client") + "\n");
            err.print(String.format(Locale.ROOT, " Failed status %d: wr_id %d syndrom 0x%x\n", wc.statusCode(), (int) wc.wrId(),
                    wc.vendorError()));
            err.print(recv ? " rcnt=" + a + "\n" : "scnt=" + a + ", ccnt=" + b + "\n");
            String after = switch (o.verb) {
                case WRITE -> o.kind == Kind.LAT ? "Test exited with Error" : " Failed to complete run_iter_bw function successfully";
                case READ -> o.kind == Kind.BW ? " Failed to complete run_iter_bw function successfully" : null;
                case ATOMIC -> o.kind == Kind.BW ? " Error occurred in run_iter function" : null;
                case SEND -> null;
            };
            if (after != null) {
                err.print(after + "\n");
            }
            throw new ToolExit(completionStatus());
        }
    }

    /** The status perftest exits with after a completion error: 17, or 1 for write_lat, write_bw, atomic_bw. */
    private int completionStatus() {
        boolean one = o.verb == Verb.WRITE || (o.verb == Verb.ATOMIC && o.kind == Kind.BW);
        return one ? 1 : 17;
    }
}
