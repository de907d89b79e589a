package dev.verbs4j.verbs;

/**
 * A native call failed (a verb, a connection manager or a C library function): carries the C
 * function's name and the errno it reported. Misuse is never this exception but an {@link
 * IllegalArgumentException} or {@link IllegalStateException}, checked before the call. Owns no
 * native memory.
 */
public class VerbsException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final String verb;
    private final int errno;

    /** A failure of {@code verb} with {@code errno}; {@code detail} may add context or be null. */
    public VerbsException(String verb, int errno, String detail) {
        super(format(verb, errno, detail));
        this.verb = verb;
        this.errno = errno;
    }

    private static String format(String verb, int errno, String detail) {
        String base = verb + " failed: " + Errno.name(errno) + " (" + errno + "): " + Errno.message(errno);
        return detail == null || detail.isEmpty() ? base : base + ": " + detail;
    }

    /** The C name of the verb that failed, for example {@code ibv_open_device}. */
    public String verb() {
        return verb;
    }

    /** The errno value the verb reported. */
    public int errno() {
        return errno;
    }

    /** The symbolic errno name, for example {@code ENODEV}. */
    public String errnoName() {
        return Errno.name(errno);
    }
}
