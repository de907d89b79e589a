package dev.verbs4j.verbs;

import java.util.Objects;

/**
 * The one rule for closing several things at once: every close is tried, even after an earlier
 * one failed, and no failure is dropped. {@link #closeAll} rethrows the first failure with the
 * later ones suppressed; {@link #closeAfter} adds them to a failure already on its way out;
 * {@link #closeLogged} is for the places that cannot throw (a teardown on a background thread)
 * and logs each failure at {@code WARNING} with its throwable. Null elements are skipped.
 */
public final class Closeables {

    private Closeables() {
    }

    /**
     * Closes {@code resources} in the order given; throws the first failure (a checked one wrapped
     * in an {@link IllegalStateException}) with the later ones suppressed.
     */
    public static void closeAll(AutoCloseable... resources) {
        RuntimeException failure = close(null, resources);
        if (failure != null) {
            throw failure;
        }
    }

    /**
     * Closes {@code resources} in the order given and adds what their closes throw to {@code
     * failure} as suppressed; returns {@code failure}, for {@code throw Closeables.closeAfter(e, a, b)}.
     */
    public static <T extends Throwable> T closeAfter(T failure, AutoCloseable... resources) {
        Objects.requireNonNull(failure, "failure");
        for (AutoCloseable c : resources) {
            Throwable t = closeOne(c);
            if (t != null && t != failure) {
                failure.addSuppressed(t);
            }
        }
        return failure;
    }

    /**
     * Closes {@code resources} in the order given and logs each failure to {@code log} at {@code
     * WARNING} with its throwable, naming the resource; never throws.
     */
    public static void closeLogged(System.Logger log, AutoCloseable... resources) {
        for (AutoCloseable c : resources) {
            Throwable t = closeOne(c);
            if (t != null) {
                log.log(System.Logger.Level.WARNING, "closing " + c + " failed", t);
            }
        }
    }

    private static RuntimeException close(RuntimeException failure, AutoCloseable[] resources) {
        for (AutoCloseable c : resources) {
            Throwable t = closeOne(c);
            if (t == null) {
                continue;
            }
            RuntimeException e = t instanceof RuntimeException r ? r
                    : new IllegalStateException("closing " + c + " failed", t);
            if (failure == null) {
                failure = e;
            } else if (failure != e) {
                failure.addSuppressed(e);
            }
        }
        return failure;
    }

    /** Closes {@code c} (if any); what it threw, or null. Errors other than exceptions propagate. */
    private static Throwable closeOne(AutoCloseable c) {
        if (c == null) {
            return null;
        }
        try {
            c.close();
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return e;
        } catch (Exception e) {
            return e;
        }
    }
}
