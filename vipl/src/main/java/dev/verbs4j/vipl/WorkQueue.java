package dev.verbs4j.vipl;

import dev.verbs4j.verbs.CompletionChannel;
import dev.verbs4j.verbs.CompletionQueue;
import dev.verbs4j.verbs.WcOpcode;
import dev.verbs4j.verbs.WcStatus;
import dev.verbs4j.verbs.WorkCompletion;

import java.lang.foreign.MemorySegment;

/**
 * One work queue of a VI (§2.1): the FIFO of posted descriptors in post order, the verbs
 * completion queue its completions arrive on (the attached {@link VipCq}'s, or a hidden one with
 * its own completion channel for VipSendWait/VipRecvWait), and the write-back of completions into
 * the descriptors (§6.4). Work request ids are {@code seq << 1 | receive}.
 */
final class WorkQueue {

    final VipVi vi;
    final boolean receive;
    final VipCq cq;
    final CompletionChannel hiddenChannel;
    final CompletionQueue ibvCq;
    /** What VipSendWait/VipRecvWait sleep on (a queue without a CQ), else null. */
    private final CompletionWatch watch;
    final Ring<Posted> ring = new Ring<>();
    /** Records of dequeued descriptors, for reuse. */
    private Posted[] free = new Posted[16];
    private int freeCount;
    private long nextSeq;

    WorkQueue(VipVi vi, boolean receive, VipCq cq, int depth) {
        this.vi = vi;
        this.receive = receive;
        this.cq = cq;
        if (cq == null) {
            hiddenChannel = vi.nic.context.createCompletionChannel();
            ibvCq = vi.nic.context.createCompletionQueue(depth, hiddenChannel, 0);
            watch = new CompletionWatch(vi.nic, hiddenChannel, ibvCq);
        } else {
            hiddenChannel = null;
            ibvCq = cq.cq;
            watch = null;
        }
    }

    long wrId(Posted p) {
        return p.seq << 1 | (receive ? 1 : 0);
    }

    /** Appends a descriptor, linking the previous tail's Next/NextHandle to it (§10.3). Under the lock. */
    Posted append(MemorySegment memory, int handle) {
        Posted p = freeCount > 0 ? free[--freeCount] : new Posted();
        p.reset(memory, nextSeq, handle);
        VipDescriptor d = p.descriptor;
        try {
            d.segment().set(java.lang.foreign.ValueLayout.JAVA_LONG, VipDescriptor.NEXT, 0L);
            d.segment().set(java.lang.foreign.ValueLayout.JAVA_INT, VipDescriptor.NEXT_HANDLE, 0);
            d.status(0);
        } catch (RuntimeException e) {
            recycle(p);
            throw e;
        }
        nextSeq++;
        Posted tail = ring.peekLast();
        if (tail != null && !tail.memoryGone) {
            try {
                tail.descriptor.segment().set(java.lang.foreign.ValueLayout.JAVA_LONG, VipDescriptor.NEXT, memory.address());
                tail.descriptor.segment().set(java.lang.foreign.ValueLayout.JAVA_INT, VipDescriptor.NEXT_HANDLE, handle);
            } catch (RuntimeException e) {
                if (!inaccessible(tail.descriptor, e)) {
                    throw e;
                }
                tail.memoryGone = true; // the previous descriptor's memory was freed: no link to write
            }
        }
        ring.addLast(p);
        return p;
    }

    /** Keeps a dequeued record for reuse. Under the lock. */
    private void recycle(Posted p) {
        p.descriptor.point(MemorySegment.NULL);
        if (freeCount == free.length) {
            if (free.length >= ring.size() + 64) {
                return; // enough kept
            }
            free = java.util.Arrays.copyOf(free, free.length * 2);
        }
        free[freeCount++] = p;
    }

    /** Completes {@code p} without the queue pair: Status = DONE | errors | op. Under the lock. */
    void completeLocally(Posted p, int errorBits) {
        p.inVerbs = false;
        finish(p, VipStatus.DONE | errorBits | CompletionMapping.opBits(receive, p.op, false));
    }

    private void finish(Posted p, int status) {
        p.done = true;
        if (!p.memoryGone) {
            try {
                p.descriptor.status(status);
            } catch (RuntimeException e) {
                if (!inaccessible(p.descriptor, e)) {
                    throw e;
                }
                p.memoryGone = true;
            }
        }
        if (cq != null && !cq.destroyed) {
            cq.add(this);
        }
        if (watch != null) {
            watch.signal();
        }
    }

    /**
     * Whether {@code e}, thrown while accessing {@code d}'s memory, means that memory is gone
     * (its arena was closed) or belongs to another thread (a confined arena).
     */
    static boolean inaccessible(VipDescriptor d, RuntimeException e) {
        return e instanceof WrongThreadException || !d.segment().scope().isAlive();
    }

    /**
     * {@code p}'s memory was closed while it was queued: it completes with nothing written back,
     * and VipSendDone/VipRecvDone dequeue it with DESCRIPTOR_ERROR. Under the lock.
     */
    void memoryGone(Posted p) {
        p.memoryGone = true;
        p.inVerbs = false;
        if (!p.done) {
            finish(p, 0);
        }
    }

    /**
     * Writes the completion {@code wc} into its descriptor. Under the lock. A descriptor whose
     * memory was closed meanwhile completes without a write-back (see {@link #memoryGone}); an
     * error completion still moves a reliable VI to the Error state.
     */
    void complete(WorkCompletion wc) {
        Posted p = find(wc.wrId() >>> 1);
        if (p == null || p.done) {
            return;
        }
        try {
            completeInto(p, wc);
        } catch (RuntimeException e) {
            if (!inaccessible(p.descriptor, e)) {
                throw e;
            }
            memoryGone(p);
            WcStatus st = wc.status();
            if (st != WcStatus.SUCCESS && st != WcStatus.WR_FLUSH_ERR) {
                if (vi.reliable()) {
                    vi.enterError();
                } else {
                    vi.afterUnreliableError();
                }
            }
        }
    }

    /** The queued record of work request number {@code seq}, or null: by position first (numbers are consecutive). */
    private Posted find(long seq) {
        int n = ring.size();
        if (n == 0) {
            return null;
        }
        long at = seq - ring.peekFirst().seq;
        if (at >= 0 && at < n) {
            Posted p = ring.get((int) at);
            if (p.seq == seq) {
                return p;
            }
        }
        for (int i = 0; i < n; i++) {
            Posted p = ring.get(i);
            if (p.seq == seq) {
                return p;
            }
        }
        return null;
    }

    private void completeInto(Posted p, WorkCompletion wc) {
        p.inVerbs = false;
        WcStatus st = wc.status();
        if (st == WcStatus.WR_FLUSH_ERR && vi.rearming()) {
            // an Unreliable VI's queue pair is being re-armed: the descriptor stays posted
            vi.rearmIfDrained();
            return;
        }
        VipReliabilityLevel level = vi.attributes.reliabilityLevel();
        int errors = CompletionMapping.errorBits(st, level, receive, p.op);
        VipDescriptor d = p.descriptor;
        if (errors != 0 && errors != VipStatus.DESC_FLUSHED_ERROR && p.regionGone) {
            // a receive whose region was deregistered before it was handed to the queue pair (see
            // VipVi.submit): a message reached it, which is a protection error (§3.2.1)
            errors = VipStatus.PROTECTION_ERROR;
        } else if ((errors & VipStatus.FORMAT_ERROR) != 0 && DescriptorCheck.protection(d, p, vi.nic, vi.attributes.ptag()) != 0) {
            // the descriptor passed the checks when posted: a region it uses was deregistered (or
            // moved to another tag) since, which is a protection error (§3.2.1), however the
            // provider words it (rxe: a malformed work request)
            errors = errors & ~VipStatus.FORMAT_ERROR | VipStatus.PROTECTION_ERROR;
        } else if (receive && (errors & VipStatus.FORMAT_ERROR) != 0) {
            // a receive that passed the format and protection checks when posted is not
            // malformed: the provider's malformed-request completion (rxe) means the incoming
            // message did not fit, a length error (§6.4.1)
            errors = errors & ~VipStatus.FORMAT_ERROR | VipStatus.LENGTH_ERROR;
        }
        boolean remoteWrite = receive && errors == 0 && wc.opcode() == WcOpcode.RECV_RDMA_WITH_IMM;
        int status = VipStatus.DONE | errors | CompletionMapping.opBits(receive, p.op, remoteWrite);
        if (errors == 0) {
            if (receive) {
                // Decision (§10.3): a Write with immediate data puts nothing in the receive's data segments: Length 0.
                d.length(remoteWrite ? 0 : wc.byteLength());
                if ((wc.flags() & WorkCompletion.FLAG_WITH_IMM) != 0) {
                    d.immediateData(wc.immediateData());
                    status |= VipStatus.IMMEDIATE;
                }
            } else {
                d.length((int) p.dataLength);
            }
        } else if (receive && (errors & VipStatus.LENGTH_ERROR) != 0) {
            d.length(0);
        }
        finish(p, status);
        if (errors != 0 && errors != VipStatus.DESC_FLUSHED_ERROR && !vi.reliable()) {
            vi.afterUnreliableError(); // reported in the descriptor only; the VI stays Connected (§2.5.1)
        } else if (errors != 0 && errors != VipStatus.DESC_FLUSHED_ERROR) {
            vi.enterError();
            VipErrorCode async = CompletionMapping.asyncError(st, level, receive, p.op);
            if (async != null) {
                vi.nic.report(new VipErrorDescriptor(vi.nic, vi, cq, d.address(),
                        CompletionMapping.opBits(receive, p.op, false), VipResourceCode.VI, async));
            }
        }
    }

    boolean hasInVerbs() {
        for (int i = 0; i < ring.size(); i++) {
            if (ring.get(i).inVerbs) {
                return true;
            }
        }
        return false;
    }

    /** Completes every descriptor still queued with DESC_FLUSHED (those the queue pair did not flush). */
    void flushRemaining() {
        for (int i = 0; i < ring.size(); i++) {
            Posted p = ring.get(i);
            if (!p.done) {
                completeLocally(p, VipStatus.DESC_FLUSHED_ERROR);
            }
        }
    }

    /** Marks descriptors handed to a queue pair that was reset as not posted (only before any traffic). */
    void takeBackFromVerbs() {
        for (int i = 0; i < ring.size(); i++) {
            ring.get(i).inVerbs = false;
        }
    }

    /** VipSendDone/VipRecvDone: dequeues the head if it is done. */
    VipReturn done(VipDescriptor out) {
        vi.nic.poll(ibvCq);
        vi.nic.lock.lock();
        try {
            Posted head = ring.peekFirst();
            if (head == null || !head.done) {
                return VipReturn.NOT_DONE;
            }
            ring.pollFirst();
            out.point(head.descriptor.segment());
            // its memory was closed while it was queued: dequeued, with nothing written into it
            boolean gone = head.memoryGone;
            recycle(head);
            return gone ? VipReturn.DESCRIPTOR_ERROR : VipReturn.SUCCESS;
        } finally {
            vi.nic.lock.unlock();
        }
    }

    /** VipSendWait/VipRecvWait on a queue without a CQ: blocks on the hidden completion channel. */
    VipReturn await(long timeoutMillis, VipDescriptor out) {
        try {
            return awaitHead(timeoutMillis, out);
        } catch (IllegalStateException e) {
            return VipReturn.INVALID_PARAMETER;   // the VI was destroyed while waiting
        }
    }

    private VipReturn awaitHead(long timeoutMillis, VipDescriptor out) {
        long deadline = timeoutMillis == Vipl.INFINITE ? Long.MAX_VALUE : System.nanoTime() + timeoutMillis * 1_000_000;
        boolean interrupted = false;
        try {
            while (true) {
                int rounds = watch.rounds();
                VipReturn rc = done(out);
                if (rc != VipReturn.NOT_DONE) {
                    return rc;
                }
                vi.nic.lock.lock();
                try {
                    if (vi.destroyed) {
                        return VipReturn.INVALID_PARAMETER;
                    }
                    Posted head = ring.peekFirst();
                    if ((head != null && head.done) || watch.rounds() != rounds) {
                        continue; // completed since (or the queue was armed since): look again
                    }
                    // parks (a virtual thread leaves its carrier) until a completion, a local one, or the deadline
                    if (!watch.await(deadline)) {
                        return VipReturn.TIMEOUT;
                    }
                } catch (InterruptedException e) {
                    interrupted = true; // as before: an interrupt does not end the wait
                } finally {
                    vi.nic.lock.unlock();
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * VipSendNotify/VipRecvNotify on a queue without a CQ: the head at once when it is done,
     * otherwise a notification thread that waits for the next one; it ends without calling the
     * handler when the VI is destroyed first.
     */
    VipReturn notify(Object context, VipNotifyHandler handler) {
        VipDescriptor now = VipDescriptor.empty();
        if (done(now) == VipReturn.SUCCESS) {
            Notifications.deliver(handler, context, vi, now);
            return VipReturn.SUCCESS;
        }
        Notifications.start(vi.nic, () -> {
            VipDescriptor later = VipDescriptor.empty();
            if (await(Vipl.INFINITE, later) == VipReturn.SUCCESS) {
                Notifications.deliver(handler, context, vi, later);
            }
        });
        return VipReturn.SUCCESS;
    }

    /** Frees the hidden queue and channel, and wakes the waiters, which find the VI destroyed. Under the lock. */
    void close() {
        if (hiddenChannel != null) {
            ibvCq.close();
            hiddenChannel.close();
            watch.signal();
        }
    }
}
