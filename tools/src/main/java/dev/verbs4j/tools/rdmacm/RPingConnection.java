package dev.verbs4j.tools.rdmacm;

import dev.verbs4j.rdmacm.CmConnector;
import dev.verbs4j.rdmacm.CmId;
import dev.verbs4j.rdmacm.ConnectionParameters;
import dev.verbs4j.verbs.CompletionChannel;
import dev.verbs4j.verbs.CompletionQueue;
import dev.verbs4j.verbs.Context;
import dev.verbs4j.verbs.MemoryRegion;
import dev.verbs4j.verbs.Opcode;
import dev.verbs4j.verbs.ProtectionDomain;
import dev.verbs4j.verbs.QpState;
import dev.verbs4j.verbs.QpType;
import dev.verbs4j.verbs.QueuePair;
import dev.verbs4j.verbs.QueuePairAttributes;
import dev.verbs4j.verbs.QueuePairInit;
import dev.verbs4j.verbs.SendRequests;

import java.util.concurrent.Semaphore;

/**
 * One rping connection (the C program's control block): its {@link PingState} with the semaphore
 * its waiter sleeps on, and its verbs resources, the protection domain, completion channel and
 * queue, queue pair and {@link PingBuffers}, whose completions {@link PingCompletions} handles.
 */
final class RPingConnection {

    private static final int SQ_DEPTH = 16;

    final RPing rping;
    final boolean server;
    /** The id the connection manager events of this connection come on (the server's listening id). */
    final CmId cmId;
    /** The server's id of the accepted connection. */
    volatile CmId childId;
    /** The client's connector: the event thread advances it, the client's thread connects and establishes; null on a server. */
    volatile CmConnector connector;
    volatile PingState state = PingState.IDLE;
    /** The last buffer the peer advertised. */
    volatile RdmaInfo remote;
    private final Semaphore sem = new Semaphore(0);
    CompletionChannel channel;
    CompletionQueue cq;
    QueuePair qp;
    PingBuffers buffers;
    private ProtectionDomain pd;

    RPingConnection(RPing rping, boolean server, CmId cmId) {
        this.rping = rping;
        this.server = server;
        this.cmId = cmId;
    }

    /** A connection for the request {@code listener} took, as the persistent server's clone_cb() makes. */
    RPingConnection(RPingConnection listener) {
        this(listener.rping, listener.server, listener.cmId);
        this.childId = listener.childId;
    }

    /** Moves to {@code next} and wakes the waiter. */
    void enter(PingState next) {
        state = next;
        sem.release();
    }

    /** Wakes the waiter in the current state. */
    void wake() {
        sem.release();
    }

    /** Waits for the next wake-up; false when interrupted or once the event thread has given up. */
    boolean await() {
        try {
            sem.acquire();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            state = PingState.ERROR;
            return false;
        }
        return !rping.failed();
    }

    /** Waits for the next wake-up, which must find the connection in {@code expected}. */
    void expect(PingState expected) {
        if (!await() || state != expected) {
            throw new RPingException(String.format("wait for %s state %d\n", expected, state.code()), -1);
        }
    }

    /**
     * Creates the resources on {@code id}, posts the first receive, runs {@code exchange} while
     * the completion thread runs, and frees them all again.
     */
    void run(CmId id, Runnable exchange) {
        createQueuePair(id);
        try {
            registerBuffers();
            try {
                postReceive();
                PingCompletions completions = PingCompletions.start(this);
                try {
                    exchange.run();
                } finally {
                    completions.stop();
                }
            } finally {
                freeBuffers();
            }
        } finally {
            qp.close();
            cq.close();
            channel.close();
            pd.close();
        }
    }

    /**
     * Runs a side's ping loop, then disconnects {@code id}. A failure of the loop is printed at
     * once, with {@code failedLine} (a format for its status; null for none), and thrown after the
     * disconnect, unless the peer had disconnected: that is how a run ends.
     */
    void pingThenDisconnect(CmId id, Runnable loop, String failedLine) {
        RPingException failure = null;
        try {
            loop.run();
        } catch (RPingException e) {
            e.report(rping.err);
            if (state != PingState.DISCONNECTED) {
                if (failedLine != null) {
                    rping.err.printf(failedLine, e.status());
                }
                failure = RPingException.reported(e.status());
            }
        }
        disconnect(id);
        if (failure != null) {
            throw failure;
        }
    }

    private void createQueuePair(CmId id) {
        Context verbs = id.context();
        try {
            pd = verbs.allocateProtectionDomain();
        } catch (RuntimeException e) {
            throw setupFailure("ibv_alloc_pd failed\n");
        }
        rping.debug("created pd %s\n", pd);
        try {
            channel = verbs.createCompletionChannel();
        } catch (RuntimeException e) {
            pd.close();
            throw setupFailure("ibv_create_comp_channel failed\n");
        }
        rping.debug("created channel %s\n", channel);
        try {
            cq = verbs.createCompletionQueue(SQ_DEPTH * 2, channel, 0);
            rping.debug("created cq %s\n", cq);
            cq.requestNotify(false);
        } catch (RuntimeException e) {
            channel.close();
            pd.close();
            throw setupFailure("ibv_create_cq failed\n");
        }
        boolean self = rping.options.selfCreateQp;
        try {
            QueuePairInit init = QueuePairInit.of(QpType.RC, cq).maxSendWr(SQ_DEPTH).maxRecvWr(2).maxSendSge(1).maxRecvSge(1);
            qp = self ? selfCreatedQueuePair(id, init) : id.createQueuePair(pd, init);
        } catch (RuntimeException e) {
            cq.close();
            channel.close();
            pd.close();
            throw setupFailure((self ? "ibv_create_qp: " : "rdma_create_qp: ") + e.getMessage() + "\n");
        }
        rping.debug("created qp %s\n", qp);
    }

    /** With -q: a queue pair of the protection domain, moved to INIT by hand. */
    private QueuePair selfCreatedQueuePair(CmId id, QueuePairInit init) {
        QueuePair created = pd.createQueuePair(init);
        try {
            created.modify(new QueuePairAttributes().state(QpState.INIT).pkeyIndex(0).port(id.portNumber()).accessFlags(0));
        } catch (RuntimeException e) {
            created.close();
            throw e;
        }
        return created;
    }

    private static RPingException setupFailure(String report) {
        return new RPingException(report + "setup_qp failed: 1\n", 1);
    }

    private void registerBuffers() {
        rping.debug("rping_setup_buffers called on cb %s\n", identity());
        try {
            buffers = PingBuffers.register(pd, rping.options.size, !server);
        } catch (RuntimeException e) {
            rping.debug("rping_free_buffers called on cb %s\n", identity());
            throw new RPingException("reg_mr failed: " + e.getMessage() + "\nrping_setup_buffers failed: 1\n", 1);
        }
        rping.debug("allocated & registered buffers...\n");
    }

    private void freeBuffers() {
        rping.debug("rping_free_buffers called on cb %s\n", identity());
        buffers.close();
    }

    private String identity() {
        return Integer.toHexString(System.identityHashCode(this));
    }

    private void postReceive() {
        try {
            qp.postReceive(buffers.recvWr, 1);
        } catch (RuntimeException e) {
            throw new RPingException("ibv_post_recv failed: " + e.getMessage() + "\n", -1);
        }
    }

    private void postSend(SendRequests wr) {
        try {
            qp.postSend(wr, 1);
        } catch (RuntimeException e) {
            throw new RPingException("post send error " + e.getMessage() + "\n", -1);
        }
    }

    /** The client: SENDs the advert of the first ping-size bytes of {@code mr}. */
    void advertise(MemoryRegion mr) {
        int size = rping.options.size;
        RdmaInfo.of(mr, size).writeTo(buffers.send);
        rping.debug("RDMA addr %x rkey %x len %d\n", mr.remoteAddress(), mr.rkey(), size);
        postSend(buffers.sendWr);
    }

    /** The server: SENDs the go-ahead (the send buffer, unused). */
    void goAhead() {
        postSend(buffers.sendWr);
    }

    /** The server: RDMA-READs the advertised buffer into the RDMA buffer. */
    void readRemote() {
        RdmaInfo from = remote;
        try {
            buffers.aimRdma(Opcode.RDMA_READ, from, from.length());
        } catch (RuntimeException e) {
            throw new RPingException("post send error " + e.getMessage() + "\n", -1);
        }
        postSend(buffers.rdmaWr);
    }

    /** The server: RDMA-WRITEs the string in the RDMA buffer, with its NUL, to the advertised buffer. */
    void writeRemote() {
        int length = buffers.rdmaLength() + 1;
        buffers.aimRdma(Opcode.RDMA_WRITE, remote, length);
        rping.debug("rdma write from lkey %x laddr %x len %d\n", buffers.rdmaMr.lkey(), buffers.rdmaMr.address(), length);
        postSend(buffers.rdmaWr);
    }

    /** What both sides pass to connect and accept; with -q the self-created queue pair's number. */
    ConnectionParameters parameters() {
        return new ConnectionParameters(new byte[0], 1, 1, false, 7, 7, false, rping.options.selfCreateQp ? qp.qpNum() : 0);
    }

    /** With -q: the queue pair through INIT, RTR and RTS with the attributes the connection manager gives. */
    void selfModifyQp(CmId id) {
        for (QpState s : new QpState[]{QpState.INIT, QpState.RTR, QpState.RTS}) {
            qp.modify(id.initQueuePairAttributes(s));
        }
    }

    /** Disconnects {@code id} (with -q, the queue pair to ERR first); a failure is ignored as rping does. */
    void disconnect(CmId id) {
        try {
            if (rping.options.selfCreateQp) {
                qp.modify(new QueuePairAttributes().state(QpState.ERR));
            }
            id.disconnect();
        } catch (RuntimeException e) {
            // rping_disconnect's result is not looked at
        }
    }
}
