package dev.verbs4j.vipl;

import dev.verbs4j.verbs.Opcode;
import dev.verbs4j.verbs.ReceiveRequest;
import dev.verbs4j.verbs.ReceiveRequests;
import dev.verbs4j.verbs.SendFlags;
import dev.verbs4j.verbs.SendRequest;
import dev.verbs4j.verbs.SendRequests;

/**
 * A VI's descriptors on their way to its queue pair: the checks at post time (§3.2.1, §10.3),
 * descriptors that fail them completing at once in software, and the translation of a checked
 * descriptor into one verbs work request without copying data (D13). The write-back of
 * completions into descriptors is the work queue's ({@link WorkQueue}, {@link CompletionMapping}).
 * The two one-entry request lists belong to this object; all of it runs under the NIC lock.
 */
final class DescriptorTranslation {

    private final VipVi vi;
    private final VipNic nic;
    private final SendRequests sendWr;
    private final ReceiveRequests recvWr;

    DescriptorTranslation(VipVi vi) {
        this.vi = vi;
        this.nic = vi.nic;
        this.sendWr = new SendRequests(1, nic.maxSge);
        this.recvWr = new ReceiveRequests(1, nic.maxSge);
    }

    /** VipPostSend, VipPostRecv on a VI whose handle was checked: the rest is checked under the lock. */
    VipReturn post(VipDescriptor d, VipMemHandle descriptorMemory, boolean receive) {
        WorkQueue q = vi.queue(receive);
        nic.lock.lock();
        try {
            if (vi.destroyed) {
                return VipReturn.INVALID_PARAMETER;
            }
            if (!d.segment().scope().isAlive()) {
                return VipReturn.INVALID_PARAMETER; // its arena was closed: no descriptor to post
            }
            Posted p;
            try {
                p = q.append(d.segment(), descriptorMemory == null ? 0 : descriptorMemory.value());
            } catch (IllegalStateException | WrongThreadException e) {
                return VipReturn.INVALID_PARAMETER; // its memory is not accessible to this thread
            }
            VipViAttributes attributes = vi.attributes;
            int errors = 0;
            // d.address() is only compared and reported here, never dereferenced: the descriptor's
            // memory stays alive through d.segment(), which the posted entry (q.append) holds until
            // its completion is written back or the VI is destroyed
            if (d.address() % VipDescriptor.ALIGNMENT != 0) {
                errors = VipStatus.FORMAT_ERROR;
            } else if (descriptorMemory == null || descriptorMemory.invalid() || descriptorMemory.nic != nic
                    || descriptorMemory.attributes.ptag() != attributes.ptag()
                    || !descriptorMemory.covers(d.address(), d.segment().byteSize())) {
                // §3.2.1: a descriptor must lie in registered memory of the VI's tag; also reported asynchronously.
                errors = VipStatus.PROTECTION_ERROR;
                nic.report(new VipErrorDescriptor(nic, vi, q.cq, d.address(), CompletionMapping.opBits(receive, 0, false),
                        VipResourceCode.DESCRIPTOR, VipErrorCode.POST_DESC));
            }
            if (errors == 0) {
                errors = DescriptorCheck.format(d, p, receive, attributes, nic.maxSge);
            }
            if (errors == 0) {
                errors = DescriptorCheck.protection(d, p, nic, attributes.ptag());
            }
            if (errors != 0) {
                q.completeLocally(p, errors);
                if (vi.state() == VipViState.CONNECTED && vi.reliable()) {
                    vi.enterError();
                }
                return VipReturn.SUCCESS;
            }
            VipViState s = vi.state();
            if (s == VipViState.ERROR || (!receive && s != VipViState.CONNECTED)) {
                // D10: a send posted while Idle or Pending Connect, anything posted in Error, completes flushed.
                q.completeLocally(p, VipStatus.DESC_FLUSHED_ERROR);
            } else if (s == VipViState.CONNECTED) {
                submit(q, p, false);
            }
            // else a receive while Idle or Pending Connect waits for the connection (§5.1)
            return VipReturn.SUCCESS;
        } finally {
            nic.lock.unlock();
        }
    }

    /** Hands the receives posted while the VI was not yet connected to the queue pair, in order. */
    void submitWaitingReceives() {
        submitWaiting(vi.recv);
    }

    /** Hands every descriptor still queued to a re-armed queue pair again, receives first, in order. */
    void resubmit() {
        submitWaiting(vi.recv);
        submitWaiting(vi.send);
    }

    private void submitWaiting(WorkQueue q) {
        for (Posted p : q.ring) {
            if (!p.done && !p.inVerbs) {
                submit(q, p, true);
            }
        }
    }

    /**
     * Hands a checked descriptor to the queue pair, translating it without copying data.
     *
     * <p>A descriptor checked when it was posted but handed over later (a receive posted while the
     * VI was Idle, or re-armed on an Unreliable VI) is checked for protection again: when a region
     * it uses was deregistered or moved to another tag meanwhile (§3.2.1), a receive goes to the
     * queue pair without data segments and completes with PROTECTION_ERROR when a message reaches
     * it (the moment the region would have been accessed); a send completes with PROTECTION_ERROR
     * at once, and sends nothing. {@code recheck} is false when it was checked just now (posted
     * on a Connected VI).
     */
    private void submit(WorkQueue q, Posted p, boolean recheck) {
        submit(q, p, recheck, false);
    }

    private void submit(WorkQueue q, Posted p, boolean recheck, boolean retry) {
        VipDescriptor d = p.descriptor;
        int first = DescriptorCheck.firstData(p.op);
        int protection;
        try {
            protection = recheck ? DescriptorCheck.protection(d, p, nic, vi.attributes.ptag()) : 0;
        } catch (RuntimeException e) {
            if (!WorkQueue.inaccessible(d, e)) {
                throw e;
            }
            q.memoryGone(p);
            return;
        }
        if (protection != 0 && !q.receive) {
            q.completeLocally(p, protection);
            if (vi.state() == VipViState.CONNECTED && vi.reliable()) {
                vi.enterError();
            }
            return;
        }
        try {
            if (q.receive) {
                ReceiveRequest wr = recvWr.get(0).wrId(q.wrId(p)).noSge();
                p.regionGone = protection != 0;
                int k = 0;
                for (int i = first; i < d.segCount() && !p.regionGone; i++) {
                    int len = d.segmentLength(i);
                    if (len != 0) {
                        VipMemHandle m = nic.regions.get(d.segmentHandle(i));
                        wr.sge(k++, m.mr, d.segmentData(i) - m.address(), len);
                    }
                }
                vi.qp.postReceive(recvWr, 1);
            } else {
                int control = d.control();
                boolean imm = (control & VipControl.IMMEDIATE) != 0 && p.op != VipControl.OP_RDMAREAD;
                Opcode opcode = switch (p.op) {
                    case VipControl.OP_RDMAWRITE -> imm ? Opcode.RDMA_WRITE_WITH_IMM : Opcode.RDMA_WRITE;
                    case VipControl.OP_RDMAREAD -> Opcode.RDMA_READ;
                    default -> imm ? Opcode.SEND_WITH_IMM : Opcode.SEND;
                };
                SendRequest wr = sendWr.reset(0).wrId(q.wrId(p)).opcode(opcode)
                        .flags(SendFlags.SIGNALED | ((control & VipControl.QFENCE) != 0 ? SendFlags.FENCE : 0));
                if (imm) {
                    wr.immediateData(d.immediateData());
                }
                if (p.op != VipControl.OP_SENDRECV) {
                    wr.rdma(d.segmentData(0), d.segmentHandle(0));
                }
                int k = 0;
                for (int i = first; i < d.segCount(); i++) {
                    int len = d.segmentLength(i);
                    if (len != 0) {
                        VipMemHandle m = nic.regions.get(d.segmentHandle(i));
                        wr.sge(k++, m.mr, d.segmentData(i) - m.address(), len);
                    }
                }
                vi.qp.postSend(sendWr, 1);
            }
            p.inVerbs = true;
        } catch (RuntimeException e) {
            if (WorkQueue.inaccessible(d, e)) {
                q.memoryGone(p);
                return;
            }
            if (!retry && e instanceof IllegalStateException) {
                // A region it names was closed since the check (its RdmaArena's close deregistered
                // it): checked again, it is handled as a region deregistered before the hand-over.
                submit(q, p, true, true);
                return;
            }
            // The queue pair refused it (its queue is full): VI overrun (§9.9.1), the descriptor completes in error.
            q.completeLocally(p, VipStatus.FORMAT_ERROR);
            nic.report(new VipErrorDescriptor(nic, vi, q.cq, d.address(), CompletionMapping.opBits(q.receive, p.op, false),
                    VipResourceCode.VI, VipErrorCode.VI_OVERRUN));
        }
    }

    /** Frees the request lists. */
    void close() {
        sendWr.close();
        recvWr.close();
    }
}
