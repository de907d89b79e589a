package dev.verbs4j.rdmacm;

import dev.verbs4j.verbs.VerbsException;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A listening RDMA endpoint, the server socket of this library: it binds a connection manager id
 * to an address, listens, and hands out established {@link RdmaConnection}s through {@link
 * #accept}.
 *
 * <p>One dispatcher thread per server takes the events of its own {@link EventChannel}. For each
 * connection request it asks the {@link RequestHandler} (accept all by default), creates the
 * connection's resources (protection domain, completion queue, queue pair, registered rings,
 * posted receives) and accepts; once the connection is established it moves the connection's id
 * to an event channel of its own and queues the connection for {@link #accept}. Requests beyond
 * the backlog are rejected; connections that are not established within the connect timeout, or
 * that fail while being established, are freed. A request the server cannot set up (creating the
 * connection's resources fails) is rejected with the reason in the reject's private data, so
 * that the client fails at once with an {@link RdmaConnectionException} whose message and {@link
 * RdmaConnectionException#rejectionReason()} say why, instead of running into its connect
 * timeout. (When {@code rdma_accept} itself fails, the kernel rejects the request without a
 * reason, also at once.)
 *
 * <p>The server owns its listening id, its event channel, its thread, and the connections not
 * yet accepted; {@link #close()} frees them and wakes callers blocked in {@link #accept}.
 * Accepted connections belong to the caller and outlive the server.
 */
public final class RdmaServer implements AutoCloseable {

    /** The verdict on a connection request: accept (with private data for the peer) or reject (with private data). */
    public record Verdict(boolean accepted, byte[] privateData) {

        public Verdict {
            privateData = privateData == null ? new byte[0] : privateData.clone();
        }

        /** Accept, sending the options' private data. */
        public static Verdict accept() {
            return new Verdict(true, null);
        }

        /** Accept, sending {@code privateData} (at most 196 bytes). */
        public static Verdict accept(byte[] privateData) {
            return new Verdict(true, privateData);
        }

        /** Reject, sending {@code privateData} (at most 148 bytes over RoCE; may be empty). */
        public static Verdict reject(byte[] privateData) {
            return new Verdict(false, privateData);
        }

        @Override
        public byte[] privateData() {
            return privateData.clone();
        }
    }

    /** Decides on each connection request; runs on the dispatcher thread and must not block. */
    @FunctionalInterface
    public interface RequestHandler {
        /**
         * The verdict on a request from {@code peer} that carries {@code privateData} (zero-padded
         * by the transport).
         */
        Verdict onRequest(InetSocketAddress peer, byte[] privateData);
    }

    private static final System.Logger LOG = System.getLogger(RdmaServer.class.getName());
    private static final Object CLOSED = new Object();

    /** An accepted request on its way to ESTABLISHED: its acceptor holds the deadline. */
    private record Pending(RdmaConnection connection, CmAcceptor acceptor) {
    }

    private final EventChannel channel;
    private final CmId listener;
    private final ConnectionOptions options;
    private final RequestHandler handler;
    private final int backlog;
    /** The acceptance of each request may take the connect timeout. */
    private final CmTimeouts acceptTimeouts;
    private final InetSocketAddress localAddress;
    private final LinkedBlockingQueue<Object> ready = new LinkedBlockingQueue<>();
    private final Map<CmId, Pending> pending = new HashMap<>();
    private final Thread dispatcher;
    /** The group accepted connections join, or null (each its own queues). */
    private final RdmaEndpointGroup group;
    private volatile boolean closing;
    private volatile RdmaConnectionException failure;

    private RdmaServer(InetSocketAddress local, ConnectionOptions options, int backlog, Duration connectTimeout,
                       RequestHandler handler, RdmaEndpointGroup group) throws RdmaConnectionException {
        this.group = group;
        this.options = options == null ? ConnectionOptions.DEFAULT : options;
        this.handler = handler == null ? (peer, data) -> Verdict.accept() : handler;
        this.backlog = backlog;
        this.acceptTimeouts = CmTimeouts.within(connectTimeout);
        String what = "listen on " + local;
        try {
            this.channel = EventChannel.create();
        } catch (VerbsException e) {
            throw RdmaConnectionException.of(e, what);
        }
        try {
            this.listener = channel.createId(PortSpace.TCP);
            listener.bind(local);
            listener.listen(backlog);
            this.localAddress = listener.localAddress();
        } catch (VerbsException e) {
            channel.close();
            throw RdmaConnectionException.of(e, what);
        } catch (RuntimeException e) {
            channel.close();
            throw e;
        }
        this.dispatcher = Thread.ofPlatform().daemon().name("rdma-server " + localAddress).start(this::dispatch);
    }

    /**
     * A server listening on {@code local} (an address of an RDMA device's interface, or the
     * wildcard; port 0 picks one, see {@link #localAddress()}).
     *
     * @param options        the options of the accepted connections; null for the default
     * @param backlog        how many connections may wait for {@link #accept} (and be being
     *                       established); further requests are rejected
     * @param connectTimeout how long an accepted request may take to become established
     * @param handler        decides on each request; null accepts all
     * @throws RdmaConnectionException of kind VERBS_ERROR when the address cannot be bound (e.g.
     *                                 EADDRINUSE, EADDRNOTAVAIL) or listened on
     */
    public static RdmaServer bind(InetSocketAddress local, ConnectionOptions options, int backlog, Duration connectTimeout,
                                  RequestHandler handler) throws RdmaConnectionException {
        Objects.requireNonNull(local, "local");
        if (backlog < 1) {
            throw new IllegalArgumentException("backlog must be at least 1, got " + backlog);
        }
        return new RdmaServer(local, options, backlog, Objects.requireNonNull(connectTimeout, "connectTimeout"), handler, null);
    }

    /** The server of {@link RdmaEndpointGroup#listen}. */
    static RdmaServer bindInGroup(InetSocketAddress local, RdmaEndpointGroup group, int backlog, Duration connectTimeout,
                                  RequestHandler handler) throws RdmaConnectionException {
        Objects.requireNonNull(local, "local");
        Objects.requireNonNull(group, "group");
        if (backlog < 1) {
            throw new IllegalArgumentException("backlog must be at least 1, got " + backlog);
        }
        return new RdmaServer(local, group.options(), backlog, Objects.requireNonNull(connectTimeout, "connectTimeout"), handler,
                group);
    }

    /** A server on {@code local} with default options, backlog 64, a 30 s connect timeout, accepting all. */
    public static RdmaServer bind(InetSocketAddress local) throws RdmaConnectionException {
        return bind(local, null, 64, Duration.ofSeconds(30), null);
    }

    /** The bound address (with the port chosen when bound to port 0). */
    public InetSocketAddress localAddress() {
        return localAddress;
    }

    /**
     * The next established connection, waiting up to {@code timeout}. The caller owns it.
     *
     * @throws RdmaTimeoutException    when none was established within {@code timeout}
     * @throws RdmaConnectionException of kind CLOSED when the server is (or gets) closed, of kind
     *                                 EVENT when its listener failed (e.g. DEVICE_REMOVAL)
     */
    public RdmaConnection accept(Duration timeout) throws RdmaConnectionException {
        checkUsable();
        Object next;
        try {
            next = ready.poll(Math.max(0, timeout.toNanos()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw RdmaConnectionException.closed("accept (interrupted)");
        }
        if (next == null) {
            checkUsable();
            throw new RdmaTimeoutException("accept on " + localAddress + ": no connection established within " + timeout);
        }
        if (next == CLOSED) {
            ready.offer(CLOSED);
            checkUsable();
            throw RdmaConnectionException.closed("accept");
        }
        return (RdmaConnection) next;
    }

    /** The next established connection if one is waiting, else null; never blocks. */
    public RdmaConnection tryAccept() throws RdmaConnectionException {
        checkUsable();
        Object next = ready.poll();
        if (next == CLOSED) {
            ready.offer(CLOSED);
            checkUsable();
            throw RdmaConnectionException.closed("accept");
        }
        return (RdmaConnection) next;
    }

    private void checkUsable() throws RdmaConnectionException {
        RdmaConnectionException f = failure;
        if (f != null) {
            throw f.rethrown("accept");
        }
        if (closing) {
            throw RdmaConnectionException.closed("accept");
        }
    }

    private void dispatch() {
        try {
            while (!closing) {
                channel.awaitReadable(250);
                if (closing) {
                    break;
                }
                CmEvent ev;
                while (!closing && (ev = channel.tryGetEvent()) != null) {
                    onEvent(ev);
                }
                expire();
            }
        } catch (Throwable t) {
            LOG.log(System.Logger.Level.ERROR, "RDMA server " + localAddress + " stopped", t);
            if (failure == null) {
                failure = t instanceof VerbsException v ? RdmaConnectionException.of(v, "RDMA server " + localAddress)
                        : RdmaConnectionException.failed("RDMA server " + localAddress, t);
            }
        } finally {
            for (Pending p : pending.values()) {
                p.connection().release();
            }
            pending.clear();
            List<Object> left = new ArrayList<>();
            ready.drainTo(left);
            for (Object x : left) {
                if (x instanceof RdmaConnection c) {
                    c.close();
                }
            }
            try {
                channel.close();
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.DEBUG, "closing the server channel: {0}", e.getMessage());
            }
            ready.offer(CLOSED);
        }
    }

    private void onEvent(CmEvent ev) {
        CmId id = ev.id();
        if (ev.type() == CmEventType.CONNECT_REQUEST) {
            onRequest(ev);
            return;
        }
        if (id == listener) {
            if (ev.type() == CmEventType.DEVICE_REMOVAL) {
                failure = RdmaConnectionException.of(ev, "RDMA server " + localAddress);
                closing = true;
            }
            return;
        }
        Pending p = pending.remove(id);
        if (p == null) {
            return;
        }
        try {
            p.acceptor().advance(ev);
        } catch (RdmaConnectionException | RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, "connection from {0} not established: {1}", id.peerAddress(), ev);
            p.connection().release();
            return;
        }
        if (p.acceptor().phase() != CmPhase.ESTABLISHED) {
            pending.put(id, p); // ADDR_CHANGE: still on its way
            return;
        }
        EventChannel own = null;
        try {
            own = EventChannel.create();
            id.migrate(own);
            p.connection().established(ev, own, p.acceptor().requestData());
            ready.offer(p.connection());
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "dropping an established connection: {0}", e.toString());
            p.connection().release();
            if (own != null && id.channel() != own) {
                own.close();
            }
        }
    }

    private void onRequest(CmEvent ev) {
        CmAcceptor acceptor = CmAcceptor.of(ev, acceptTimeouts);
        CmId id = acceptor.id();
        InetSocketAddress peer = acceptor.peer();
        RdmaConnection connection = null;
        try {
            if (ready.size() + pending.size() >= backlog) {
                acceptor.reject(new RejectionReason("the backlog of " + backlog + " connections is full"));
                return;
            }
            Verdict verdict;
            try {
                verdict = handler.onRequest(peer, ev.privateData());
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "request handler failed, rejecting " + peer, e);
                verdict = Verdict.reject(new byte[0]);
            }
            if (verdict == null || !verdict.accepted()) {
                acceptor.reject(verdict == null ? new byte[0] : verdict.privateData());
                return;
            }
            connection = new RdmaConnection(id, null, options, group);
            byte[] data = verdict.privateData().length > 0 ? verdict.privateData() : options.privateData();
            if (options.ackTimeout() != 0) {
                id.setAckTimeout(options.ackTimeout());
            }
            acceptor.accept(RdmaConnection.parameters(data));
            pending.put(id, new Pending(connection, acceptor));
        } catch (RdmaConnectionException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "connection request from {0} failed: {1}", peer, e.toString());
            if (!id.isClosed()) {
                try {
                    // the client learns at once why, instead of waiting for its connect timeout
                    id.reject(new RejectionReason(setUpFailure(e)).encode());
                } catch (RuntimeException ignored) {
                    // the request may be gone already
                }
            }
            if (connection != null) {
                connection.release(); // closes the id, too
            } else if (!id.isClosed()) {
                id.close();
            }
        }
    }

    /** What a rejected client is told (the reject's private data holds ~130 bytes of it): the failed verb and errno first. */
    static String setUpFailure(Exception e) {
        if (e instanceof RdmaConnectionException r && r.getCause() instanceof VerbsException v) {
            e = v; // rdma_accept's failure, through the acceptor
        }
        String what = e instanceof VerbsException v ? v.verb() + " " + v.errnoName()
                + (e.getMessage().lastIndexOf(": ") > 0 ? " (" + e.getMessage().substring(e.getMessage().lastIndexOf(": ") + 2) + ")" : "")
                : String.valueOf(e.getMessage() != null ? e.getMessage() : e);
        return "the server could not set up the connection: " + what;
    }

    private void expire() {
        if (pending.isEmpty()) {
            return;
        }
        pending.entrySet().removeIf(e -> {
            try {
                e.getValue().acceptor().checkTimeout();
                return false;
            } catch (RdmaConnectionException timedOut) {
                LOG.log(System.Logger.Level.DEBUG, "connection from {0} not established: {1}", e.getKey().peerAddress(),
                        timedOut.getMessage());
                e.getValue().connection().release();
                return true;
            }
        });
    }

    /**
     * Stops listening, frees the connections not yet accepted, and wakes callers blocked in
     * {@link #accept} (they get a CLOSED exception). Accepted connections stay open. Idempotent.
     */
    @Override
    public void close() {
        if (closing && !dispatcher.isAlive()) {
            return;
        }
        closing = true;
        // every later sleep on the channel returns at once; ignored once the dispatcher closed it
        channel.wake();
        try {
            dispatcher.join(TimeUnit.SECONDS.toMillis(30));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String toString() {
        return "RdmaServer " + localAddress;
    }
}
