package dev.verbs4j.rdmacm;

import dev.verbs4j.verbs.Errno;
import dev.verbs4j.verbs.VerbsException;
import dev.verbs4j.verbs.WcStatus;

import java.io.IOException;

/**
 * The defined outcome of a failed {@link RdmaConnection} or {@link RdmaServer} operation: its
 * {@link #failure()}. The {@link #kind()} says what went wrong; depending on it, {@link #event()} and {@link #status()}
 * carry the connection manager event, {@link #wcStatus()} the work completion status, {@link
 * #errno()} the error number of a failed verb, and {@link #privateData()} what a rejecting peer
 * sent.
 *
 * <p>Every error event of the connection manager maps to {@link Failure.Kind#EVENT}: ADDR_ERROR,
 * ROUTE_ERROR, CONNECT_ERROR, UNREACHABLE, REJECTED, DEVICE_REMOVAL, MULTICAST_ERROR, and, while
 * connecting, DISCONNECTED and TIMEWAIT_EXIT. On an established connection DISCONNECTED and
 * TIMEWAIT_EXIT end the stream instead ({@link Failure.Kind#PEER_DISCONNECTED} for sends, end of stream
 * for receives).
 */
public class RdmaConnectionException extends IOException {

    private final Failure failure;
    private final byte[] privateData;

    /** An exception for {@code failure}; {@code privateData} (what a rejecting peer sent) and {@code cause} may be null. */
    public RdmaConnectionException(String message, Failure failure, byte[] privateData, Throwable cause) {
        super(message, cause);
        this.failure = java.util.Objects.requireNonNull(failure, "failure");
        this.privateData = privateData == null ? new byte[0] : privateData.clone();
    }

    /** The exception for connection manager event {@code event} during {@code what} ("connect to …"). */
    public static RdmaConnectionException of(CmEvent event, String what) {
        CmEventType type = event.type();
        String detail = switch (type) {
            case REJECTED -> event.status() == CmEvent.REJECT_CONSUMER
                    ? "rejected by the peer" + RejectionReason.decode(event.privateData()).map(r -> ": " + r.text()).orElse("")
                    : event.status() == CmEvent.REJECT_INVALID_SERVICE_ID ? "rejected: nobody listens on that port"
                    : "rejected (reason " + event.status() + ")";
            case ADDR_ERROR -> "address resolution failed" + errnoText(event.status());
            case ROUTE_ERROR -> "route resolution failed" + errnoText(event.status());
            case CONNECT_ERROR -> "connection establishment failed" + errnoText(event.status());
            case UNREACHABLE -> "peer unreachable" + errnoText(event.status());
            case DEVICE_REMOVAL -> "the RDMA device was removed";
            case DISCONNECTED -> "disconnected by the peer";
            case TIMEWAIT_EXIT -> "the connection left time-wait";
            default -> "unexpected event" + (event.status() != 0 ? " (status " + event.status() + ")" : "");
        };
        return new RdmaConnectionException(what + ": " + detail + " [" + type + "]", Failure.event(type, event.status()),
                event.privateData(), null);
    }

    /** The exception for a work request that completed with {@code status} during {@code what}. */
    public static RdmaConnectionException of(WcStatus status, String what) {
        return new RdmaConnectionException(what + ": work request completed with " + status + " (" + status.description() + ")",
                Failure.workCompletion(status), null, null);
    }

    /** The exception for a failed verb during {@code what}. */
    public static RdmaConnectionException of(VerbsException e, String what) {
        return new RdmaConnectionException(what + ": " + e.getMessage(), Failure.verbs(e.errno()), null, e);
    }

    /** The exception for an unexpected failure {@code cause} (not a verb's) of {@code what}. */
    static RdmaConnectionException failed(String what, Throwable cause) {
        return new RdmaConnectionException(what + " failed: " + cause, Failure.verbs(0), null, cause);
    }

    /**
     * The exception for a wait of {@code what} that an interrupt ended; sets the thread's interrupt
     * status again (its cause is an {@link java.io.InterruptedIOException}).
     */
    static RdmaConnectionException interrupted(String what) {
        Thread.currentThread().interrupt();
        String message = what + ": interrupted while waiting";
        return new RdmaConnectionException(message, Failure.of(Failure.Kind.INTERRUPTED), null,
                new java.io.InterruptedIOException(message));
    }

    static RdmaConnectionException closed(String what) {
        return new RdmaConnectionException(what + ": closed", Failure.of(Failure.Kind.CLOSED), null, null);
    }

    static RdmaConnectionException peerDisconnected(String what, CmEventType event) {
        return new RdmaConnectionException(what + ": the peer disconnected" + (event != null ? " [" + event + "]" : ""),
                Failure.peerDisconnected(event), null, null);
    }

    /**
     * The reason the peer gave for rejecting the connection: for a REJECTED event whose private
     * data an {@link RdmaServer} filled in when it could not set the connection up (its resources,
     * its accept), else null.
     */
    public String rejectionReason() {
        return failure.event() == CmEventType.REJECTED
                ? RejectionReason.decode(privateData).map(RejectionReason::text).orElse(null) : null;
    }

    private static String errnoText(int status) {
        return status < 0 ? " (" + Errno.name(-status) + ")" : status > 0 ? " (status " + status + ")" : "";
    }

    /** What went wrong, as a value. */
    public Failure failure() {
        return failure;
    }

    /** What went wrong: {@code failure().kind()}. */
    public Failure.Kind kind() {
        return failure.kind();
    }

    /** The connection manager event, or null. */
    public CmEventType event() {
        return failure.event();
    }

    /** The event's status: 0, a negative errno, or for REJECTED the reject reason. */
    public int status() {
        return failure.status();
    }

    /** The work completion status, or null. */
    public WcStatus wcStatus() {
        return failure.wcStatus();
    }

    /** The error number, or 0. */
    public int errno() {
        return failure.errno();
    }

    /** The private data of a REJECTED event (zero-padded by the transport), else empty. */
    public byte[] privateData() {
        return privateData.clone();
    }

    /** A new exception like this one, thrown again from {@code what} with this one as cause. */
    RdmaConnectionException rethrown(String what) {
        return new RdmaConnectionException(what + ": " + getMessage(), failure, privateData, this);
    }
}
