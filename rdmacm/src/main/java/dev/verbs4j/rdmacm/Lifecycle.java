package dev.verbs4j.rdmacm;

import dev.verbs4j.verbs.WcStatus;

import java.net.InetSocketAddress;

/**
 * Where an {@link RdmaConnection} is in its life, as one value: connecting, open, ended by the
 * peer, broken, closing, released; with the failure or the CM event that ended it, and the
 * {@code rdma_disconnect} an end calls once. Answers the checks every call makes (closed? can it
 * send? end of stream?). Not thread-safe: the connection's lock guards it. Owns no memory.
 */
final class Lifecycle {

    private static final System.Logger LOG = System.getLogger(RdmaConnection.class.getName());

    /** The states in order: from {@link #CLOSING} on, the connection is closed for its callers. */
    enum State { CONNECTING, OPEN, PEER_CLOSED, FAILED, CLOSING, RELEASED }

    private final CmId id;
    private State state = State.CONNECTING;
    private RdmaConnectionException failure;
    private CmEventType endEvent;
    /** {@code rdma_disconnect} was called (once, by whichever end came first). */
    private boolean disconnectCalled;
    private volatile InetSocketAddress peer;

    Lifecycle(CmId id) {
        this.id = id;
    }

    State state() {
        return state;
    }

    /** Whether {@link RdmaConnection#close()} (or a release) has begun. */
    boolean closing() {
        return state.compareTo(State.CLOSING) >= 0;
    }

    boolean released() {
        return state == State.RELEASED;
    }

    /** Established (or about to be) and not ended: receives still count as credits. */
    boolean live() {
        return state == State.OPEN || state == State.CONNECTING;
    }

    /** The peer's address once established (null before), for messages. */
    InetSocketAddress peer() {
        return peer;
    }

    void established(InetSocketAddress peer) {
        this.peer = peer;
        if (state == State.CONNECTING) {
            state = State.OPEN;
        }
    }

    void checkNotClosed(String what) throws RdmaConnectionException {
        if (closing()) {
            throw RdmaConnectionException.closed(what);
        }
    }

    void checkSendable(String what) throws RdmaConnectionException {
        checkNotClosed(what);
        switch (state) {
            case FAILED -> throw failure.rethrown(what);
            case PEER_CLOSED -> throw RdmaConnectionException.peerDisconnected(what + " to " + peer, endEvent);
            case CONNECTING -> throw new IllegalStateException(what + ": the connection is not established yet");
            default -> { }
        }
    }

    /** For a receive that found nothing: true at end of stream, throws when broken, false while more may come. */
    boolean endOfStream(String what) throws RdmaConnectionException {
        return switch (state) {
            case PEER_CLOSED -> true;
            case FAILED -> throw failure.rethrown(what);
            default -> false;
        };
    }

    /** The exception for an operation that cannot complete because of the connection's state. */
    RdmaConnectionException failure(String what) {
        if (closing()) {
            return RdmaConnectionException.closed(what);
        }
        return switch (state) {
            case FAILED -> failure.rethrown(what);
            case PEER_CLOSED -> RdmaConnectionException.peerDisconnected(what + " to " + peer, endEvent);
            default -> RdmaConnectionException.closed(what);
        };
    }

    /** The connection ended without an error (a disconnect, or a flushed work request): this side disconnects too. */
    void ended(CmEventType why) {
        if (live()) {
            state = State.PEER_CLOSED;
            endEvent = why;
        }
        disconnect();
    }

    void fail(RdmaConnectionException e) {
        if (state.compareTo(State.FAILED) < 0) {
            state = State.FAILED;
            failure = e;
        }
        disconnect();
    }

    /**
     * A work request completed in error: a flush (the queue pair is in the error state, by a
     * disconnect or an earlier error) ends a live connection and returns null; any other status
     * breaks the connection and returns the failure.
     */
    RdmaConnectionException completedInError(WcStatus status, String what) {
        if (status == WcStatus.WR_FLUSH_ERR) {
            if (live()) {
                ended(CmEventType.DISCONNECTED);
            }
            return null;
        }
        RdmaConnectionException e = RdmaConnectionException.of(status, what + " " + peer);
        fail(e);
        return e;
    }

    /** Closing begins; false when it had already. */
    boolean close() {
        if (closing()) {
            return false;
        }
        state = State.CLOSING;
        return true;
    }

    /** The resources are about to be freed; false when they were already. */
    boolean release() {
        if (released()) {
            return false;
        }
        state = State.RELEASED;
        return true;
    }

    void disconnect() {
        if (!disconnectCalled && !released()) {
            disconnectCalled = true;
            try {
                id.disconnect();
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.DEBUG, "rdma_disconnect: {0}", e.getMessage());
            }
        }
    }

    @Override
    public String toString() {
        return state.toString();
    }
}
