package dev.verbs4j.naaice;

import dev.verbs4j.rdmacm.Failure;
import dev.verbs4j.rdmacm.RdmaConnectionException;

/**
 * Why a NAAICE context went to {@link NaaState#ERROR}: the {@link Reason} and, where there is one,
 * its numeric code (MRSP error code, NAA return code, CM event status, work completion status).
 */
public final class NaaiceException extends RuntimeException {

    /** The kind of failure. */
    public enum Reason {
        /** The NAA answered the region setup with an MRSP error message; {@link #code()} is its code. */
        MRSP_ERROR,
        /** The NAA finished the RPC with a non-zero return code ({@link #code()}); the connection is intact. */
        NAA_RETURN_CODE,
        /** A connection manager event reported a failure or a disconnect; {@link #code()} is its status. */
        CM_EVENT,
        /** A work completion failed; {@link #code()} is its {@code ibv_wc_status}. */
        WORK_COMPLETION,
        /** The operation did not finish within its timeout. */
        TIMEOUT,
        /** The peer broke the protocol (unexpected message or completion, inconsistent advertise). */
        PROTOCOL,
        /** A local call failed (resolution, registration, posting). */
        LOCAL,
        /** No NAA is configured for the request (middleware: no free {@code NAA_SPEC} item, or a parameter count mismatch). */
        CONFIGURATION
    }

    private final Reason reason;
    private final int code;
    private final Failure failure;

    /**
     * A failure of {@code reason} with {@code code} (0 when there is none); its {@link #failure()}
     * is its cause's when that is an {@link RdmaConnectionException}.
     */
    public NaaiceException(Reason reason, int code, String message, Throwable cause) {
        this(reason, code, message, cause, cause instanceof RdmaConnectionException r ? r.failure() : null);
    }

    /** A failure of {@code reason} with {@code code} whose transport failure is {@code failure} (may be null). */
    public NaaiceException(Reason reason, int code, String message, Throwable cause, Failure failure) {
        super(reason + (code != 0 ? " " + code : "") + ": " + message, cause);
        this.reason = reason;
        this.code = code;
        this.failure = failure;
    }

    /** A failure without a cause. */
    public NaaiceException(Reason reason, int code, String message) {
        this(reason, code, message, null);
    }

    /** The kind of failure. */
    public Reason reason() {
        return reason;
    }

    /** The code of the failure (see {@link Reason}), or 0. */
    public int code() {
        return code;
    }

    /**
     * The failure of the connection underneath, as RDMA CM and the completions describe it (the
     * event and its status, the completion status, the errno), for {@link Reason#CM_EVENT}, {@link
     * Reason#WORK_COMPLETION} and a {@link Reason#LOCAL} failure of a librdmacm call; null for the
     * protocol's own failures.
     */
    public Failure failure() {
        return failure;
    }
}
