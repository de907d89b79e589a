package dev.verbs4j.verbs;

import dev.verbs4j.verbs.internal.VerbsAccess;

import java.lang.foreign.MemorySegment;
import java.util.List;

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
 *
 * <p>Each rule is a part of its own: the ownership tree ({@link Ownership}), the call guard
 * ({@link CallGuard}) and confinement ({@link Confinement}); this class ties them together.
 */
public abstract class NativeResource implements AutoCloseable {

    static {
        VerbsAccess.install(new AccessBridge());
    }

    private final NativeResource parent;
    private final CallGuard guard = new CallGuard(this);
    /** This object's place in the ownership tree; package-private for the other objects' parts. */
    final Ownership ownership = new Ownership(this, guard);
    /** This object's confinement; package-private for the other objects' parts. */
    final Confinement confinement = new Confinement(this, guard);
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
                ownership.addOwner(parent);
            }
            for (NativeResource u : used) {
                if (u != null) {
                    ownership.addOwner(u);
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
        ownership.addOwner(used);
    }

    /**
     * Ends a {@link #dependOn} relation: {@code used} no longer closes this object (for objects
     * that move, such as a connection id migrated to another event channel).
     */
    protected final void stopDependingOn(NativeResource used) {
        ownership.removeOwner(used);
    }

    /** Throws {@link IllegalStateException} when this object has been closed. */
    protected final void ensureOpen() {
        guard.ensureOpen();
    }

    /**
     * Starts a data-path call on the native object: from now until {@link #exitCall()} a close
     * waits. Throws {@link IllegalStateException} when the object is closed.
     */
    final void enterCall() {
        guard.enter();
    }

    /** Ends what {@link #enterCall()} started. */
    final void exitCall() {
        guard.exit();
    }

    /**
     * Starts a data-path call: {@link #enterCall()}, unless the calling thread is the one this
     * object is confined to, which only checks that it is open (nobody else can close it). Returns
     * whether the call was counted, for {@link #exitDataPath}.
     */
    final boolean enterDataPath() {
        if (confinement.isConfinedToCurrentThread()) {
            guard.ensureOpen();
            return false;
        }
        guard.enter();
        return true;
    }

    /** Ends what {@link #enterDataPath()} started. */
    final void exitDataPath(boolean counted) {
        if (counted) {
            guard.exit();
        }
    }

    /**
     * Confines this object's data path to the calling thread (see the class documentation).
     * Idempotent on that thread.
     *
     * @throws IllegalStateException when this object or one whose close would close it is closed,
     *                               or when this object is confined to another thread already
     */
    final void confineToCurrentThread() {
        confinement.confineToCurrentThread();
    }

    /**
     * Declares that {@code closer} closes this object when it closes itself, outside the tree of
     * parents and dependencies (a connection id its queue pair), so that confining this object
     * protects it from {@code closer}'s close as well.
     */
    final void alsoClosedBy(NativeResource closer) {
        confinement.alsoClosedBy(closer);
    }

    /** Whether this object is confined to the calling thread. */
    final boolean isConfinedToCurrentThread() {
        return confinement.isConfinedToCurrentThread();
    }

    /**
     * Holds the native object for a control-path call: until the returned {@link Use} is closed,
     * {@link #close()} waits; use it as {@code try (Use u = use()) { ... }}. Allocates nothing.
     *
     * @throws IllegalStateException when this object has been closed
     */
    protected final Use use() {
        guard.enter();
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
            guard.exit();
        }
    }

    /** Whether {@link #close()} has been called. */
    public final boolean isClosed() {
        return guard.isClosed();
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
        if (!confinement.close()) {
            // closed already, or being closed by another thread: return once it is done
            ownership.awaitClosed();
            return;
        }
        RuntimeException failure;
        try {
            List<NativeResource> dependents = ownership.beginClose();
            markedClosed();
            guard.awaitCalls();
            failure = Ownership.closeNewestFirst(dependents);
            try {
                destroy();
            } catch (RuntimeException e) {
                failure = Ownership.addFailure(failure, e);
            } finally {
                ownership.leaveOwners();
                confinement.release();
            }
        } finally {
            ownership.endClose();
        }
        if (failure != null) {
            throw failure;
        }
    }

    /**
     * Closes {@code objects} newest (last) first, each even when an earlier one failed; returns the
     * first failure with the later ones suppressed, or null.
     */
    static RuntimeException closeNewestFirst(List<? extends NativeResource> objects) {
        return Ownership.closeNewestFirst(objects);
    }

    @Override
    public String toString() {
        return describe() + (isClosed() ? " (closed)" : "");
    }
}
