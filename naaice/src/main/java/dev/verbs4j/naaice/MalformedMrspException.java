package dev.verbs4j.naaice;

/**
 * An MRSP message that cannot be decoded: too short, an unknown type, or a count that does not
 * match its length. {@link #errorCode()} is the MRSP error code an NAA answers with.
 */
public final class MalformedMrspException extends RuntimeException {

    private final int errorCode;

    /** A malformed message; {@code errorCode} is what an NAA replies. */
    public MalformedMrspException(String message, int errorCode) {
        super(message);
        this.errorCode = errorCode;
    }

    /** The MRSP error code to reply with. */
    public int errorCode() {
        return errorCode;
    }
}
