package dev.verbs4j.rdmacm;

import dev.verbs4j.verbs.Errno;
import dev.verbs4j.verbs.VerbsException;
import dev.verbs4j.verbs.WcStatus;

import java.io.IOException;

/**
 * The defined outcome of a failed {@link RdmaConnection} or {@link RdmaServer} operation. The
 * {@link #kind()} says what went wrong; depending on it, {@link #event()} and {@link #status()}
 * carry the connection manager event, {@link #wcStatus()} the work completion status, {@link
 * #errno()} the error number of a failed verb, and {@link #privateData()} what a rejecting peer
 * sent.
 *
 * <p>Every error event of the connection manager maps to {@link Kind#EVENT}: ADDR_ERROR,
 * ROUTE_ERROR, CONNECT_ERROR, UNREACHABLE, REJECTED, DEVICE_REMOVAL, MULTICAST_ERROR, and, while
 * connecting, DISCONNECTED and TIMEWAIT_EXIT. On an established connection DISCONNECTED and
 * TIMEWAIT_EXIT end the stream instead ({@link Kind#PEER_DISCONNECTED} for sends, end of stream
 * for receives).
 */
public class RdmaConnectionException extends IOException {

    /** What went wrong. */
    public enum Kind {
        /** The operation did not finish within its timeout ({@link RdmaTimeoutException}). */
        TIMEOUT,
        /** The connection or server was closed locally, possibly by another thread while waiting. */
        CLOSED,
        /** The peer disconnected; nothing more can be sent. */
        PEER_DISCONNECTED,
        /** The connection manager reported a failure event ({@link #event()}, {@link #status()}). */
        EVENT,
        /** A work request completed in error ({@link #wcStatus()}). */
        WORK_COMPLETION,
        /** A verb or connection manager call failed ({@link #errno()}). */
        VERBS_ERROR
    }

    private final Kind kind;
    private final CmEventType event;
    private final int status;
    private final WcStatus wcStatus;
    private final int errno;
    private final byte[] privateData;

    /** An exception of {@code kind} with all fields given; {@code event} and {@code wcStatus} may be null. */
    public RdmaConnectionException(String message, Kind kind, CmEventType event, int status, WcStatus wcStatus, int errno,
                                   byte[] privateData, Throwable cause) {
        super(message, cause);
        this.kind = kind;
        this.event = event;
        this.status = status;
        this.wcStatus = wcStatus;
        this.errno = errno;
        this.privateData = privateData == null ? new byte[0] : privateData.clone();
    }

    /** The exception for connection manager event {@code event} during {@code what} ("connect to …"). */
    public static RdmaConnectionException of(CmEvent event, String what) {
        CmEventType type = event.type();
        String detail = switch (type) {
            case REJECTED -> event.status() == CmEvent.REJECT_CONSUMER
                    ? "rejected by the peer" + reasonText(rejectionReason(event.privateData()))
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
        return new RdmaConnectionException(what + ": " + detail + " [" + type + "]", Kind.EVENT, type, event.status(), null,
                event.status() < 0 ? -event.status() : 0, event.privateData(), null);
    }

    /** The exception for a work request that completed with {@code status} during {@code what}. */
    public static RdmaConnectionException of(WcStatus status, String what) {
        return new RdmaConnectionException(what + ": work request completed with " + status + " (" + status.description() + ")",
                Kind.WORK_COMPLETION, null, 0, status, 0, null, null);
    }

    /** The exception for a failed verb during {@code what}. */
    public static RdmaConnectionException of(VerbsException e, String what) {
        return new RdmaConnectionException(what + ": " + e.getMessage(), Kind.VERBS_ERROR, null, 0, null, e.errno(), null, e);
    }

    static RdmaConnectionException closed(String what) {
        return new RdmaConnectionException(what + ": closed", Kind.CLOSED, null, 0, null, 0, null, null);
    }

    static RdmaConnectionException peerDisconnected(String what, CmEventType event) {
        return new RdmaConnectionException(what + ": the peer disconnected" + (event != null ? " [" + event + "]" : ""),
                Kind.PEER_DISCONNECTED, event, 0, null, 0, null, null);
    }

    /** What a rejecting {@link RdmaServer} puts first in the private data of a reject that gives a reason. */
    static final String REASON_PREFIX = "verbs4j rejected: ";
    /** The most private data a reject carries over RoCE. */
    static final int MAX_REJECT_DATA = 148;

    /** The private data of a reject that gives {@code reason}: the prefix and the text, cut to fit a reject. */
    static byte[] rejection(String reason) {
        byte[] b = (REASON_PREFIX + reason).getBytes(java.nio.charset.StandardCharsets.UTF_8);
        return java.util.Arrays.copyOf(b, Math.min(b.length, MAX_REJECT_DATA));
    }

    /** The reason a rejecting {@link RdmaServer} gave in {@code privateData}, or null when it gave none. */
    static String rejectionReason(byte[] privateData) {
        if (privateData == null) {
            return null;
        }
        byte[] prefix = REASON_PREFIX.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        if (privateData.length < prefix.length
                || !java.util.Arrays.equals(privateData, 0, prefix.length, prefix, 0, prefix.length)) {
            return null;
        }
        int end = prefix.length;
        while (end < privateData.length && privateData[end] != 0) {
            end++;
        }
        return new String(privateData, prefix.length, end - prefix.length, java.nio.charset.StandardCharsets.UTF_8);
    }

    /**
     * The reason the peer gave for rejecting the connection: for a REJECTED event whose private
     * data an {@link RdmaServer} filled in when it could not set the connection up (its resources,
     * its accept), else null.
     */
    public String rejectionReason() {
        return event == CmEventType.REJECTED ? rejectionReason(privateData) : null;
    }

    private static String reasonText(String reason) {
        return reason == null ? "" : ": " + reason;
    }

    private static String errnoText(int status) {
        return status < 0 ? " (" + Errno.name(-status) + ")" : status > 0 ? " (status " + status + ")" : "";
    }

    /** What went wrong. */
    public Kind kind() {
        return kind;
    }

    /** The connection manager event, or null. */
    public CmEventType event() {
        return event;
    }

    /** The event's status: 0, a negative errno, or for REJECTED the reject reason. */
    public int status() {
        return status;
    }

    /** The work completion status, or null. */
    public WcStatus wcStatus() {
        return wcStatus;
    }

    /** The error number, or 0. */
    public int errno() {
        return errno;
    }

    /** The private data of a REJECTED event (zero-padded by the transport), else empty. */
    public byte[] privateData() {
        return privateData.clone();
    }

    /** A new exception like this one, thrown again from {@code what} with this one as cause. */
    RdmaConnectionException rethrown(String what) {
        return new RdmaConnectionException(what + ": " + getMessage(), kind, event, status, wcStatus, errno, privateData, this);
    }
}
