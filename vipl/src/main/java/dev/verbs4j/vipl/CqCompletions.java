package dev.verbs4j.vipl;

/**
 * Taking the entries of a VIPL completion queue (§9.6.7, §9.6.8, §9.6.11): at once, waiting on the
 * CQ's completion channel, or handed to a notify handler. Entries come in turn to every Done, Wait
 * and Notify outstanding (D19); the handles were checked by {@link Vipl}.
 */
final class CqCompletions {

    private CqCompletions() {
    }

    /** VipCQDone: one entry into {@code out}, or NOT_DONE. */
    static VipReturn done(VipCq cq, VipCqEntry out) {
        try {
            cq.nic.lock.lock();
            try {
                if (cq.destroyed) {
                    return VipReturn.INVALID_PARAMETER;
                }
                return cq.take(out) ? VipReturn.SUCCESS : VipReturn.NOT_DONE;
            } finally {
                cq.nic.lock.unlock();
            }
        } finally {
            cq.nic.flushReports();
        }
    }

    /** VipCQWait: one entry into {@code out}, parked until one comes or the timeout passed. */
    static VipReturn await(VipCq cq, long timeoutMillis, VipCqEntry out) {
        long deadline = timeoutMillis == Vipl.INFINITE ? Long.MAX_VALUE : System.nanoTime() + timeoutMillis * 1_000_000;
        boolean interrupted = false;
        try {
            while (true) {
                int rounds = cq.watch.rounds();
                cq.nic.lock.lock();
                try {
                    if (cq.destroyed) {
                        return VipReturn.INVALID_PARAMETER; // (also when destroyed while waiting)
                    }
                    if (cq.take(out)) {
                        return VipReturn.SUCCESS;
                    }
                    if (cq.watch.rounds() != rounds) {
                        continue; // the queue was armed since this thread polled: poll again
                    }
                    // parks (a virtual thread leaves its carrier) until an entry comes or the deadline
                    if (!cq.watch.await(deadline)) {
                        return VipReturn.TIMEOUT;
                    }
                } catch (InterruptedException e) {
                    interrupted = true; // as before: an interrupt does not end the wait
                } finally {
                    cq.nic.lock.unlock();
                    cq.nic.flushReports();
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** VipCQNotify: the next entry to {@code handler}, now on this thread or later on a notification thread. */
    static VipReturn notify(VipCq cq, Object context, VipCqNotifyHandler handler) {
        VipCqEntry now = new VipCqEntry();
        boolean taken;
        cq.nic.lock.lock();
        try {
            if (cq.destroyed) {
                return VipReturn.INVALID_PARAMETER;
            }
            taken = cq.take(now);
        } finally {
            cq.nic.lock.unlock();
        }
        cq.nic.flushReports();
        if (taken) {
            Notifications.deliver(handler, context, cq, now);
            return VipReturn.SUCCESS;
        }
        Notifications.start(cq.nic, () -> {
            VipCqEntry later = new VipCqEntry();
            if (Vipl.cqWait(cq, Vipl.INFINITE, later) == VipReturn.SUCCESS) {
                Notifications.deliver(handler, context, cq, later);
            }
        });
        return VipReturn.SUCCESS;
    }
}
