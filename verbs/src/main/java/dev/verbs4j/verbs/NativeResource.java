package dev.verbs4j.verbs;

import dev.verbs4j.verbs.internal.VerbsAccess;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
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
    /**
     * Guards {@link #children}, {@link #owners} and the start of a close: short sections that never
     * block (a lock rather than a monitor, so that no virtual thread is ever pinned here).
     */
    private final ReentrantLock guard = new ReentrantLock();
    private final Set<NativeResource> children = new LinkedHashSet<>();
    private final List<NativeResource> owners = new ArrayList<>(2);
    private volatile boolean closed;
    /** The thread that closes this object (once closed), and when it is done. */
    private Thread closer;
    private final CountDownLatch closedLatch = new CountDownLatch(1);
    private final Use use = new Use();

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
                guard.lock();
                try {
                    owners.add(parent);
                } finally {
                    guard.unlock();
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
        guard.lock();
        try {
            owners.add(used);
        } finally {
            guard.unlock();
        }
    }

    /**
     * Ends a {@link #dependOn} relation: {@code used} no longer closes this object (for objects
     * that move, such as a connection id migrated to another event channel).
     */
    protected final void stopDependingOn(NativeResource used) {
        guard.lock();
        try {
            owners.remove(used);
        } finally {
            guard.unlock();
        }
        used.forget(this);
    }

    private void adopt(NativeResource child) {
        guard.lock();
        try {
            ensureOpen();
            children.add(child);
        } finally {
            guard.unlock();
        }
    }

    private void forget(NativeResource child) {
        guard.lock();
        try {
            children.remove(child);
        } finally {
            guard.unlock();
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
        guard.lock();
        try {
            other = closed ? closer : null;
            if (!closed) {
                closed = true;
                closer = Thread.currentThread();
            }
            toClose = other == null ? new ArrayList<>(children) : null;
            children.clear();
        } finally {
            guard.unlock();
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
            guard.lock();
            try {
                from = new ArrayList<>(owners);
                owners.clear();
            } finally {
                guard.unlock();
            }
            for (NativeResource owner : from) {
                owner.forget(this);
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
        public QueuePair createQueuePair(ProtectionDomain pd, QueuePairInit init, VerbsAccess.QueuePairFactory factory) {
            return new QueuePair(pd, init, factory);
        }

    }

    @Override
    public String toString() {
        return describe() + (closed ? " (closed)" : "");
    }
}
