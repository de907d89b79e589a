package dev.verbs4j.verbs.internal;

/**
 * Makes sure, once, that native access is granted and that libibverbs can be loaded, turning the
 * JDK's initialization errors into messages that say what to install or add.
 */
public final class Library {

    private static volatile boolean loaded;

    private Library() {
    }

    /** Throws an {@link IllegalStateException} saying what is missing when verbs cannot be used. */
    public static void ensureLoaded() {
        if (loaded) {
            return;
        }
        NativeAccess.require();
        try {
            // Reading a constant runs the generated class's initializer, which opens the libraries (a
            // function's address would also initialize that function's holder, which binds a handle).
            dev.verbs4j.bindings.rdma_core_h.IBV_GID_TYPE_ROCE_V2();
        } catch (ExceptionInInitializerError | NoClassDefFoundError | IllegalArgumentException e) {
            throw new IllegalStateException("cannot load libibverbs.so.1 / librdmacm.so.1 (" + rootMessage(e)
                    + "): install the rdma-core runtime libraries (Debian/Ubuntu: apt-get install"
                    + " libibverbs1 librdmacm1 ibverbs-providers)", e);
        }
        loaded = true;
    }

    private static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null) {
            t = t.getCause();
        }
        return t.getMessage() == null ? t.toString() : t.getMessage();
    }
}
