package dev.verbs4j.rdmacm;

import dev.verbs4j.verbs.Errno;
import dev.verbs4j.verbs.WcStatus;

import java.util.Objects;

/**
 * What went wrong with a connection, as a value: the {@link Kind} and, depending on it, the
 * connection manager event with its status, the work completion status, or the errno of a failed
 * verb. The one failure model of the layers above verbs: {@link RdmaConnectionException} and the
 * NAAICE layer's exception carry it.
 *
 * @param kind     what went wrong
 * @param event    the connection manager event ({@link Kind#EVENT}, and the event that ended a
 *                 connection for {@link Kind#PEER_DISCONNECTED}), else null
 * @param status   the event's status: 0, a negative errno, or for REJECTED the reject reason
 * @param wcStatus the work completion status ({@link Kind#WORK_COMPLETION}), else null
 * @param errno    the error number of a failed verb or event, else 0
 */
public record Failure(Kind kind, CmEventType event, int status, WcStatus wcStatus, int errno) {

    /** What went wrong. */
    public enum Kind {
        /** The operation did not finish within its timeout. */
        TIMEOUT,
        /** The connection or server was closed locally, possibly by another thread while waiting. */
        CLOSED,
        /** The waiting thread was interrupted (its interrupt status is set again); the connection stays as it was. */
        INTERRUPTED,
        /** The peer disconnected; nothing more can be sent. */
        PEER_DISCONNECTED,
        /** The connection manager reported a failure event ({@link #event()}, {@link #status()}). */
        EVENT,
        /** A work request completed in error ({@link #wcStatus()}). */
        WORK_COMPLETION,
        /** A verb or connection manager call failed ({@link #errno()}). */
        VERBS_ERROR
    }

    /** Checks that the kind is given. */
    public Failure {
        Objects.requireNonNull(kind, "kind");
    }

    /** A failure of a kind that carries nothing more: TIMEOUT, CLOSED, INTERRUPTED. */
    public static Failure of(Kind kind) {
        return new Failure(kind, null, 0, null, 0);
    }

    /** Connection manager event {@code type} with {@code status} (a negative status is an errno). */
    public static Failure event(CmEventType type, int status) {
        return new Failure(Kind.EVENT, type, status, null, status < 0 ? -status : 0);
    }

    /** The peer disconnected, seen as {@code event} (null when no event was seen). */
    public static Failure peerDisconnected(CmEventType event) {
        return new Failure(Kind.PEER_DISCONNECTED, event, 0, null, 0);
    }

    /** A work request completed with {@code status}. */
    public static Failure workCompletion(WcStatus status) {
        return new Failure(Kind.WORK_COMPLETION, null, 0, Objects.requireNonNull(status, "status"), 0);
    }

    /** A verb failed with {@code errno} (0 when it set none). */
    public static Failure verbs(int errno) {
        return new Failure(Kind.VERBS_ERROR, null, 0, null, errno);
    }

    /** A short description: the kind and whatever it carries, e.g. {@code EVENT REJECTED status 28}, {@code VERBS_ERROR ENOMEM}. */
    @Override
    public String toString() {
        StringBuilder b = new StringBuilder(kind.name());
        if (event != null) {
            b.append(' ').append(event);
        }
        if (status != 0) {
            b.append(" status ").append(status);
        }
        if (wcStatus != null) {
            b.append(' ').append(wcStatus);
        }
        if (errno != 0) {
            b.append(' ').append(Errno.name(errno));
        }
        return b.toString();
    }
}
