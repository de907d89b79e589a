package dev.verbs4j.rdmacm;

import dev.verbs4j.bindings.rdma_cm_id;
import dev.verbs4j.rdmacm.internal.Cma;
import dev.verbs4j.verbs.ProtectionDomain;
import dev.verbs4j.verbs.QueuePair;
import dev.verbs4j.verbs.QueuePairInit;
import dev.verbs4j.verbs.internal.VerbsAccess;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * The queue pair of one {@link CmId} ({@code id->qp}): its creation through {@code
 * rdma_create_qp}, its destruction through {@code rdma_destroy_qp}, and the lock that keeps it
 * alive while librdmacm works on it. Owns no native memory of its own: the queue pair is the
 * verbs {@link QueuePair}'s, the id the {@link CmId}'s.
 */
final class CmQueuePair {

    private final CmId owner;
    private final MemorySegment id;
    private volatile QueuePair queuePair;
    /**
     * Guards {@code id->qp}: held for reading by the calls through which librdmacm works on the
     * queue pair, for writing while it is created, destroyed, or the id migrates.
     */
    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
    private final Condition destroyed = lock.writeLock().newCondition();
    /** The factory whose queue pair {@code rdma_create_qp} made, until {@code rdma_destroy_qp}; guarded by {@link #lock}. */
    private Factory live;

    CmQueuePair(CmId owner, MemorySegment id) {
        this.owner = owner;
        this.id = id;
    }

    /** The lock over {@code id->qp}: for reading around a call that works on it, for writing to migrate. */
    ReentrantReadWriteLock lock() {
        return lock;
    }

    /** Runs {@code call}, a librdmacm call that works on {@code id->qp}, holding the queue pair for reading. */
    void reading(Runnable call) {
        lock.readLock().lock();
        try {
            call.run();
        } finally {
            lock.readLock().unlock();
        }
    }

    /** The queue pair, or null when none was created or it is closed. */
    QueuePair current() {
        QueuePair qp = queuePair;
        return qp == null || qp.isClosed() ? null : qp;
    }

    /** {@link CmId#createQueuePair}; the caller holds the id and its channel. */
    QueuePair create(ProtectionDomain pd, QueuePairInit init) {
        lock.writeLock().lock();
        try {
            QueuePair existing = queuePair;
            if ((existing != null && !existing.isClosed()) || live != null) {
                throw new IllegalStateException(owner.describe() + " already has " + (existing != null ? existing : "a queue pair"));
            }
            if (pd.context() != owner.context()) {
                throw new IllegalArgumentException(pd + " belongs to " + pd.context() + ", not to the id's device "
                        + owner.context().name());
            }
            Factory factory = new Factory(VerbsAccess.bridge().handle(pd));
            QueuePair qp;
            try {
                qp = VerbsAccess.bridge().createQueuePair(pd, init, factory, owner);
            } catch (RuntimeException e) {
                // created, but its QueuePair failed after: nobody can close it, so it goes now
                destroy(factory);
                throw e;
            }
            // recorded before the id can be closed (it waits for this call): its close then closes the queue pair
            queuePair = qp;
            return qp;
        } finally {
            lock.writeLock().unlock();
        }
    }

    /** Creates and destroys the id's queue pair through librdmacm, for the verbs {@link QueuePair}. */
    private final class Factory implements VerbsAccess.QueuePairFactory {
        private final MemorySegment pdHandle;

        Factory(MemorySegment pdHandle) {
            this.pdHandle = pdHandle;
        }

        /** Called by the QueuePair's constructor, inside {@link #create} (which holds the id and the lock). */
        @Override
        public MemorySegment create(MemorySegment initAttr, boolean extended) {
            if (extended) {
                Cma.call(Cma.CREATE_QP_EX, "rdma_create_qp_ex", owner.describe(), id, initAttr);
            } else {
                Cma.call(Cma.CREATE_QP, "rdma_create_qp", owner.describe(), id, pdHandle, initAttr);
            }
            live = this;
            return rdma_cm_id.qp(id);
        }

        /** Called by the QueuePair's close, on whichever thread closes it (also the id's, from its destroy). */
        @Override
        public void destroy(MemorySegment qp) {
            CmQueuePair.this.destroy(this);
        }
    }

    /**
     * {@code rdma_destroy_qp} unless the queue pair is gone already, while no call works on it:
     * neither a call on the id (the lock) nor an event being taken on its channel. The id is not
     * destroyed before: its destroy waits in {@link #closeAndAwait} until {@link #live} is null.
     */
    private void destroy(Factory factory) {
        lock.writeLock().lock();
        try {
            if (live != factory) {
                return;
            }
            ReentrantReadWriteLock.WriteLock events = owner.eventChannel().qpGuard.writeLock();
            events.lock();
            try {
                Cma.callVoid(Cma.DESTROY_QP, id);
            } finally {
                events.unlock();
            }
            live = null;
            destroyed.signalAll();
        } finally {
            lock.writeLock().unlock();
        }
    }

    /**
     * Closes the queue pair and waits until it is destroyed, also when another thread is
     * destroying it; the close's failure is returned (null when none), not thrown, so that the
     * id is destroyed all the same.
     */
    RuntimeException closeAndAwait() {
        RuntimeException failure = null;
        QueuePair qp = queuePair;
        if (qp != null) {
            try {
                qp.close(); // returns at once when another thread is closing it: waited for below
            } catch (RuntimeException e) {
                failure = e;
            }
        }
        lock.writeLock().lock();
        try {
            while (live != null) {
                destroyed.awaitUninterruptibly();
            }
        } finally {
            lock.writeLock().unlock();
        }
        return failure;
    }
}
