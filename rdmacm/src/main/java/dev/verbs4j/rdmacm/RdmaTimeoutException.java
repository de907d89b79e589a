package dev.verbs4j.rdmacm;

/**
 * An {@link RdmaConnection} or {@link RdmaServer} operation did not finish within its timeout
 * ({@link Failure.Kind#TIMEOUT}). The connection stays usable unless the
 * operation says otherwise (a timed-out connect is abandoned and its resources freed).
 */
public class RdmaTimeoutException extends RdmaConnectionException {

    /** A timeout with this message. */
    public RdmaTimeoutException(String message) {
        super(message, Failure.of(Failure.Kind.TIMEOUT), null, null);
    }
}
