package dev.verbs4j.rdmacm;

import dev.verbs4j.verbs.VerbsException;
import dev.verbs4j.verbs.event.Readiness;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A listening RDMA endpoint, the server socket of this library: it binds a connection manager id
 * to an address, listens, and hands out established {@link RdmaConnection}s through {@link
 * #accept}.
 *
 * <p>No thread waits for the events of the server's own {@link EventChannel}: once the channel
 * is readable, a virtual thread of the readiness poller of verbs takes every pending event in
 * order (a turn), then watches the channel again; turns never overlap (the thread that times out
 * accepted requests takes its turns too, below). For each connection
 * request a turn asks the {@link RequestHandler} (accept all by default), creates the
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
 * <p>The server owns its listening id, its event channel, the watch on it, and the connections
 * not yet accepted; {@link #close()} cancels the watch (or waits for the turn that runs), frees
 * them and wakes callers blocked in {@link #accept}. Accepted connections belong to the caller
 * and outlive the server. While accepted requests are on their way to ESTABLISHED, one virtual
 * thread sleeps until the earliest of their connect timeouts, to time them out when no event
 * comes.
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

    /**
     * Decides on each connection request; runs in the server's turn (on the virtual thread that
     * runs the turn, one request at a time, in order) and must not block: the server takes no
     * other event meanwhile.
     */
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
    private static final long NO_TIMEOUT = Long.MAX_VALUE;

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
    /** The group accepted connections join, or null (each its own queues). */
    private final RdmaEndpointGroup group;
    /** Guards the fields below it; a turn takes it only to begin and to end, never while it handles events. */
    private final ReentrantLock lock = new ReentrantLock();
    /** Signalled when a turn ends and when the server is torn down. */
    private final Condition changed = lock.newCondition();
    /** The pending watch on the channel, or null (its task is starting, a turn runs, or the server stopped). */
    private Readiness.Watch watch;
    /** The thread that runs a turn now (the only one that touches {@link #pending}), or null. */
    private Thread turn;
    /** The virtual thread that sleeps until {@link #timeoutAt}, or null. */
    private Thread timer;
    /** When the earliest accepted request times out (System.nanoTime), or {@link #NO_TIMEOUT}. */
    private long timeoutAt = NO_TIMEOUT;
    /** Someone has taken on the teardown (no turn starts any more); {@link #tornDown}: it is done. */
    private boolean stopped;
    private boolean tornDown;
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
        lock.lock(); // the watch's task waits until the server is made
        try {
            this.listener = channel.createId(PortSpace.TCP);
            listener.bind(local);
            listener.listen(backlog);
            this.localAddress = listener.localAddress();
            watch = channel.whenReadable(this::onReadable);
        } catch (VerbsException e) {
            channel.close();
            throw RdmaConnectionException.of(e, what);
        } catch (RuntimeException e) {
            channel.close();
            throw e;
        } finally {
            lock.unlock();
        }
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

    /** The watch's task, once the channel is readable: a turn. */
    private void onReadable() {
        lock.lock();
        try {
            watch = null;
            if (stopped) {
                changed.signalAll();
                return;
            }
            turn = Thread.currentThread();
        } finally {
            lock.unlock();
        }
        runTurn();
    }

    /**
     * Takes the pending events in order and times out the accepted requests whose connect
     * timeout has passed; then watches the channel again, or, once the server is closing or
     * failed, tears it down. The caller has set {@link #turn} to itself.
     */
    private void runTurn() {
        boolean stop = false;
        try {
            CmEvent ev;
            while (!closing && (ev = channel.tryGetEvent()) != null) {
                onEvent(ev);
            }
            if (!closing) {
                expire();
            }
        } catch (Throwable t) {
            fail(t);
            stop = true;
        }
        lock.lock();
        try {
            if (!stop && !closing) {
                try {
                    scheduleTimeoutsLocked();
                    watch = channel.whenReadable(this::onReadable);
                } catch (Throwable t) {
                    fail(t);
                    stop = true;
                }
            }
            turn = null;
            if (stop || closing) {
                stop = !stopped; // unless close() took the teardown on (it cannot while a turn runs)
                stopped = true;
            }
            changed.signalAll();
        } finally {
            lock.unlock();
        }
        if (stop) {
            tearDown();
        }
    }

    private void fail(Throwable t) {
        LOG.log(System.Logger.Level.ERROR, "RDMA server " + localAddress + " stopped", t);
        if (failure == null) {
            failure = t instanceof VerbsException v ? RdmaConnectionException.of(v, "RDMA server " + localAddress)
                    : RdmaConnectionException.failed("RDMA server " + localAddress, t);
        }
    }

    /**
     * At the end of a turn: has the timer sleep until the earliest connect timeout of the
     * accepted requests, or end when there are none. The timeouts need a wake-up of their own
     * only when no event comes (a turn checks them after its events): rather than poll, one
     * virtual thread sleeps until the earliest deadline, and only while requests are pending;
     * then it takes a turn of its own (with the watch taken back), so that one thread at a time
     * handles the server's requests.
     */
    private void scheduleTimeoutsLocked() {
        long earliest = NO_TIMEOUT;
        long now = System.nanoTime();
        for (Pending p : pending.values()) {
            long left = p.acceptor().remainingNanos();
            if (left != Long.MAX_VALUE) {
                long at = now + Math.max(0, left);
                earliest = earliest == NO_TIMEOUT || at - earliest < 0 ? at : earliest;
            }
        }
        timeoutAt = earliest;
        if (timer != null) {
            LockSupport.unpark(timer); // it looks at the new deadline (or ends)
        } else if (earliest != NO_TIMEOUT) {
            timer = Thread.ofVirtual().name("rdma-server timeouts " + localAddress).start(this::awaitTimeouts);
        }
    }

    /** The timer: sleeps until {@link #timeoutAt}, then takes a turn unless one runs or is starting. */
    private void awaitTimeouts() {
        while (true) {
            long left;
            lock.lock();
            try {
                if (stopped || closing || timeoutAt == NO_TIMEOUT) {
                    timer = null;
                    return;
                }
                left = timeoutAt - System.nanoTime();
                if (left <= 0) {
                    timer = null;
                    // a turn that runs or is starting checks the timeouts at its end and schedules anew
                    if (turn != null || watch == null || !watch.cancel()) {
                        return;
                    }
                    watch = null;
                    turn = Thread.currentThread();
                }
            } finally {
                lock.unlock();
            }
            if (left <= 0) {
                runTurn();
                return;
            }
            LockSupport.parkNanos(this, left);
        }
    }

    /** Frees what the server holds; once, when no turn runs and none can start. */
    private void tearDown() {
        try {
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
        } finally {
            ready.offer(CLOSED);
            lock.lock();
            try {
                tornDown = true;
                changed.signalAll();
                if (timer != null) {
                    LockSupport.unpark(timer); // it ends
                }
            } finally {
                lock.unlock();
            }
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
     * {@link #accept} (they get a CLOSED exception). Accepted connections stay open. Idempotent;
     * returns once the server is closed: it cancels the watch on the channel, or waits for the
     * turn that runs (up to 30 s; a turn that takes longer closes the server when it ends, as
     * does one whose request handler called this).
     */
    @Override
    public void close() {
        closing = true;
        boolean interrupted = false;
        boolean tearDown = false;
        lock.lock();
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (true) {
                if (watch != null && watch.cancel()) {
                    watch = null;
                }
                if (turn == Thread.currentThread()) {
                    return;
                }
                if (watch == null && turn == null && (!stopped || tornDown)) {
                    break;
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return;
                }
                try {
                    changed.awaitNanos(left);
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            if (!stopped) {
                stopped = true;
                tearDown = true;
            }
        } finally {
            lock.unlock();
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        if (tearDown) {
            tearDown();
        }
    }

    @Override
    public String toString() {
        return "RdmaServer " + localAddress;
    }
}
