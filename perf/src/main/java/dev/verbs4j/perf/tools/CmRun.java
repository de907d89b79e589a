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
import dev.verbs4j.verbs.Access;
import dev.verbs4j.verbs.AddressHandle;
import dev.verbs4j.verbs.CompletionQueue;
import dev.verbs4j.verbs.MemoryRegion;
import dev.verbs4j.verbs.Opcode;
import dev.verbs4j.verbs.ProtectionDomain;
import dev.verbs4j.verbs.QpType;
import dev.verbs4j.verbs.QueuePair;
import dev.verbs4j.verbs.QueuePairInit;
import dev.verbs4j.verbs.ReceiveRequests;
import dev.verbs4j.verbs.SendFlags;
import dev.verbs4j.verbs.SendRequests;
import dev.verbs4j.verbs.WorkCompletion;
import dev.verbs4j.verbs.WorkCompletions;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The {@code -R} mode of the perftest tools, as perftest 4.5 runs it: the control messages travel
 * as SENDs of at most 56 bytes on an RDMA CM connection ({@link Comm}), the queue-pair
 * descriptions in their binary form, and the test queue pairs are connected by RDMA CM on the same
 * port between two all-zero key exchanges. There is no TCP and no "done". UD test queue pairs
 * use the UDP port space: the client learns the server's address from the connection manager, and
 * in the latency test (and -b) tells the server its own with a SEND with immediate. Owns its event
 * channels, ids and the control connection's verbs objects; {@link #close()} frees them.
 */
final class CmRun implements AutoCloseable {

    private static final Duration RESOLVE = Duration.ofMillis(2000);
    private static final Duration SLICE = Duration.ofMillis(200);
    private static final int MESSAGE = Wire.BINARY;
    private static final int RECV_WRID = 5;
    private static final int SEND_WRID = 6;
    private static final int ATTEMPTS = 10;

    private final Perftest t;
    private final PerfOptions o;
    private EventChannel commChannel;
    private EventChannel testChannel;
    private CmId testListener;
    private final List<CmId> testIds = new ArrayList<>();
    private Comm comm;

    private CmRun(Perftest t) {
        this.t = t;
        this.o = t.o;
    }

    /** Runs the tool in -R mode; returns the exit status. */
    static int run(Perftest t) throws Perftest.Exit {
        CmRun cm = new CmRun(t);
        t.cm = cm;
        return cm.execute();
    }

    private int execute() throws Perftest.Exit {
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
        t.setChannel(comm);
        t.useContext(comm.id.context());
        t.prefix();
        t.createResources(true);
        zeroKey();
        if (o.isClient()) {
            connectTestQps();
        } else {
            acceptTestQps();
        }
        zeroKey();
        t.out.print(PerfOutput.header(o, t.headerInfo()));
        return t.sequence();
    }

    private void zeroKey() throws Perftest.Exit {
        try {
            comm.exchange(new byte[MESSAGE]);
        } catch (IOException e) {
            throw t.exit("Failed to sync between client and server around the RDMA CM connection.", 1);
        }
    }

    private ConnectionParameters parameters() {
        return parameters(0);
    }

    private ConnectionParameters parameters(int qpNum) {
        int reads = o.verb == Verb.READ || o.verb == Verb.ATOMIC ? Math.min(255, t.ownOutReads()) : 0;
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

    private InetSocketAddress serverAddress() throws Perftest.Exit {
        try {
            return new InetSocketAddress(InetAddress.getByName(o.serverName), o.tcpPort);
        } catch (IOException e) {
            throw t.exit("Couldn't resolve " + o.serverName, 1);
        }
    }

    private InetSocketAddress sourceAddress(int port) throws Perftest.Exit {
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
    private CmId resolved(EventChannel ch, PortSpace space) throws Perftest.Exit {
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
    private CmEvent await(EventChannel ch, CmId id) throws Perftest.Exit {
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
    private Comm connectComm() throws Perftest.Exit {
        CmId id = null;
        for (int attempt = 0; attempt < ATTEMPTS && id == null; attempt++) {
            id = resolved(commChannel, PortSpace.TCP);
            if (id == null) {
                sleep();
            }
        }
        if (id == null) {
            t.err.print(" Unable to perform rdma_client function\n");
            throw t.exit(" Unable to init the socket connection", 1);
        }
        Comm c = new Comm(id);
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

    private Comm acceptComm() throws Perftest.Exit {
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
                    Comm c = new Comm(ev.id());
                    ev.id().accept(parameters());
                    return c;
                }
            }
        } finally {
            listener.close();
        }
    }

    private void connectTestQps() throws Perftest.Exit {
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
                    qp = id.createQueuePair(t.pd(), t.qpInit());
                } catch (RuntimeException e) {
                    id.close();
                    throw t.exit(" Unable to create QP.", 1);
                }
                id.connect(parameters());
                CmEvent ev = await(testChannel, id);
                if (ev.type() == CmEventType.ESTABLISHED) {
                    testIds.add(id);
                    t.createQp(i, qp);
                    if (o.isUd()) {
                        datagramPeer(i, ev.datagram());
                        if (qpnMessage()) {
                            t.sendQpn(i);
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
    private void datagramPeer(int i, UdParameters ud) throws Perftest.Exit {
        if (ud == null) {
            throw t.exit("Failed to create AH for RDMA CM connection.", 1);
        }
        AddressHandle ah;
        try {
            ah = t.pd().createAddressHandle(ud.destination());
        } catch (RuntimeException e) {
            throw t.exit("Failed to create AH for RDMA CM connection.", 1);
        }
        t.datagramPeer(i, ah, ud.qpNum(), ud.qkey());
    }

    private void listenForTestQps() throws Perftest.Exit {
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

    private void acceptTestQps() throws Perftest.Exit {
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
                    qp = id.createQueuePair(t.pd(), t.qpInit());
                } catch (RuntimeException e) {
                    throw t.exit(" Unable to create QP.", 1);
                }
                t.createQp(i, qp);
                if (qpnMessage()) {
                    t.postQpnReceive(i);
                }
                id.accept(parameters(o.isUd() ? qp.qpNum() : 0));
                if (qpnMessage()) {
                    // the Q_Key is this side's own: librdmacm gives every UDP-space queue pair the same
                    t.peerFromQpnMessage(i, id.portNumber(), CmId.UDP_QKEY);
                }
                i++;
            }
        } finally {
            testListener.close();
            testListener = null;
        }
    }

    private void sleep() throws Perftest.Exit {
        try {
            Thread.sleep(100);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw t.exit(" Interrupted", 1);
        }
    }

    /** Disconnects the test and control connections (first step of the tear-down). */
    void disconnect() {
        // perftest does not disconnect UD ids (there is no connection to end)
        for (CmId id : o.isUd() ? List.<CmId>of() : testIds) {
            try {
                id.disconnect();
            } catch (RuntimeException ignored) {
                // the peer may have gone first
            }
        }
        if (comm != null) {
            try {
                comm.id.disconnect();
            } catch (RuntimeException ignored) {
                // as above
            }
        }
    }

    @Override
    public void close() {
        if (testListener != null) {
            Perftest.closeQuietly(testListener);
        }
        for (CmId id : testIds) {
            Perftest.closeQuietly(id);
        }
        if (comm != null) {
            comm.close();
        }
        Perftest.closeQuietly(testChannel);
        Perftest.closeQuietly(commChannel);
    }

    /**
     * The control connection: an RC queue pair with one 56-byte receive always posted; every
     * message is one signaled SEND.
     */
    private final class Comm implements Wire.Channel {

        private static final long LAST_SEND_GRACE_NANOS = 10_000_000_000L;

        final CmId id;
        private final ProtectionDomain pd;
        private final CompletionQueue sendCq;
        private final CompletionQueue recvCq;
        private final MemoryRegion mr;
        private final SendRequests send = new SendRequests(1, 1);
        private final ReceiveRequests recv = new ReceiveRequests(1, 1);
        private final WorkCompletions wcs = new WorkCompletions(1);

        Comm(CmId id) throws Perftest.Exit {
            this.id = id;
            try {
                pd = id.context().allocateProtectionDomain();
                sendCq = id.context().createCompletionQueue(1);
                recvCq = id.context().createCompletionQueue(1);
                mr = pd.allocateRegion(4096, Access.LOCAL_WRITE);
                id.createQueuePair(pd, QueuePairInit.of(QpType.RC, sendCq, recvCq).maxSendWr(1).maxRecvWr(1)
                        .maxSendSge(1).maxRecvSge(1).maxInlineData(0));
                recv.get(0).wrId(RECV_WRID).sge(mr, 0, MESSAGE);
                id.queuePair().postReceive(recv, 1);
            } catch (RuntimeException e) {
                throw t.exit("Failed to create the RDMA CM control resources: " + e.getMessage(), 1);
            }
        }

        @Override
        public byte[] exchange(byte[] mine) throws IOException {
            if (o.isClient()) {
                send(mine);
                return receive(mine.length);
            }
            byte[] theirs = receive(mine.length);
            send(mine);
            return theirs;
        }

        @Override
        public byte[] lastExchange(byte[] mine) throws IOException {
            if (o.isClient()) {
                return exchange(mine);
            }
            byte[] theirs = receive(mine.length);
            post(mine);
            // the client closes once it has this answer; if the acknowledgement is lost with its
            // queue pair, the completion may never come: the answer was sent, so stop waiting
            await(sendCq, System.nanoTime() + LAST_SEND_GRACE_NANOS);
            return theirs;
        }

        private void send(byte[] data) throws IOException {
            post(data);
            await(sendCq);
        }

        private void post(byte[] data) throws IOException {
            MemorySegment s = mr.segment();
            s.asSlice(1024, data.length).copyFrom(MemorySegment.ofArray(data));
            send.reset(0).wrId(SEND_WRID).opcode(Opcode.SEND).flags(SendFlags.SIGNALED).sge(mr, 1024, data.length);
            try {
                id.queuePair().postSend(send, 1);
            } catch (RuntimeException e) {
                throw new IOException("Couldn't post send on the RDMA CM control connection", e);
            }
        }

        private byte[] receive(int n) throws IOException {
            await(recvCq);
            byte[] b = new byte[n];
            MemorySegment.copy(mr.segment(), java.lang.foreign.ValueLayout.JAVA_BYTE, 0, b, 0, n);
            try {
                id.queuePair().postReceive(recv, 1);
            } catch (RuntimeException e) {
                throw new IOException("Couldn't post receive on the RDMA CM control connection", e);
            }
            return b;
        }

        private void await(CompletionQueue cq) throws IOException {
            await(cq, Long.MAX_VALUE);
        }

        /** Spins for one completion; returns without one at {@code deadline} (System.nanoTime). */
        private void await(CompletionQueue cq, long deadline) throws IOException {
            int spins = 0;
            while (true) {
                int n;
                try {
                    n = cq.poll(wcs);
                } catch (RuntimeException e) {
                    throw new IOException("poll failed", e);
                }
                if (n > 0) {
                    WorkCompletion wc = wcs.get(0);
                    if (!wc.isSuccess()) {
                        throw new Wire.ProtocolException("control message failed: " + wc.status());
                    }
                    return;
                }
                if ((++spins & 0x3ff) == 0) {
                    if (Thread.currentThread().isInterrupted()) {
                        throw new InterruptedIOException("interrupted while waiting for the peer");
                    }
                    if (deadline != Long.MAX_VALUE && System.nanoTime() - deadline > 0) {
                        return;
                    }
                    Thread.onSpinWait();
                }
            }
        }

        @Override
        public void finish(boolean sayDone) {
            // no "done" over RDMA CM; the connections end in close()
        }

        @Override
        public void close() {
            Perftest.closeQuietly(id);
            Perftest.closeQuietly(mr);
            Perftest.closeQuietly(sendCq);
            Perftest.closeQuietly(recvCq);
            Perftest.closeQuietly(pd);
            Perftest.closeQuietly(send);
            Perftest.closeQuietly(recv);
            Perftest.closeQuietly(wcs);
        }
    }
}
