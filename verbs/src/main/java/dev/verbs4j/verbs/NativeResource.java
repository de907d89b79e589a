package dev.verbs4j.verbs;

import dev.verbs4j.verbs.internal.VerbsAccess;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The lifetime shared by every verbs object: it is closed once, closes the objects created from it
 * first (newest first), and refuses use after close with an {@link IllegalStateException}.
 * Subclasses own their native object and free it in {@link #destroy()}.
 *
 * <p>Every call that touches the native object holds it for its duration: the data path
 * ({@code postSend}, {@code poll}, …) takes no lock but counts the calls in progress, and so do the
 * control-path verbs ({@link #use()}). A close from another thread waits until they have
 * returned, and calls that start after it throw {@link IllegalStateException}, so a race between
 * a call and a close never touches freed native memory. The objects a call uses besides its own
 * (the protection domain a region is registered in, the address handle a send names) are held
 * the same way while the provider reads them. See the package documentation for the whole model.
 *
 * <p>A queue pair or completion queue may be <em>confined</em> to one thread ({@link
 * #confineToCurrentThread}): that thread's data-path calls then skip the count (no atomic
 * operation per call), and in exchange no other thread may close it or anything whose close would
 * close it (refused before anything is closed), as a confined {@code Arena} is closed by its owner
 * only. Other threads' calls stay counted and safe.
 */
public abstract class NativeResource implements AutoCloseable {

    static {
        VerbsAccess.install(new Bridge());
    }

    private static final VarHandle CALLS;

    static {
        try {
            CALLS = MethodHandles.lookup().findVarHandle(NativeResource.class, "calls", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final NativeResource parent;
    @SuppressWarnings("unused") // through CALLS
    private volatile int calls;
    private final Set<NativeResource> children = new LinkedHashSet<>();
    private final List<NativeResource> owners = new ArrayList<>(2);
    private volatile boolean closed;
    /** The thread that closes this object (once closed), and when it is done. */
    private Thread closer;
    private final CountDownLatch closedLatch = new CountDownLatch(1);
    private final Use use = new Use();
    /** The thread whose data-path calls skip the count ({@link #confineToCurrentThread}), or null. */
    private volatile Thread confinedTo;
    /** The objects whose close would close this confined object, registered with at confinement. */
    private List<NativeResource> confinedUnder = List.of();
    /** Objects that close this one without owning it in the tree (a connection id its queue pair). */
    private volatile List<NativeResource> alsoClosedBy = List.of();
    /** Owners of open confined objects that this object's close would close, with counts; guarded by state. */
    private Map<Thread, Integer> confinedBelow;
    /**
     * Guards {@code children}, {@code closed}/{@code closer} and {@code owners}: held for a few
     * field updates only, never while waiting (a lock rather than a monitor, so that a virtual
     * thread contending for it parks on JDK 22–23 instead of pinning its carrier).
     */
    private final ReentrantLock state = new ReentrantLock();

    /**
     * A new object under {@code parent} (null for a root such as a Context). The subclass creates
     * its native object, then calls {@link #attach(NativeResource...)}.
     */
    protected NativeResource(NativeResource parent) {
        this.parent = parent;
        if (parent != null) {
            parent.ensureOpen();
        }
    }

    /**
     * Makes this object one of its parent's children, to be closed with it, and a dependent of
     * each of {@code used} (a queue pair of its completion queues, a completion queue of its
     * channel), which then close this object before themselves. Called by the subclass once its
     * native object exists, while it still holds the parent and {@code used} ({@link #use()}); if
     * one of them was closed meanwhile, this object is closed again (its native object freed) and
     * an {@link IllegalStateException} thrown.
     */
    protected final void attach(NativeResource... used) {
        try {
            if (parent != null) {
                parent.adopt(this);
                state.lock();
                try {
                    owners.add(parent);
                } finally {
                    state.unlock();
                }
            }
            for (NativeResource u : used) {
                if (u != null) {
                    dependOn(u);
                }
            }
        } catch (IllegalStateException e) {
            try {
                close();
            } catch (RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    /**
     * Declares that this object uses {@code used} (a queue pair its completion queues, a
     * completion queue its channel): {@code used} then closes this object before itself.
     */
    protected final void dependOn(NativeResource used) {
        used.adopt(this);
        state.lock();
        try {
            owners.add(used);
        } finally {
            state.unlock();
        }
    }

    /**
     * Ends a {@link #dependOn} relation: {@code used} no longer closes this object (for objects
     * that move, such as a connection id migrated to another event channel).
     */
    protected final void stopDependingOn(NativeResource used) {
        state.lock();
        try {
            owners.remove(used);
        } finally {
            state.unlock();
        }
        used.forget(this);
    }

    private void adopt(NativeResource child) {
        state.lock();
        try {
            ensureOpen();
            children.add(child);
        } finally {
            state.unlock();
        }
    }

    private void forget(NativeResource child) {
        state.lock();
        try {
            children.remove(child);
        } finally {
            state.unlock();
        }
    }

    /** Throws {@link IllegalStateException} when this object has been closed. */
    protected final void ensureOpen() {
        if (closed) {
            throw new IllegalStateException(describe() + " is closed");
        }
    }

    /**
     * Starts a data-path call on the native object: from now until {@link #exitCall()} a close
     * waits. Throws {@link IllegalStateException} when the object is closed.
     */
    final void enterCall() {
        CALLS.getAndAdd(this, 1);
        if (closed) {
            CALLS.getAndAdd(this, -1);
            throw new IllegalStateException(describe() + " is closed");
        }
    }

    /** Ends what {@link #enterCall()} started. */
    final void exitCall() {
        CALLS.getAndAdd(this, -1);
    }

    /**
     * Starts a data-path call: {@link #enterCall()}, unless the calling thread is the one this
     * object is confined to, which only checks that it is open (nobody else can close it). Returns
     * whether the call was counted, for {@link #exitDataPath}.
     */
    final boolean enterDataPath() {
        if (confinedTo == Thread.currentThread()) {
            if (closed) {
                throw new IllegalStateException(describe() + " is closed");
            }
            return false;
        }
        enterCall();
        return true;
    }

    /** Ends what {@link #enterDataPath()} started. */
    final void exitDataPath(boolean counted) {
        if (counted) {
            CALLS.getAndAdd(this, -1);
        }
    }

    /**
     * Confines this object's data path to the calling thread (see the class documentation):
     * registers the thread with every object whose close would close this one, each of which then
     * refuses a close from another thread while this object is open. Idempotent on that thread.
     *
     * @throws IllegalStateException when this object or one of those is closed, or when this object
     *                               is confined to another thread already
     */
    final void confineToCurrentThread() {
        Thread me = Thread.currentThread();
        state.lock();
        try {
            ensureOpen();
            if (confinedTo == me) {
                return;
            }
            if (confinedTo != null) {
                throw new IllegalStateException(describe() + " is confined to " + confinedTo + " already");
            }
        } finally {
            state.unlock();
        }
        List<NativeResource> above = closersOf();
        List<NativeResource> registered = new ArrayList<>(above.size());
        try {
            for (NativeResource a : above) {
                a.addConfined(me);
                registered.add(a);
            }
            state.lock();
            try {
                ensureOpen();
                if (confinedTo != null) {
                    throw new IllegalStateException(describe() + " is confined to " + confinedTo + " already");
                }
                confinedUnder = above;
                confinedTo = me;
            } finally {
                state.unlock();
            }
        } catch (IllegalStateException e) {
            for (NativeResource a : registered) {
                a.removeConfined(me);
            }
            throw e;
        }
    }

    /**
     * Declares that {@code closer} closes this object when it closes itself, outside the tree of
     * parents and dependencies (a connection id its queue pair), so that confining this object
     * protects it from {@code closer}'s close as well.
     */
    final void alsoClosedBy(NativeResource closer) {
        List<NativeResource> list = new ArrayList<>(alsoClosedBy);
        list.add(closer);
        alsoClosedBy = List.copyOf(list);
    }

    /** Whether this object is confined to the calling thread. */
    final boolean isConfinedToCurrentThread() {
        return confinedTo == Thread.currentThread();
    }

    /**
     * Every object whose close closes this one (its owners, theirs, and so on), each after those
     * that would close it: registering in this order, a close that races the registration is
     * either refused or makes the registration fail before anything below it was registered.
     */
    private List<NativeResource> closersOf() {
        List<NativeResource> ordered = new ArrayList<>();
        addOwnersFirst(this, ordered);
        ordered.remove(this);
        return ordered;
    }

    private static void addOwnersFirst(NativeResource r, List<NativeResource> ordered) {
        if (ordered.contains(r)) {
            return;
        }
        List<NativeResource> next;
        r.state.lock();
        try {
            next = new ArrayList<>(r.owners);
        } finally {
            r.state.unlock();
        }
        next.addAll(r.alsoClosedBy);
        for (NativeResource o : next) {
            addOwnersFirst(o, ordered);
        }
        ordered.add(r);
    }

    private void addConfined(Thread owner) {
        state.lock();
        try {
            ensureOpen();
            if (confinedBelow == null) {
                confinedBelow = new HashMap<>();
            }
            confinedBelow.merge(owner, 1, Integer::sum);
        } finally {
            state.unlock();
        }
    }

    private void removeConfined(Thread owner) {
        state.lock();
        try {
            if (confinedBelow != null && confinedBelow.merge(owner, -1, Integer::sum) == 0) {
                confinedBelow.remove(owner);
            }
        } finally {
            state.unlock();
        }
    }

    /**
     * Refuses a close by a thread other than the one this object, or an open confined object it
     * would close, is confined to (a terminated owner cannot be in a call and does not count);
     * under this object's lock.
     */
    private void refuseForeignClose() {
        Thread me = Thread.currentThread();
        Thread owner = confinedTo;
        if (owner != null && owner != me && owner.isAlive()) {
            throw new IllegalStateException(describe() + " is confined to " + owner
                    + ": only that thread may close it");
        }
        if (confinedBelow != null) {
            for (Thread t : confinedBelow.keySet()) {
                if (t != me && t.isAlive()) {
                    throw new IllegalStateException(describe() + " would close an object confined to " + t
                            + ": close that object on its thread first");
                }
            }
        }
    }

    /**
     * Holds the native object for a control-path call: until the returned {@link Use} is closed,
     * {@link #close()} waits; use it as {@code try (Use u = use()) { ... }}. Allocates nothing.
     *
     * @throws IllegalStateException when this object has been closed
     */
    protected final Use use() {
        enterCall();
        return use;
    }

    /**
     * A held call on a verbs object (see {@link #use()}); closing it lets a waiting close go on.
     * One instance per object, shared by its calls: it only counts.
     */
    protected final class Use implements AutoCloseable {
        private Use() {
        }

        @Override
        public void close() {
            exitCall();
        }
    }

    private void awaitCalls() {
        int spins = 0;
        while ((int) CALLS.getVolatile(this) > 0) {
            if (++spins < 100) {
                Thread.onSpinWait();
            } else if (spins < 1000) {
                Thread.yield();
            } else {
                LockSupport.parkNanos(50_000); // a long control-path call, such as registering a large region
            }
        }
    }

    /** Whether {@link #close()} has been called. */
    public final boolean isClosed() {
        return closed;
    }

    /** The native object (for the connection manager); objects without one throw. */
    MemorySegment handle() {
        throw new UnsupportedOperationException(describe() + " has no native handle");
    }

    /** Frees the native object; called once, after every child has been closed. */
    protected abstract void destroy();

    /**
     * Called once, by the closing thread, right after this object is marked closed (before its
     * children close and before {@link #destroy()}): what must know of a close at once.
     */
    void markedClosed() {
    }

    /** A short human description for messages, such as {@code Context rxe0}. */
    protected abstract String describe();

    /**
     * Closes the children (newest first), then frees the native object. Idempotent. The first
     * failure is rethrown after everything else was still closed, later ones are suppressed.
     */
    @Override
    public final void close() {
        List<NativeResource> toClose;
        Thread other;
        state.lock();
        try {
            other = closed ? closer : null;
            if (!closed) {
                refuseForeignClose();
                closed = true;
                closer = Thread.currentThread();
                markedClosed();
            }
            toClose = other == null ? new ArrayList<>(children) : null;
            children.clear();
        } finally {
            state.unlock();
        }
        if (toClose == null) {
            // closed already, or being closed by another thread: return once it is done, so that
            // whatever the caller frees next is no longer used by this object
            if (other != Thread.currentThread()) {
                awaitClosed();
            }
            return;
        }
        try {
            closeNow(toClose);
        } finally {
            closedLatch.countDown();
        }
    }

    private void awaitClosed() {
        boolean interrupted = false;
        while (true) {
            try {
                closedLatch.await();
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
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        return failure;
    }

    private void closeNow(List<NativeResource> toClose) {
        awaitCalls();
        RuntimeException failure = closeNewestFirst(toClose);
        try {
            destroy();
        } catch (RuntimeException e) {
            if (failure == null) {
                failure = e;
            } else {
                failure.addSuppressed(e);
            }
        } finally {
            List<NativeResource> from;
            state.lock();
            try {
                from = new ArrayList<>(owners);
                owners.clear();
            } finally {
                state.unlock();
            }
            for (NativeResource owner : from) {
                owner.forget(this);
            }
            Thread confined = confinedTo;
            if (confined != null) {
                for (NativeResource a : confinedUnder) {
                    a.removeConfined(confined);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    private static final class Bridge implements VerbsAccess.Bridge {
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

    @Override
    public String toString() {
        return describe() + (closed ? " (closed)" : "");
    }
}
