package dev.verbs4j.naaice;

import dev.verbs4j.rdmacm.CmEvent;
import dev.verbs4j.rdmacm.CmId;
import dev.verbs4j.rdmacm.ConnectionParameters;
import dev.verbs4j.verbs.Access;
import dev.verbs4j.verbs.Closeables;
import dev.verbs4j.verbs.MemoryRegion;
import dev.verbs4j.verbs.Opcode;
import dev.verbs4j.verbs.ProtectionDomain;
import dev.verbs4j.verbs.QpType;
import dev.verbs4j.verbs.QueuePair;
import dev.verbs4j.verbs.QueuePairInit;
import dev.verbs4j.verbs.ReceiveRequests;
import dev.verbs4j.verbs.SendFlags;
import dev.verbs4j.verbs.SendRequest;
import dev.verbs4j.verbs.SendRequests;
import dev.verbs4j.verbs.WcOpcode;
import dev.verbs4j.verbs.WcStatus;
import dev.verbs4j.verbs.WorkCompletion;
import dev.verbs4j.verbs.WorkCompletions;

import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One client connection of a {@link NaaServer}: its verbs resources (a protection domain and a
 * queue pair on one of the server's {@link SharedCompletions shared completion queues}), its
 * {@link ServerRegions regions} and state. Created and accepted by the server's listener. The
 * shared queue's thread hands the connection its completions ({@link #offer}); once established,
 * whenever completions wait and nothing serves the connection, that thread (or a new virtual
 * thread) {@link #serve serves} them in order (the region setup, the RPCs with their kernels, the
 * writes back) until none is left. No thread waits for a connection between its RPCs. The serving
 * thread, or {@link #shutdown} when none serves it, frees the resources.
 */
final class ServerConnection {

    private static final System.Logger LOG = System.getLogger(NaaServer.class.getName());
    /** The MRSP buffer: sent from and received into locally, never accessed by the client. */
    private static final int MRSP_ACCESS = Access.LOCAL_WRITE;
    private static final long WR_MRSP_RECV = 1;
    private static final long WR_MRSP_SEND = 2;
    private static final long WR_DATA_RECV = 3;
    private static final long WR_WRITE = 4;
    private static final int LOGGED_MRSP_ERRORS = 3;
    /** Completion queue entries a connection needs beyond its {@code maxRegions}: the sends' and the receives' slack. */
    static final int ENTRIES_BEYOND_REGIONS = 4 + 8;

    private final NaaServer server;
    private final CmId id;
    private final long number;
    private final String peer;
    private final StateMachine machine = new StateMachine(StateMachine.Role.NAA);
    private final ProtectionDomain pd;
    private final SharedCompletions.Queue queue;
    private final QueuePair qp;
    private final int qpNum;
    private final MemoryRegion mrsp;
    private final SendRequests sends;
    private final ReceiveRequests receives = new ReceiveRequests(1, 1);
    private final ServerRegions regions;
    private final ArrayDeque<int[]> pendingRpcs = new ArrayDeque<>();
    private int pendingMrspBytes = -1;
    private boolean errorReply;
    private long mrspErrors;
    private int writesPending;
    private long rpcs;
    private long rpcStart;
    private long kernelNanos;
    private final long created = System.nanoTime();
    private volatile boolean stop;
    /** Guards the flags below and {@link #inbox}. */
    private final ReentrantLock lock = new ReentrantLock();
    /** Signalled once the resources are freed. */
    private final Condition freed = lock.newCondition();
    private boolean disconnected;
    private boolean cleaning;
    private boolean cleaned;
    /** ESTABLISHED was seen: completions are served from now on. */
    private boolean started;
    /** A thread serves the connection (or frees it): the only one that touches its state meanwhile. */
    private boolean serving;
    private Thread servingThread;
    /** Completions handed over by the shared queue, not yet served, in order. */
    private final CompletionInbox inbox;

    ServerConnection(NaaServer server, CmId id, long number) {
        this.server = server;
        this.id = id;
        this.number = number;
        InetSocketAddress p = id.peerAddress();
        this.peer = p == null ? "?" : p.getAddress().getHostAddress() + ":" + p.getPort();
        this.sends = new SendRequests(server.maxRegions + 1, 1);
        this.inbox = new CompletionInbox(server.maxRegions + ENTRIES_BEYOND_REGIONS);
        ProtectionDomain pd = null;
        SharedCompletions.Queue q = null;
        MemoryRegion m = null;
        try {
            pd = id.context().allocateProtectionDomain();
            int depth = server.maxRegions + 4;
            q = server.completions.create(id, pd, cq -> QueuePairInit.of(QpType.RC, cq).maxSendWr(depth).maxRecvWr(8), this);
            this.qp = id.queuePair();
            this.qpNum = qp.qpNum();
            m = pd.allocateRegion(2L * Mrsp.MAX_MESSAGE, MRSP_ACCESS);
            this.mrsp = m;
            this.pd = pd;
            this.regions = new ServerRegions(server, pd);
            this.queue = q;
            postMrspReceive();
        } catch (RuntimeException e) {
            if (q != null) {
                QueuePair made = id.queuePair();
                server.completions.destroy(q, made == null ? -1 : made.qpNum(), this, () -> {
                    if (made != null) {
                        made.close();
                    }
                });
            }
            throw Closeables.closeAfter(e, m, pd, sends, receives);
        }
    }

    CmId id() {
        return id;
    }

    /** On the server's listener: accepts with the C library's parameters. */
    void accept() {
        try {
            id.accept(new ConnectionParameters(new byte[0], 1, 1, false, 7, 6, false, 0));
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "NAAICE server: accepting " + peer + " failed", e);
            cleanup();
        }
    }

    /** On the server's listener: the connection is up; its completions are served from now on. */
    void established() {
        lock.lock();
        try {
            if (cleaned || started || stop) {
                return;
            }
            started = true;
            machine.moveTo(NaaState.CONNECTED);
            machine.moveTo(NaaState.MRSP_RECEIVING);
            LOG.log(System.Logger.Level.INFO, "NAAICE connection {0} from {1} established", number, peer);
        } finally {
            lock.unlock();
        }
        serveLater();
    }

    /**
     * On the shared queue's thread: the completions of this connection among {@code polled}
     * {@code [first, count)}, those whose {@code owners} entry is this connection (taken in order,
     * their entries cleared). True when the caller is to {@link #serve} them now (the connection
     * is established and nothing serves it; it is claimed for the caller), else they wait for the
     * thread that serves it.
     */
    boolean offer(WorkCompletions polled, ServerConnection[] owners, int first, int count) {
        lock.lock();
        try {
            for (int i = first; i < count; i++) {
                if (owners[i] == this) {
                    owners[i] = null;
                    if (!cleaned) {
                        WorkCompletion wc = polled.get(i);
                        boolean success = wc.isSuccess();
                        inbox.add(wc.wrId(), wc.status(), success ? wc.opcode() : null, wc.byteLength(), wc.immediateData());
                    }
                }
            }
            if (cleaned) {
                return false;
            }
            if (serving || !started) {
                return false;
            }
            serving = true;
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** Serves a connection {@link #offer} claimed on a new virtual thread. */
    void serveElsewhere() {
        Thread.ofVirtual().name("naaice-connection-" + number).start(this::serve);
    }

    /** Starts a serving thread when completions wait, the connection is established, and none runs. */
    private void serveLater() {
        lock.lock();
        try {
            if (serving || cleaned || !started || (inbox.isEmpty() && !stop)) {
                return;
            }
            serving = true;
        } finally {
            lock.unlock();
        }
        Thread.ofVirtual().name("naaice-connection-" + number).start(this::serve);
    }

    /**
     * Serves the completions in order until none is left, on the thread that claimed the
     * connection (its shared queue's thread, or one of its own); frees everything once stopped.
     */
    void serve() {
        lock.lock();
        try {
            servingThread = Thread.currentThread();
        } finally {
            lock.unlock();
        }
        boolean free = false;
        try {
            while (true) {
                long wrId;
                WcStatus status;
                WcOpcode opcode;
                int bytes;
                int immediate;
                lock.lock();
                try {
                    if (stop) {
                        free = true;
                        return;
                    }
                    if (inbox.isEmpty()) {
                        serving = false;
                        servingThread = null;
                        return;
                    }
                    wrId = inbox.wrId();
                    status = inbox.status();
                    opcode = inbox.opcode();
                    bytes = inbox.byteLength();
                    immediate = inbox.immediate();
                    inbox.removeFirst();
                } finally {
                    lock.unlock();
                }
                if (status != WcStatus.SUCCESS) {
                    fail("work request " + wrId + " failed with " + status);
                    continue;
                }
                complete(wrId, opcode, bytes, immediate);
            }
        } catch (RuntimeException e) {
            if (!stop) {
                fail("serving failed: " + e);
                LOG.log(System.Logger.Level.DEBUG, "NAAICE connection " + number, e);
            }
            free = true;
        } finally {
            if (free) {
                cleanup();
            }
        }
    }

    /** On the server's listener: the client disconnected or the connection failed. */
    void peerGone(CmEvent ev) {
        LOG.log(System.Logger.Level.INFO, "NAAICE connection {0} from {1}: {2}", number, peer, ev.type());
        shutdown(ev.type().toString());
    }

    /** Disconnects (answering the client's request, if any) and frees everything, or has the serving thread do it. */
    void shutdown(String why) {
        boolean free;
        lock.lock();
        try {
            disconnect();
            stop = true;
            free = !serving && !cleaned;
            if (free) {
                serving = true; // nothing serves it from now on
            }
        } finally {
            lock.unlock();
        }
        if (free) {
            cleanup();
        }
    }

    /**
     * Waits until the connection's resources are freed (after {@link #shutdown}: at once, or once
     * the serving thread has finished the completion it serves, a kernel call included). Not from
     * the serving thread itself.
     */
    void join() {
        boolean interrupted = false;
        lock.lock();
        try {
            if (servingThread == Thread.currentThread()) {
                return; // (a kernel closing its own server: the serving thread frees everything when it returns)
            }
            long warnAt = System.nanoTime() + 10_000_000_000L;
            while (!cleaned) {
                try {
                    freed.await(1, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    interrupted = true;
                }
                if (!cleaned && System.nanoTime() - warnAt > 0) {
                    LOG.log(System.Logger.Level.WARNING, "NAAICE connection {0}: still waiting for it to stop"
                            + " (a kernel that does not return?)", number);
                    warnAt = System.nanoTime() + 10_000_000_000L;
                }
            }
        } finally {
            lock.unlock();
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** Disconnects once (the queue pair goes to the error state and flushes); under {@link #lock}. */
    private void disconnect() {
        if (disconnected || cleaned) {
            return;
        }
        disconnected = true;
        try {
            id.disconnect();
        } catch (RuntimeException e) {
            // not connected any more
        }
    }

    private void complete(long wrId, WcOpcode op, int bytes, int imm) {
        NaaState s = machine.state();
        if (op == WcOpcode.RECV && wrId == WR_MRSP_RECV) {
            if (s == NaaState.MRSP_RECEIVING) {
                handleRequest(bytes);
            } else if (s == NaaState.MRSP_SENDING && errorReply) {
                pendingMrspBytes = bytes;
            } else {
                fail("MRSP message in state " + s);
            }
        } else if (op == WcOpcode.SEND && wrId == WR_MRSP_SEND) {
            if (errorReply) {
                errorReply = false;
                machine.moveTo(NaaState.MRSP_RECEIVING);
                if (pendingMrspBytes >= 0) {
                    int b = pendingMrspBytes;
                    pendingMrspBytes = -1;
                    handleRequest(b);
                }
            } else {
                machine.moveTo(NaaState.MRSP_DONE);
                machine.moveTo(NaaState.DATA_RECEIVING);
                LOG.log(System.Logger.Level.INFO, "NAAICE connection {0}: {1} parameters, {2} internal regions set up in {3} µs",
                        number, regions.params().size(), regions.internals().size(), (System.nanoTime() - created) / 1000);
                runPending();
            }
        } else if (op == WcOpcode.RECV_RDMA_WITH_IMM) {
            if (s == NaaState.DATA_RECEIVING) {
                rpc(imm, bytes);
            } else if (s == NaaState.DATA_SENDING || s == NaaState.MRSP_SENDING && !errorReply) {
                pendingRpcs.add(new int[]{imm, bytes});
            } else {
                fail("RPC start (immediate 0x" + Integer.toHexString(imm) + ") in state " + s);
            }
        } else if (op == WcOpcode.RDMA_WRITE && wrId == WR_WRITE) {
            if (--writesPending == 0 && s == NaaState.DATA_SENDING) {
                machine.moveTo(NaaState.DATA_RECEIVING);
                runPending();
            }
        } else {
            fail("unexpected completion " + op + " (work request " + wrId + ") in state " + s);
        }
    }

    private void runPending() {
        while (machine.state() == NaaState.DATA_RECEIVING && !pendingRpcs.isEmpty()) {
            int[] p = pendingRpcs.poll();
            rpc(p[0], p[1]);
        }
    }

    private void handleRequest(int bytes) {
        MrspMessage m;
        try {
            m = Mrsp.decode(mrsp.segment(), bytes);
        } catch (MalformedMrspException e) {
            replyError(e.errorCode(), e.getMessage());
            return;
        }
        switch (m) {
            case MrspMessage.Error e -> {
                mrspErrors++;
                LOG.log(mrspErrors <= LOGGED_MRSP_ERRORS ? System.Logger.Level.INFO : System.Logger.Level.DEBUG,
                        "NAAICE connection {0}: the client aborted the region setup with code {1}", number, e.code());
                postMrspReceive();
            }
            case MrspMessage.Advertise a -> replyError(Mrsp.MALFORMED_MESSAGE, "a client sent an advertise");
            case MrspMessage.Request r -> setUp(r);
        }
    }

    private void setUp(MrspMessage.Request r) {
        NaaServer.Refusal refusal = regions.setUp(r);
        if (refusal != null) {
            replyError(refusal.code(), refusal.why());
            return;
        }
        // The first RPC's receive goes first: a fast client may start it as soon as it sees the advertise.
        receives.get(0).wrId(WR_DATA_RECV).noSge();
        qp.postReceive(receives, 1);
        send(new MrspMessage.Advertise(regions.advertise()));
    }

    private void replyError(int code, String why) {
        mrspErrors++;
        // a peer can send any number of bad messages: the first few are logged, the rest counted
        LOG.log(mrspErrors <= LOGGED_MRSP_ERRORS ? System.Logger.Level.INFO : System.Logger.Level.DEBUG,
                "NAAICE connection {0}: MRSP error {1} ({2}): {3}", number, code, Mrsp.errorName(code), why);
        postMrspReceive();
        errorReply = true;
        send(new MrspMessage.Error(code));
    }

    private void send(MrspMessage m) {
        long half = Mrsp.MAX_MESSAGE;
        int len = Mrsp.encode(m, mrsp.segment().asSlice(half));
        sends.reset(0).wrId(WR_MRSP_SEND).opcode(Opcode.SEND).flags(SendFlags.SIGNALED | SendFlags.SOLICITED).sge(mrsp, half, len);
        machine.moveTo(NaaState.MRSP_SENDING);
        qp.postSend(sends, 1);
    }

    private void postMrspReceive() {
        receives.get(0).wrId(WR_MRSP_RECV).sge(mrsp, 0, Mrsp.MAX_MESSAGE);
        qp.postReceive(receives, 1);
    }

    private void rpc(int imm, int bytes) {
        if (imm == Immediate.HOST_ERROR) {
            LOG.log(System.Logger.Level.INFO, "NAAICE connection {0}: the client signalled a host error (immediate 0)", number);
            receives.get(0).wrId(WR_DATA_RECV).noSge();
            qp.postReceive(receives, 1);
            return;
        }
        machine.moveTo(NaaState.CALCULATING);
        rpcs++;
        server.rpcs.incrementAndGet();
        rpcStart = System.nanoTime();
        int fn = Immediate.functionCode(imm);
        Kernel kernel = fn == 0 ? null : server.kernels.get(fn);
        int code;
        if (kernel == null) {
            LOG.log(System.Logger.Level.INFO, "NAAICE connection {0}: RPC {1} asks for unknown function {2}", number, rpcs, fn);
            code = Immediate.APPLICATION_ERROR;
        } else {
            KernelCall call = regions.call(fn, imm, rpcs);
            queue.handOff();
            try {
                code = kernel.run(call);
                if (code < 0 || code > 255) {
                    code = Immediate.APPLICATION_ERROR;
                }
            } catch (Exception | Error e) {
                LOG.log(System.Logger.Level.INFO, "NAAICE connection " + number + ": kernel " + fn + " failed", e);
                code = Immediate.APPLICATION_ERROR;
            }
        }
        kernelNanos = System.nanoTime() - rpcStart;
        // (the polling of the shared queue was handed on before the kernel, if it ran on that thread)
        // The next RPC's receive goes first: the client starts it as soon as it sees this reply.
        receives.get(0).wrId(WR_DATA_RECV).noSge();
        qp.postReceive(receives, 1);
        int n = 0;
        if (code == 0) {
            for (ServerRegions.ServerRegion r : regions.params()) {
                if ((r.flags() & RegionFlags.OUTPUT) != 0) {
                    SendRequest w = sends.reset(n++).wrId(WR_WRITE).opcode(Opcode.RDMA_WRITE).flags(SendFlags.SIGNALED)
                            .rdma(r.hostAddress(), r.hostRkey());
                    if (r.size() > 0) {
                        w.sge(r.mr(), 0, (int) r.size());
                    }
                }
            }
        }
        if (n == 0) {
            // An error, or no output region: a zero-length write-with-imm to the host's region 0.
            ServerRegions.ServerRegion r0 = regions.params().isEmpty() ? null : regions.params().get(0);
            sends.reset(n++).wrId(WR_WRITE).rdma(r0 == null ? 0 : r0.hostAddress(), r0 == null ? 0 : r0.hostRkey());
        }
        sends.get(n - 1).opcode(Opcode.RDMA_WRITE_WITH_IMM).flags(SendFlags.SIGNALED | SendFlags.SOLICITED)
                .immediateData(Immediate.reply(code));
        writesPending = n;
        machine.moveTo(NaaState.DATA_SENDING);
        qp.postSend(sends, n);
        // (the writes' completions are taken when the next RPC arrives: the worker sleeps until then)
        LOG.log(server.logEachRpc ? System.Logger.Level.INFO : System.Logger.Level.DEBUG,
                "NAAICE connection {0}: RPC {1} answered in {2} µs (kernel {3} µs)", number, rpcs,
                (System.nanoTime() - rpcStart) / 1000, kernelNanos / 1000);
    }

    private void fail(String why) {
        boolean expected;
        lock.lock();
        try {
            expected = disconnected || stop; // flushed work requests after a disconnect are normal
        } finally {
            lock.unlock();
        }
        if (!expected && machine.state() != NaaState.ERROR) {
            LOG.log(System.Logger.Level.INFO, "NAAICE connection {0} from {1} failed in state {2}: {3}", number, peer,
                    machine.state(), why);
            machine.moveTo(NaaState.ERROR);
        }
        lock.lock();
        try {
            disconnect();
            stop = true;
        } finally {
            lock.unlock();
        }
    }

    private void cleanup() {
        lock.lock();
        try {
            if (cleaning) {
                return;
            }
            cleaning = true;
        } finally {
            lock.unlock();
        }
        // the queue pair goes first, and the shared queue is drained of its completions before another is made
        server.completions.destroy(queue, qpNum, this, () -> {
            try {
                id.close();
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.DEBUG, "NAAICE connection " + number + ": closing " + id, e);
            }
        });
        Closeables.closeLogged(LOG, pd, sends, receives);
        regions.release();
        if (machine.state() != NaaState.ERROR && machine.state() != NaaState.DISCONNECTED) {
            machine.moveTo(NaaState.FINISHED);
        }
        machine.moveTo(NaaState.DISCONNECTED);
        lock.lock();
        try {
            cleaned = true;
            inbox.clear();
            freed.signalAll();
        } finally {
            lock.unlock();
        }
        server.removed(this);
        LOG.log(System.Logger.Level.INFO, "NAAICE connection {0} from {1} closed after {2} RPCs{3}", number, peer, rpcs,
                mrspErrors == 0 ? "" : " and " + mrspErrors + " failed region setups");
    }
}
