package dev.verbs4j.verbs;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One verbs object's place in the ownership tree: the objects its close closes first (its
 * children, and the objects that use it), newest first, and the objects that close it (its parent
 * and the objects it uses). Also who is closing it, so that a second close returns once the first
 * is done. Owns no native memory.
 */
final class Ownership {

    private final NativeResource resource;
    private final CallGuard guard;
    /** Closed before {@code resource}, oldest first; guarded by {@code lock}. */
    private final Set<NativeResource> dependents = new LinkedHashSet<>();
    /** Close {@code resource} with themselves; guarded by {@code lock}. */
    private final List<NativeResource> owners = new ArrayList<>(2);
    /**
     * Guards the two sets: held for a few updates only, never while waiting (a lock rather than a
     * monitor, so that a virtual thread contending for it parks on JDK 22–23 instead of pinning
     * its carrier).
     */
    private final ReentrantLock lock = new ReentrantLock();
    /** The thread that closes {@code resource}, once it does. */
    private volatile Thread closer;
    private final CountDownLatch closed = new CountDownLatch(1);

    /** The place of {@code resource}, whose {@code guard} says whether it is closed. */
    Ownership(NativeResource resource, CallGuard guard) {
        this.resource = resource;
        this.guard = guard;
    }

    /**
     * Makes {@code resource} a dependent of {@code owner}: {@code owner} then closes it before
     * itself.
     *
     * @throws IllegalStateException when {@code owner} is closed
     */
    void addOwner(NativeResource owner) {
        owner.ownership.adopt(resource);
        lock.lock();
        try {
            owners.add(owner);
        } finally {
            lock.unlock();
        }
    }

    /** Ends an {@link #addOwner} relation. */
    void removeOwner(NativeResource owner) {
        lock.lock();
        try {
            owners.remove(owner);
        } finally {
            lock.unlock();
        }
        owner.ownership.forget(resource);
    }

    /** The objects that close {@code resource} with themselves, now. */
    List<NativeResource> owners() {
        lock.lock();
        try {
            return new ArrayList<>(owners);
        } finally {
            lock.unlock();
        }
    }

    private void adopt(NativeResource dependent) {
        lock.lock();
        try {
            // under the lock: a close that marked the object before takeDependents sees this one
            guard.ensureOpen();
            dependents.add(dependent);
        } finally {
            lock.unlock();
        }
    }

    private void forget(NativeResource dependent) {
        lock.lock();
        try {
            dependents.remove(dependent);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Records that the calling thread closes {@code resource} (marked closed already) and returns
     * its dependents, oldest first; none can be added from now on.
     */
    List<NativeResource> beginClose() {
        closer = Thread.currentThread();
        return take(dependents);
    }

    /** Leaves every owner: the object is gone. */
    void leaveOwners() {
        for (NativeResource owner : take(owners)) {
            owner.ownership.forget(resource);
        }
    }

    /** Empties {@code objects}, one of the two sets, and returns what it held, oldest first. */
    private List<NativeResource> take(Collection<NativeResource> objects) {
        lock.lock();
        try {
            List<NativeResource> taken = new ArrayList<>(objects);
            objects.clear();
            return taken;
        } finally {
            lock.unlock();
        }
    }

    /** Lets the closes waiting in {@link #awaitClosed()} return: this one is done. */
    void endClose() {
        closed.countDown();
    }

    /**
     * For a close of an object that is closed already, or being closed: returns once that close is
     * done (at once on the closing thread itself), so that whatever the caller frees next is no
     * longer used by the object.
     */
    void awaitClosed() {
        if (closer == Thread.currentThread()) {
            return;
        }
        boolean interrupted = false;
        while (true) {
            try {
                closed.await();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Closes {@code objects} newest (last) first, each even when an earlier one failed; returns the
     * first failure with the later ones suppressed, or null.
     */
    static RuntimeException closeNewestFirst(List<? extends NativeResource> objects) {
        RuntimeException failure = null;
        for (int i = objects.size() - 1; i >= 0; i--) {
            try {
                objects.get(i).close();
            } catch (RuntimeException e) {
                failure = Ownership.addFailure(failure, e);
            }
        }
        return failure;
    }

    /** {@code failure} with {@code next} suppressed, or {@code next} when it is the first. */
    static RuntimeException addFailure(RuntimeException failure, RuntimeException next) {
        if (failure == null) {
            return next;
        }
        failure.addSuppressed(next);
        return failure;
    }
}
