package dev.verbs4j.vipl;

import dev.verbs4j.verbs.CompletionChannel;
import dev.verbs4j.verbs.CompletionQueue;

/**
 * A NIC's VIs and completion queues (§9.3, §9.7): what creates, resizes and destroys them under
 * the NIC lock, with the accounting that keeps a verbs CQ large enough for every descriptor of the
 * work queues attached to it (D15) and the NIC within MaxVI. Arguments are checked by {@link
 * Vipl} first; here they are checked again under the lock, against a concurrent close.
 */
final class QueueRegistry {

    private static final int MIN_TRANSFER = 32 * 1024;

    private QueueRegistry() {
    }

    private static VipException fail(VipReturn rc, String function, String detail) {
        return new VipException(rc, function, detail);
    }

    /** The checks of VipCreateVi and VipSetViAttributes on VI attributes, as their code (SUCCESS when fine). */
    static VipReturn checkAttributes(VipNic nic, VipViAttributes a) {
        if (a == null) {
            return VipReturn.INVALID_PARAMETER;
        }
        if (a.reliabilityLevel() == null) {
            return VipReturn.INVALID_RELIABILITY_LEVEL;
        }
        if (a.reliabilityLevel() == VipReliabilityLevel.UNRELIABLE && (nic.reliabilityLevels & a.reliabilityLevel().mask()) == 0) {
            // D18: Unreliable needs UC queue pairs
            return VipReturn.INVALID_RELIABILITY_LEVEL;
        }
        if (a.maxTransferSize() < MIN_TRANSFER || a.maxTransferSize() > nic.maxTransfer()) {
            return VipReturn.INVALID_MTU;
        }
        if (a.qos() != 0) {
            return VipReturn.INVALID_QOS;
        }
        if (a.ptag() == null || !a.ptag().usableOn(nic)) {
            return VipReturn.INVALID_PTAG;
        }
        return VipReturn.SUCCESS;
    }

    /** VipCreateVi with its NIC, CQs and attributes checked. */
    static VipVi createVi(VipNic nic, VipViAttributes attributes, VipCq sendCq, VipCq recvCq) {
        VipCq[] cqs = {sendCq, recvCq};
        nic.lock.lock();
        try {
            if (nic.closed) {
                throw fail(VipReturn.INVALID_PARAMETER, "VipCreateVi", "bad NIC handle");
            }
            for (VipCq c : cqs) {
                if (c != null && c.destroyed) {
                    throw fail(VipReturn.INVALID_PARAMETER, "VipCreateVi", "bad CQ handle " + c);
                }
            }
            if (!attributes.ptag().usableOn(nic)) {
                throw fail(VipReturn.INVALID_PTAG, "VipCreateVi", String.valueOf(attributes.ptag()));
            }
            if (nic.vis.size() >= nic.maxVi) {
                throw fail(VipReturn.ERROR_RESOURCE, "VipCreateVi", "MaxVI reached");
            }
            VipVi vi;
            try {
                for (VipCq c : cqs) {
                    if (c != null) {
                        int need = c.attachedDepth + nic.queueDepth;
                        if (need > c.cq.capacity()) {
                            c.cq.resize(need);
                        }
                    }
                }
                vi = new VipVi(nic, attributes, sendCq, recvCq);
            } catch (RuntimeException e) {
                throw fail(VipReturn.ERROR_RESOURCE, "VipCreateVi", e.getMessage());
            }
            for (VipCq c : cqs) {
                if (c != null) {
                    c.attachedQueues++;
                    c.attachedDepth += nic.queueDepth;
                }
            }
            attributes.ptag().users.add(vi);
            nic.vis.add(vi);
            return vi;
        } finally {
            nic.lock.unlock();
        }
    }

    /** Undoes {@link #createVi}'s accounting for a VI being destroyed. Under the lock. */
    static void forget(VipVi vi) {
        for (VipCq c : new VipCq[]{vi.sendCq, vi.recvCq}) {
            if (c != null) {
                c.attachedQueues--;
                c.attachedDepth -= vi.nic.queueDepth;
                c.removeEntriesOf(vi);
            }
        }
        vi.attributes.ptag().users.remove(vi);
        vi.nic.vis.remove(vi);
    }

    /** VipCreateCQ with its NIC and entry count checked. */
    static VipCq createCq(VipNic nic, long entryCount) {
        nic.lock.lock();
        try {
            if (nic.closed) {
                throw fail(VipReturn.INVALID_PARAMETER, "VipCreateCQ", "bad NIC handle");
            }
            CompletionChannel ch = null;
            try {
                ch = nic.context.createCompletionChannel();
                CompletionQueue cq = nic.context.createCompletionQueue((int) entryCount, ch, 0);
                VipCq c = new VipCq(nic, ch, cq, (int) entryCount);
                nic.cqs.add(c);
                return c;
            } catch (RuntimeException e) {
                if (ch != null) {
                    ch.close();
                }
                throw fail(VipReturn.ERROR_RESOURCE, "VipCreateCQ", e.getMessage());
            }
        } finally {
            nic.lock.unlock();
        }
    }

    /** VipDestroyCQ of a CQ found valid: ERROR_RESOURCE while a work queue is attached. */
    static VipReturn destroyCq(VipCq cq) {
        cq.nic.lock.lock();
        try {
            if (cq.destroyed) {
                return VipReturn.INVALID_PARAMETER;
            }
            if (cq.attachedQueues > 0) {
                return VipReturn.ERROR_RESOURCE;
            }
            cq.destroyed = true;
            cq.clearEntries();
            cq.cq.close();
            cq.channel.close();
            cq.watch.signal();
            cq.nic.cqs.remove(cq);
            return VipReturn.SUCCESS;
        } finally {
            cq.nic.lock.unlock();
        }
    }

    /** VipResizeCQ of a CQ found valid, to a positive entry count. */
    static VipReturn resizeCq(VipCq cq, long entryCount) {
        try {
            return resize(cq, entryCount);
        } finally {
            cq.nic.flushReports();
        }
    }

    private static VipReturn resize(VipCq cq, long entryCount) {
        cq.nic.lock.lock();
        try {
            if (cq.destroyed) {
                return VipReturn.INVALID_PARAMETER;
            }
            cq.nic.poll(cq.cq);
            if (entryCount < cq.pending() || entryCount > cq.nic.device.maxCqe()) {
                return VipReturn.ERROR_RESOURCE;
            }
            int target = (int) Math.max(entryCount, cq.attachedDepth);
            try {
                if (target != cq.cq.capacity()) {
                    cq.cq.resize(target);
                }
            } catch (RuntimeException e) {
                return VipReturn.ERROR_RESOURCE;
            }
            cq.entryCount = (int) entryCount;
            return VipReturn.SUCCESS;
        } finally {
            cq.nic.lock.unlock();
        }
    }
}
