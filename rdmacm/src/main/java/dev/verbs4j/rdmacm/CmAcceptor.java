package dev.verbs4j.rdmacm;

import dev.verbs4j.verbs.Closeables;
import dev.verbs4j.verbs.QpType;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.time.temporal.ChronoUnit;

/**
 * The passive side of an RDMA CM connection: one connection request a listener took ({@link
 * CmPhase#REQUEST}), the caller's decision ({@link CmPhase#DECISION}), then either the accept
 * and its wait for the connection to be established ({@link CmPhase#ACCEPTANCE} within the
 * establishment limit of its {@link CmTimeouts}) or the reject, whose {@link RejectionReason}
 * travels to the active side in the reject's private data.
 *
 * <p>Drivable two ways. Blocking: {@link #awaitRequest} takes the next request from a listener's
 * channel, {@link #awaitEstablished} waits on the request id's channel once accepted. One event
 * at a time, for an event loop: {@link #of} with the CONNECT_REQUEST event it took, then {@link
 * #advance} with each event of the request's id and {@link #checkTimeout} when it wakes without
 * one. Failures and timeouts are thrown as {@link CmConnector}'s are; a failed acceptor stays in
 * the phase it failed in.
 *
 * <p>The request's id belongs to the caller once accepted (to close on failure as on success); a
 * reject frees it. One thread (or event loop) drives it at a time; its methods take one lock,
 * as {@link CmConnector}'s do.
 */
public final class CmAcceptor extends CmHandshake {

    private final CmEvent request;
    private CmEvent established;

    private CmAcceptor(CmEvent request, CmTimeouts timeouts) {
        super(connectionRequest(request).id(), timeouts, "accept from " + request.id().peerAddress(), "acceptor",
                CmPhase.DECISION);
        this.request = request;
    }

    private static CmEvent connectionRequest(CmEvent request) {
        if (request.type() != CmEventType.CONNECT_REQUEST) {
            throw new IllegalArgumentException(request + " is not a connection request");
        }
        return request;
    }

    /** The acceptor of {@code request}, a CONNECT_REQUEST event an event loop took; in {@link CmPhase#DECISION}. */
    public static CmAcceptor of(CmEvent request, CmTimeouts timeouts) {
        return new CmAcceptor(request, timeouts);
    }

    /**
     * Waits up to {@code timeout} on the channel of {@code listener} (an asynchronous listening
     * id) for its next connection request. The channel must carry only the listener's events
     * while it waits; ADDR_CHANGE is passed over.
     *
     * @throws RdmaTimeoutException    "listen on …: connection request (no RDMA_CM_EVENT_CONNECT_REQUEST within … ms)"
     * @throws RdmaConnectionException of kind EVENT when the listener failed (e.g. DEVICE_REMOVAL)
     */
    public static CmAcceptor awaitRequest(CmId listener, Duration timeout, CmTimeouts timeouts) throws RdmaConnectionException {
        if (listener.channel() == null) {
            throw new IllegalArgumentException(listener + " is synchronous: take its requests with getRequest()");
        }
        // one phase: its limit is the whole
        CmProgress wait = new CmProgress("listen on " + listener.localAddress(), "listener", ChronoUnit.FOREVER.getDuration());
        wait.start(CmPhase.REQUEST, timeout);
        while (true) {
            CmEvent ev = wait.next(listener); // a request's event is the listener's
            if (ev.type() == CmEventType.CONNECT_REQUEST) {
                return new CmAcceptor(ev, timeouts);
            }
            if (ev.type() != CmEventType.ADDR_CHANGE) {
                throw wait.unexpected(ev);
            }
        }
    }

    /**
     * Accepts the request ({@code rdma_accept}) with {@code parameters}, after the caller created
     * the id's queue pair: in {@link CmPhase#ACCEPTANCE} until ESTABLISHED arrives, or at once
     * established for a UD id (librdmacm awaits no outcome of a UD accept).
     */
    public void accept(ConnectionParameters parameters) throws RdmaConnectionException {
        progress.lock.lock();
        try {
            progress.expect(CmPhase.DECISION, "accept");
            boolean ud = id.qpType() == QpType.UD;
            if (!ud) {
                enter(CmPhase.ACCEPTANCE);
            }
            progress.call(() -> id.accept(parameters));
            if (ud) {
                progress.rest(CmPhase.ESTABLISHED);
            }
        } finally {
            progress.lock.unlock();
        }
    }

    /** Rejects the request giving {@code reason} (see {@link RejectionReason}) and frees its id. */
    public void reject(RejectionReason reason) throws RdmaConnectionException {
        reject(reason.encode());
    }

    /** Rejects the request sending {@code privateData} (at most 148 bytes over RoCE; may be empty) and frees its id. */
    public void reject(byte[] privateData) throws RdmaConnectionException {
        progress.lock.lock();
        try {
            progress.expect(CmPhase.DECISION, "reject");
            try {
                progress.call(() -> id.reject(privateData));
            } catch (RdmaConnectionException e) {
                throw Closeables.closeAfter(e, id);
            } catch (RuntimeException e) {
                throw Closeables.closeAfter(e, id);
            }
            id.close();
            progress.rest(CmPhase.REJECTED);
        } finally {
            progress.lock.unlock();
        }
    }

    /**
     * Takes the next event of the request's id: ESTABLISHED in {@link CmPhase#ACCEPTANCE} ends
     * it; ADDR_CHANGE is passed over; any other fails it.
     *
     * @return the phase now
     * @throws IllegalArgumentException when {@code event} is not for the request's id
     * @throws IllegalStateException    when the acceptor failed or is done
     */
    @Override
    public CmPhase advance(CmEvent event) throws RdmaConnectionException {
        progress.lock.lock();
        try {
            if (!progress.takes(id, event)) {
                return progress.phase();
            }
            if (progress.phase() != CmPhase.ACCEPTANCE || event.type() != CmEventType.ESTABLISHED) {
                throw progress.unexpected(event);
            }
            established = event;
            progress.rest(CmPhase.ESTABLISHED);
            return progress.phase();
        } finally {
            progress.lock.unlock();
        }
    }

    /** The CONNECT_REQUEST event. */
    public CmEvent request() {
        return request;
    }

    /** The private data of the request (zero-padded by the transport). */
    public byte[] requestData() {
        return request.privateData();
    }

    /** The requester's address. */
    public InetSocketAddress peer() {
        return id.peerAddress();
    }

    /** The ESTABLISHED event, or null before it. */
    @Override
    public CmEvent established() {
        return progress.locked(() -> established);
    }
}
