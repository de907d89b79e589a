package dev.verbs4j.vipl;

/**
 * Where the Notify functions' handlers run (§9.6.9–11): a pending notification is one virtual
 * thread that waits as the Wait functions do (parked, holding no OS thread) and calls the handler
 * once; a handler's exception is logged, never propagated into the library. It reads no channel:
 * it sleeps on the queue's {@link CompletionWatch} condition, which the completion channel's
 * event-layer watch signals (as do a local completion and the queue's destruction), and so takes
 * its turn with the Wait calls (D19).
 */
final class Notifications {

    private static final System.Logger LOG = System.getLogger("dev.verbs4j.vipl");

    private Notifications() {
    }

    static void start(VipNic nic, Runnable wait) {
        Thread.ofVirtual().name("VIPL notify " + nic.name()).start(wait);
    }

    static void deliver(VipNotifyHandler handler, Object context, VipVi vi, VipDescriptor d) {
        try {
            handler.handle(context, vi.nic, vi, d);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "VIPL notify handler threw", e);
        }
    }

    static void deliver(VipCqNotifyHandler handler, Object context, VipCq cq, VipCqEntry e) {
        try {
            handler.handle(context, cq.nic, e.vi(), e.recvQueue());
        } catch (RuntimeException ex) {
            LOG.log(System.Logger.Level.WARNING, "VIPL CQ notify handler threw", ex);
        }
    }
}
