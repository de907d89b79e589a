package dev.verbs4j.vipl;

/**
 * A VIPL function that hands back a new object (a handle, a connection, attributes) did not return
 * {@link VipReturn#SUCCESS}: the exception carries the code the C function would have returned.
 */
public final class VipException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final transient VipReturn code;

    /** An exception for {@code code} (never SUCCESS) from {@code function}. */
    public VipException(VipReturn code, String function, String detail) {
        super(function + ": " + code.cName() + (detail == null || detail.isEmpty() ? "" : " (" + detail + ")"));
        if (code == VipReturn.SUCCESS) {
            throw new IllegalArgumentException("VIP_SUCCESS is not an error");
        }
        this.code = code;
    }

    /** The return code of the failed function. */
    public VipReturn code() {
        return code;
    }
}
