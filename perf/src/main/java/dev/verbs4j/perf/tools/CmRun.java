package dev.verbs4j.perf.tools;

import dev.verbs4j.perf.tools.PerfOptions.Kind;
import dev.verbs4j.perf.tools.PerfOptions.Verb;
import dev.verbs4j.rdmacm.CmEvent;
import dev.verbs4j.rdmacm.CmEventType;
import dev.verbs4j.rdmacm.CmId;
import dev.verbs4j.rdmacm.ConnectionParameters;
import dev.verbs4j.rdmacm.EventChannel;
import dev.verbs4j.rdmacm.PortSpace;
import dev.verbs4j.rdmacm.UdParameters;
import dev.verbs4j.tools.ToolExit;
import dev.verbs4j.verbs.AddressHandle;
import dev.verbs4j.verbs.Closeables;
import dev.verbs4j.verbs.QueuePair;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The {@code -R} mode of the perftest tools, as perftest 4.5 runs it: the control messages travel
 * as SENDs of at most 56 bytes on an RDMA CM connection ({@link CmControlChannel}), the queue-pair
 * descriptions in their binary form, and the test queue pairs are connected by RDMA CM on the same
 * port between two all-zero key exchanges. There is no TCP and no "done". UD test queue pairs
 * use the UDP port space: the client learns the server's address from the connection manager, and
 * in the latency test (and -b) tells the server its own with a SEND with immediate
 * ({@link CmDatagram}). Owns its event channels, ids and the control connection;
 * {@link #close()} frees them.
 */
final class CmRun implements AutoCloseable {

    private static final Duration RESOLVE = Duration.ofMillis(2000);
    private static final Duration SLICE = Duration.ofMillis(200);
    private static final int ATTEMPTS = 10;
    /** How long a side waits for its peer to end a connection at the end of the run. */
    private static final Duration PEER_END = Duration.ofSeconds(10);
    private static final System.Logger LOG = System.getLogger(CmRun.class.getName());

    private final Perftest t;
    private final PerfOptions o;
    private EventChannel commChannel;
    private EventChannel testChannel;
    private CmId testListener;
    private final List<CmId> testIds = new ArrayList<>();
    private CmControlChannel comm;

    private CmRun(Perftest t) {
        this.t = t;
        this.o = t.o;
    }

    /** Runs the tool in -R mode; returns the exit status. */
    static int run(Perftest t) throws ToolExit {
        CmRun cm = new CmRun(t);
        t.cm = cm;
        return cm.execute();
    }

    /**
     * -z without -R: the control messages over RDMA CM as with -R, the test queue pairs those of
     * {@code -d}, connected by hand (INIT, RTR, RTS) from the exchanged descriptions as over TCP.
     */
    static int runControlOnly(Perftest t) throws ToolExit {
        CmRun cm = new CmRun(t);
        t.cm = cm;
        try {
            cm.commChannel = EventChannel.create();
        } catch (RuntimeException e) {
            throw t.exit("Failed to create RDMA CM event channel.", 1);
        }
        if (!t.o.isClient()) {
            t.out.print("\n************************************\n");
            t.out.print("* Waiting for client to connect... *\n");
            t.out.print("************************************\n");
        }
        cm.comm = t.o.isClient() ? cm.connectComm() : cm.acceptComm();
        t.keys().use(cm.comm);
        t.keys().prefix();
        t.createResources(false);
        t.out.print(PerfOutput.header(t.o, t.resources().headerInfo()));
        return t.sequence();
    }

    private int execute() throws ToolExit {
        try {
            commChannel = EventChannel.create();
            testChannel = EventChannel.create();
        } catch (RuntimeException e) {
            throw t.exit("Failed to create RDMA CM event channel.", 1);
        }
        if (!o.isClient()) {
            t.out.print("\n************************************\n");
            t.out.print("* Waiting for client to connect... *\n");
            t.out.print("************************************\n");
        }
        comm = o.isClient() ? connectComm() : acceptComm();
        if (!o.isClient()) {
            // perftest's server listens for the test queue pairs only after the first all-zero
            // exchange, and a C client whose first test connect is rejected cannot recover (its
            // retry reuses the ids and channel it has just destroyed, and hangs): listening before
            // that exchange leaves no window for the client to be early
            listenForTestQps();
        }
        t.keys().use(comm);
        t.device().useContext(comm.id.context());
        t.keys().prefix();
        t.createResources(true);
        zeroKey();
        if (o.isClient()) {
            connectTestQps();
        } else {
            acceptTestQps();
        }
        zeroKey();
        t.out.print(PerfOutput.header(o, t.resources().headerInfo()));
        return t.sequence();
    }

    private void zeroKey() throws ToolExit {
        try {
            comm.exchange(new byte[CmControlChannel.MESSAGE]);
        } catch (IOException e) {
            throw t.exit("Failed to sync between client and server around the RDMA CM connection.", 1);
        }
    }

    private ConnectionParameters parameters() {
        return parameters(0);
    }

    private ConnectionParameters parameters(int qpNum) {
        int reads = o.verb == Verb.READ || o.verb == Verb.ATOMIC ? Math.min(255, t.device().ownOutReads()) : 0;
        return new ConnectionParameters(new byte[0], reads, reads, false, o.retryCount, 7, false, qpNum);
    }

    /** The port space of the test queue pairs (the control connection is always TCP). */
    private PortSpace testSpace() {
        return o.isUd() ? PortSpace.UDP : PortSpace.TCP;
    }

    /** UD: whether the client sends the server its QPN (perftest: the latency tests and -b). */
    private boolean qpnMessage() {
        return o.isUd() && (o.kind == Kind.LAT || o.duplex);
    }

    private InetSocketAddress serverAddress() throws ToolExit {
        try {
            return new InetSocketAddress(InetAddress.getByName(o.serverName), o.tcpPort);
        } catch (IOException e) {
            throw t.exit("Couldn't resolve " + o.serverName, 1);
        }
    }

    private InetSocketAddress sourceAddress(int port) throws ToolExit {
        if (o.sourceIp == null) {
            if (o.isClient()) {
                return null;
            }
            try {
                return new InetSocketAddress(InetAddress.getByName("0.0.0.0"), port);
            } catch (IOException e) {
                throw t.exit("Couldn't bind to port " + port, 1);
            }
        }
        try {
            return new InetSocketAddress(InetAddress.getByName(o.sourceIp), port);
        } catch (IOException e) {
            throw t.exit("Couldn't resolve " + o.sourceIp, 1);
        }
    }

    /** A new id with address and route to the server resolved; null after an error event. */
    private CmId resolved(EventChannel ch, PortSpace space) throws ToolExit {
        CmId id = ch.createId(space);
        try {
            id.resolveAddress(sourceAddress(0), serverAddress(), RESOLVE);
            if (await(ch, id).type() != CmEventType.ADDR_RESOLVED) {
                id.close();
                return null;
            }
            if (o.tos >= 0) {
                id.setTypeOfService(o.tos);
            }
            id.resolveRoute(RESOLVE);
            if (await(ch, id).type() != CmEventType.ROUTE_RESOLVED) {
                id.close();
                return null;
            }
            return id;
        } catch (RuntimeException e) {
            id.close();
            return null;
        }
    }

    /** The next event of {@code ch} (for {@code id} when given), waiting interruptibly. */
    private CmEvent await(EventChannel ch, CmId id) throws ToolExit {
        while (true) {
            CmEvent ev = ch.getEvent(SLICE);
            if (ev == null) {
                if (Thread.currentThread().isInterrupted()) {
                    throw t.exit(" Interrupted while waiting for an RDMA CM event", 1);
                }
                continue;
            }
            if (id == null || ev.id() == id || ev.listener() == id) {
                return ev;
            }
        }
    }

    /**
     * The control connection, as perftest's client makes it: address and route resolution are
     * retried, the connect is not: any outcome but ESTABLISHED (a REJECTED when nobody listens)
     * ends the run.
     */
    private CmControlChannel connectComm() throws ToolExit {
        InetSocketAddress server;
        try {
            server = new InetSocketAddress(InetAddress.getByName(o.serverName), o.tcpPort);
        } catch (java.net.UnknownHostException e) {
            t.err.print(KeyExchange.nameResolutionError(e, o.serverName) + " for " + o.serverName + ":" + o.tcpPort + "\n");
            throw clientFailed("Problem in resolving basic address and port");
        }
        CmId id = commChannel.createId(PortSpace.TCP);
        // perftest: an ADDR_ERROR or ROUTE_ERROR is retried at once, ten in all; anything else ends the run
        InetSocketAddress source = sourceAddress(0);
        int left = resolveStep(id, () -> id.resolveAddress(source, server, RESOLVE), "rdma_resolve_addr failed",
                CmEventType.ADDR_ERROR, CmEventType.ADDR_RESOLVED, ATTEMPTS, "Received " + ATTEMPTS + " times ADDR_ERROR");
        if (o.tos >= 0) {
            id.setTypeOfService(o.tos);
        }
        resolveStep(id, () -> id.resolveRoute(RESOLVE), "rdma_resolve_route failed", CmEventType.ROUTE_ERROR,
                CmEventType.ROUTE_RESOLVED, left, "Received " + ATTEMPTS + " times ADDR_ERROR - aborting");
        CmControlChannel c = new CmControlChannel(id, t);
        try {
            id.connect(parameters());
        } catch (RuntimeException e) {
            c.close();
            t.err.print("Function rdma_connect failed\n");
            t.err.print(" Unable to perform rdma_client function\n");
            throw t.exit(" Unable to init the socket connection", 1);
        }
        CmEvent ev = await(commChannel, id);
        if (ev.type() != CmEventType.ESTABLISHED) {
            c.close();
            t.err.print("Unexpected CM event bl blka " + ev.type().code() + "\n");
            t.err.print(" Unable to perform rdma_client function\n");
            throw t.exit(" Unable to init the socket connection", 1);
        }
        return c;
    }

    /**
     * One resolution step of {@link #connectComm}: {@code step} (rdma_resolve_addr or _route) until
     * its event is {@code done}, again at once after each {@code retry} event while any of the
     * {@code left} attempts remain. On failure closes {@code id} and ends the run with perftest's
     * messages ({@code stepFailed} when the call throws, {@code exhausted} after the last attempt);
     * returns the attempts left.
     */
    private int resolveStep(CmId id, Runnable step, String stepFailed, CmEventType retry, CmEventType done, int left,
                            String exhausted) throws ToolExit {
        while (true) {
            if (left <= 0) {
                id.close();
                throw clientFailed(exhausted);
            }
            try {
                step.run();
            } catch (RuntimeException e) {
                id.close();
                throw clientFailed(stepFailed);
            }
            CmEvent ev = await(commChannel, id);
            if (ev.type() == retry) {
                left--;
                continue;
            }
            if (ev.type() != done) {
                id.close();
                throw clientFailed("unexpected CM event " + ev.type().code());
            }
            return left;
        }
    }

    /** perftest's end of a failed control connection: {@code message}, then its two closing lines. */
    private ToolExit clientFailed(String message) {
        t.err.print(message + "\n");
        t.err.print(" Unable to perform rdma_client function\n");
        return t.exit(" Unable to init the socket connection", 1);
    }

    private CmControlChannel acceptComm() throws ToolExit {
        CmId listener = commChannel.createId(PortSpace.TCP);
        try {
            listener.bind(sourceAddress(o.tcpPort));
            listener.listen(o.numQps);
        } catch (RuntimeException e) {
            listener.close();
            throw t.exit(" Unable to init the socket connection", 1);
        }
        try {
            while (true) {
                CmEvent ev = await(commChannel, null);
                if (ev.type() == CmEventType.CONNECT_REQUEST) {
                    CmControlChannel c = new CmControlChannel(ev.id(), t);
                    ev.id().accept(parameters());
                    return c;
                }
            }
        } finally {
            listener.close();
        }
    }

    private void connectTestQps() throws ToolExit {
        for (int i = 0; i < o.numQps; i++) {
            boolean done = false;
            for (int attempt = 0; attempt < ATTEMPTS && !done; attempt++) {
                CmId id = resolved(testChannel, testSpace());
                if (id == null) {
                    sleep();
                    continue;
                }
                QueuePair qp;
                try {
                    qp = id.createQueuePair(t.resources().pd(), t.resources().qpInit());
                } catch (RuntimeException e) {
                    id.close();
                    throw t.exit(" Unable to create QP.", 1);
                }
                id.connect(parameters());
                CmEvent ev = await(testChannel, id);
                if (ev.type() == CmEventType.ESTABLISHED) {
                    testIds.add(id);
                    t.resources().createQp(i, qp);
                    if (o.isUd()) {
                        datagramPeer(i, ev.datagram());
                        if (qpnMessage()) {
                            t.datagrams().sendQpn(i);
                        }
                    }
                    done = true;
                } else {
                    id.close();
                    sleep();
                }
            }
            if (!done) {
                throw t.exit("Failed to create RDMA CM connection.", 1);
            }
        }
    }

    /** UD: the server's address as the client's ESTABLISHED event gives it. */
    private void datagramPeer(int i, UdParameters ud) throws ToolExit {
        if (ud == null) {
            throw t.exit("Failed to create AH for RDMA CM connection.", 1);
        }
        AddressHandle ah;
        try {
            ah = t.resources().pd().createAddressHandle(ud.destination());
        } catch (RuntimeException e) {
            throw t.exit("Failed to create AH for RDMA CM connection.", 1);
        }
        t.resources().datagramPeer(i, ah, ud.qpNum(), ud.qkey());
    }

    private void listenForTestQps() throws ToolExit {
        testListener = testChannel.createId(testSpace());
        try {
            testListener.bind(sourceAddress(o.tcpPort));
            testListener.listen(o.numQps);
        } catch (RuntimeException e) {
            testListener.close();
            testListener = null;
            throw t.exit("Failed to create RDMA CM connection.", 1);
        }
    }

    private void acceptTestQps() throws ToolExit {
        try {
            int i = 0;
            while (i < o.numQps) {
                CmEvent ev = await(testChannel, null);
                if (ev.type() != CmEventType.CONNECT_REQUEST) {
                    continue;
                }
                CmId id = ev.id();
                testIds.add(id);
                QueuePair qp;
                try {
                    qp = id.createQueuePair(t.resources().pd(), t.resources().qpInit());
                } catch (RuntimeException e) {
                    throw t.exit(" Unable to create QP.", 1);
                }
                t.resources().createQp(i, qp);
                if (qpnMessage()) {
                    t.datagrams().postQpnReceive(i);
                }
                id.accept(parameters(o.isUd() ? qp.qpNum() : 0));
                if (qpnMessage()) {
                    // the Q_Key is this side's own: librdmacm gives every UDP-space queue pair the same
                    t.datagrams().peerFromQpnMessage(i, id.portNumber(), CmId.UDP_QKEY);
                }
                i++;
            }
        } finally {
            testListener.close();
            testListener = null;
        }
    }

    private void sleep() throws ToolExit {
        try {
            Thread.sleep(100);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw t.exit(" Interrupted", 1);
        }
    }

    /**
     * The first step of the tear-down, as perftest ends a run: both sides disconnect the RC test
     * ids (UD ids have no connection), and the client waits for their DISCONNECTED (a C server
     * answers the client's DREQ only after its last exchange). The control connection is not
     * disconnected (perftest never does; its id ends with the process): rxe posts a receive's
     * completion before it sends the acknowledgement, a queue pair moved to the error state in
     * between drops that acknowledgement, and the C peer then repeats its last message for ever
     * (perftest's retry count 7, which rxe takes for no limit), hung after its last line. So the
     * server also keeps the control queue pair until the client has ended the control connection.
     */
    void disconnect() {
        List<CmId> connected = o.isUd() ? List.of() : testIds;
        for (CmId id : connected) {
            try {
                id.disconnect();
            } catch (RuntimeException ignored) {
                // the peer may have gone first
            }
        }
        if (o.isClient()) {
            awaitDisconnected(testChannel, connected);
        } else if (comm != null) {
            awaitDisconnected(commChannel, List.of(comm.id));
        }
    }

    /** Takes the events of {@code ch} until each of {@code ids} saw DISCONNECTED, for at most {@link #PEER_END}. */
    private static void awaitDisconnected(EventChannel ch, List<CmId> ids) {
        Set<CmId> left = new HashSet<>(ids);
        long deadline = System.nanoTime() + PEER_END.toNanos();
        while (!left.isEmpty() && System.nanoTime() - deadline < 0 && !Thread.currentThread().isInterrupted()) {
            CmEvent ev;
            try {
                ev = ch.getEvent(SLICE);
            } catch (IllegalStateException e) {
                return; // closed under us: nothing left to wait for
            }
            if (ev != null && ev.type() == CmEventType.DISCONNECTED) {
                left.remove(ev.id());
            }
        }
    }

    @Override
    public void close() {
        Closeables.closeLogged(LOG, testListener);
        Closeables.closeLogged(LOG, testIds.toArray(AutoCloseable[]::new));
        Closeables.closeLogged(LOG, comm, testChannel, commChannel);
    }
}
