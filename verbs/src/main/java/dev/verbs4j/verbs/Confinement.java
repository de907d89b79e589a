package dev.verbs4j.verbs;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Whether one verbs object is confined to a thread (see {@link NativeResource}), and which threads
 * own confined objects that its close would close: the close is decided here, under the lock that
 * registrations take too, so that a close from another thread is refused before anything is
 * closed and a confinement racing a close either fails or is seen by it. Owns no native memory.
 */
final class Confinement {

    private final NativeResource resource;
    private final CallGuard guard;
    /** The thread whose data-path calls skip the count, or null. */
    private volatile Thread owner;
    /** The objects whose close would close this confined object, registered with at confinement. */
    private List<NativeResource> registeredWith = List.of();
    /** Objects that close this one without owning it in the tree (a connection id its queue pair). */
    private volatile List<NativeResource> alsoClosedBy = List.of();
    /** Owners of open confined objects that this object's close would close, with counts; guarded by lock. */
    private Map<Thread, Integer> ownersBelow;
    /** Guards {@code ownersBelow}, {@code owner}'s changes and the close decision. */
    private final ReentrantLock lock = new ReentrantLock();

    /** The confinement of {@code resource}, whose {@code guard} this marks closed. */
    Confinement(NativeResource resource, CallGuard guard) {
        this.resource = resource;
        this.guard = guard;
    }

    /** Whether the object is confined to the calling thread. */
    boolean isConfinedToCurrentThread() {
        return owner == Thread.currentThread();
    }

    /**
     * Confines the object to the calling thread: registers the thread with every object whose
     * close would close this one, each of which then refuses a close from another thread while
     * this object is open. Idempotent on that thread.
     *
     * @throws IllegalStateException when the object or one of those is closed, or when the object
     *                               is confined to another thread already
     */
    void confineToCurrentThread() {
        Thread me = Thread.currentThread();
        lock.lock();
        try {
            if (checkConfinable(me)) {
                return;
            }
        } finally {
            lock.unlock();
        }
        List<NativeResource> above = closersOf(resource);
        List<NativeResource> registered = new ArrayList<>(above.size());
        try {
            for (NativeResource a : above) {
                a.confinement.addOwnerBelow(me);
                registered.add(a);
            }
            lock.lock();
            try {
                checkConfinable(me);
                registeredWith = above;
                owner = me;
            } finally {
                lock.unlock();
            }
        } catch (IllegalStateException e) {
            for (NativeResource a : registered) {
                a.confinement.removeOwnerBelow(me);
            }
            throw e;
        }
    }

    /** Under the lock: whether confined to {@code me} already; throws when closed or confined to another. */
    private boolean checkConfinable(Thread me) {
        guard.ensureOpen();
        Thread current = owner;
        if (current == me) {
            return true;
        }
        if (current != null) {
            throw new IllegalStateException(resource.describe() + " is confined to " + current + " already");
        }
        return false;
    }

    /**
     * Declares that {@code closer} closes this object when it closes itself, outside the tree of
     * owners, so that confining this object protects it from {@code closer}'s close as well.
     */
    void alsoClosedBy(NativeResource closer) {
        List<NativeResource> list = new ArrayList<>(alsoClosedBy);
        list.add(closer);
        alsoClosedBy = List.copyOf(list);
    }

    /**
     * Every object whose close closes {@code r} (its owners, theirs, and so on), each after those
     * that would close it: registering in this order, a close that races the registration is
     * either refused or makes the registration fail before anything below it was registered.
     */
    static List<NativeResource> closersOf(NativeResource r) {
        List<NativeResource> ordered = new ArrayList<>();
        addClosersFirst(r, ordered);
        ordered.remove(r);
        return ordered;
    }

    private static void addClosersFirst(NativeResource r, List<NativeResource> ordered) {
        if (ordered.contains(r)) {
            return;
        }
        List<NativeResource> next = r.ownership.owners();
        next.addAll(r.confinement.alsoClosedBy);
        for (NativeResource o : next) {
            addClosersFirst(o, ordered);
        }
        ordered.add(r);
    }

    private void addOwnerBelow(Thread t) {
        lock.lock();
        try {
            guard.ensureOpen();
            if (ownersBelow == null) {
                ownersBelow = new HashMap<>();
            }
            ownersBelow.merge(t, 1, Integer::sum);
        } finally {
            lock.unlock();
        }
    }

    private void removeOwnerBelow(Thread t) {
        lock.lock();
        try {
            if (ownersBelow != null && ownersBelow.merge(t, -1, Integer::sum) == 0) {
                ownersBelow.remove(t);
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Decides a close by the calling thread: false when the object is closed already; otherwise
     * refuses the close when the object, or an open confined object it would close, is confined
     * to another thread that is alive (a terminated owner cannot be in a call and does not
     * count), else marks the object closed and returns true.
     *
     * @throws IllegalStateException when the close is refused; nothing has changed then
     */
    boolean close() {
        Thread me = Thread.currentThread();
        lock.lock();
        try {
            if (guard.isClosed()) {
                return false;
            }
            Thread confined = owner;
            if (confined != null && confined != me && confined.isAlive()) {
                throw new IllegalStateException(resource.describe() + " is confined to " + confined
                        + ": only that thread may close it");
            }
            if (ownersBelow != null) {
                for (Thread t : ownersBelow.keySet()) {
                    if (t != me && t.isAlive()) {
                        throw new IllegalStateException(resource.describe() + " would close an object confined to " + t
                                + ": close that object on its thread first");
                    }
                }
            }
            return guard.close();
        } finally {
            lock.unlock();
        }
    }

    /** After the object is gone: its owner's registrations with the objects above it end. */
    void release() {
        Thread confined = owner;
        if (confined != null) {
            for (NativeResource a : registeredWith) {
                a.confinement.removeOwnerBelow(confined);
            }
        }
    }
}
