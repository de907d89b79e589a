package dev.verbs4j.verbs;

import dev.verbs4j.verbs.internal.VerbsAccess;

import java.lang.foreign.MemorySegment;

/** What the connection manager reaches beyond the public API ({@link VerbsAccess}), implemented here. */
final class AccessBridge implements VerbsAccess.Bridge {

    @Override
    public MemorySegment handle(NativeResource resource) {
        resource.ensureOpen();
        return resource.handle();
    }

    @Override
    public void enter(NativeResource resource) {
        resource.enterCall();
    }

    @Override
    public void exit(NativeResource resource) {
        resource.exitCall();
    }

    @Override
    public Context borrowContext(MemorySegment ibvContext) {
        return Context.borrow(ibvContext);
    }

    @Override
    public QueuePair createQueuePair(ProtectionDomain pd, QueuePairInit init, VerbsAccess.QueuePairFactory factory,
                                     NativeResource closer) {
        QueuePair qp = new QueuePair(pd, init, factory);
        qp.alsoClosedBy(closer);
        return qp;
    }
}
