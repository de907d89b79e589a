package dev.verbs4j.verbs;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The lifetime shared by every verbs object: it is closed once, closes the objects created from it
 * first (newest first), and refuses use after close with an {@link IllegalStateException}.
 * Subclasses own their native object and free it in {@link #destroy()}.
 */
public abstract class NativeResource implements AutoCloseable {

    private final NativeResource parent;
    private final Set<NativeResource> children = new LinkedHashSet<>();
    private volatile boolean closed;

    /** Registers this object as a child of {@code parent} (null for a root such as a Context). */
    protected NativeResource(NativeResource parent) {
        this.parent = parent;
        if (parent != null) {
            parent.adopt(this);
        }
    }

    private void adopt(NativeResource child) {
        synchronized (this) {
            ensureOpen();
            children.add(child);
        }
    }

    private void forget(NativeResource child) {
        synchronized (this) {
            children.remove(child);
        }
    }

    /** Throws {@link IllegalStateException} when this object has been closed. */
    protected final void ensureOpen() {
        if (closed) {
            throw new IllegalStateException(describe() + " is closed");
        }
    }

    /** Whether {@link #close()} has been called. */
    public final boolean isClosed() {
        return closed;
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
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            toClose = new ArrayList<>(children);
            children.clear();
        }
        RuntimeException failure = null;
        for (int i = toClose.size() - 1; i >= 0; i--) {
            try {
                toClose.get(i).close();
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        try {
            destroy();
        } catch (RuntimeException e) {
            if (failure == null) {
                failure = e;
            } else {
                failure.addSuppressed(e);
            }
        } finally {
            if (parent != null) {
                parent.forget(this);
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    @Override
    public String toString() {
        return describe() + (closed ? " (closed)" : "");
    }
}
