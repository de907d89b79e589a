package dev.verbs4j.rdmacm.tools;

import dev.verbs4j.rdmacm.CmEvent;
import dev.verbs4j.rdmacm.CmId;
import dev.verbs4j.rdmacm.ConnectionParameters;
import dev.verbs4j.rdmacm.EventChannel;
import dev.verbs4j.rdmacm.PortSpace;
import dev.verbs4j.verbs.Access;
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
import dev.verbs4j.verbs.RdmaArena;
import dev.verbs4j.verbs.ReceiveRequests;
import dev.verbs4j.verbs.SendFlags;
import dev.verbs4j.verbs.SendRequests;
import dev.verbs4j.verbs.WcStatus;
import dev.verbs4j.verbs.WorkCompletion;
import dev.verbs4j.verbs.WorkCompletions;
import dev.verbs4j.verbs.tools.Getopt;

import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;

/**
 * {@code rping}: the RDMA CM ping-pong of rdmacm-utils in Java, with its options, its output and
 * its wire protocol, so that it runs against the C program either way round. Per ping the client
 * SENDs the address, rkey and size of its source buffer ({@code struct rping_rdma_info}: be64,
 * be32, be32), the server RDMA-READs it and SENDs a go-ahead; the client SENDs its sink buffer, the
 * server RDMA-WRITEs the data back and SENDs another go-ahead. {@code -v} prints the data.
 */
public final class RPing {

    private static final int BUFSIZE = 64 * 1024;
    private static final int SQ_DEPTH = 16;
    /** sizeof(stringify(INT_MAX)) + sizeof(RPING_MSG_FMT), as the C program computes it. */
    private static final int MIN_BUFSIZE = 11 + 15;
    private static final int INFO_SIZE = 16;
    private static final int EINVAL = 22;
    private static final ValueLayout.OfLong BE64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfInt BE32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final Duration RESOLVE_TIMEOUT = Duration.ofMillis(2000);
    private static final Duration POLL_SLICE = Duration.ofMillis(100);

    private enum State {
        IDLE, CONNECT_REQUEST, ADDR_RESOLVED, ROUTE_RESOLVED, CONNECTED, RDMA_READ_ADV, RDMA_READ_COMPLETE,
        RDMA_WRITE_ADV, RDMA_WRITE_COMPLETE, DISCONNECTED, ERROR;

        /** The C value of {@code enum test_state} (IDLE = 1). */
        int code() {
            return ordinal() + 1;
        }
    }

    private final PrintStream out;
    private final PrintStream err;
    private int debug;
    private boolean server;
    private int verbose;
    private int validate;
    private int count;
    private int size = 64;
    private boolean selfCreateQp;
    private int port = 7174;
    private InetAddress address;
    private InetAddress source;
    private EventChannel cmChannel;
    private final Map<CmId, Cb> children = new ConcurrentHashMap<>();
    private Cb listening;
    /** Set by the event thread when the C program would exit(): the status to exit with. */
    private volatile int fatal = Integer.MIN_VALUE;
    private volatile boolean stopping;

    private RPing(PrintStream out, PrintStream err) {
        this.out = out;
        this.err = err;
    }

    /** Runs rping and exits with its status. */
    public static void main(String[] args) {
        int rc = run(args, System.out, System.err);
        System.out.flush();
        System.exit(rc);
    }

    /** Runs rping; returns its exit status (0 on success). */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        return new RPing(out, err).execute(args) & 0xff;
    }

    private void debug(String format, Object... args) {
        if (debug > 0) {
            out.printf(format, args);
        }
    }

    private int execute(String[] args) {
        int ret = 0;
        boolean persistent = false;
        boolean chosen = false;
        selfCreateQp = false;
        try {
            address = InetAddress.getByAddress(new byte[4]);
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
        PrintStream quiet = new PrintStream(OutputStream.nullOutputStream()); // opterr = 0
        Getopt opts = new Getopt("rping", args, "a:I:Pp:C:S:t:scvVdq");
        for (int op; (op = opts.next(quiet)) != -1; ) {
            switch (op) {
                case 'a' -> {
                    InetAddress a = getAddr(opts.argument());
                    if (a == null) {
                        ret = -1;
                    } else {
                        address = a;
                    }
                }
                case 'I' -> {
                    InetAddress a = getAddr(opts.argument());
                    if (a == null) {
                        ret = -1;
                    } else {
                        source = a;
                    }
                }
                case 'P' -> persistent = true;
                case 'p' -> {
                    port = atoi(opts.argument()) & 0xffff;
                    debug("port %d\n", atoi(opts.argument()));
                }
                case 's' -> {
                    server = true;
                    chosen = true;
                    debug("server\n");
                }
                case 'c' -> {
                    server = false;
                    chosen = true;
                    debug("client\n");
                }
                case 'S' -> {
                    size = atoi(opts.argument());
                    if (size < MIN_BUFSIZE || size > BUFSIZE - 1) {
                        err.printf("Invalid size %d (valid range is %d to %d)\n", size, MIN_BUFSIZE, BUFSIZE);
                        ret = EINVAL;
                    } else {
                        debug("size %d\n", atoi(opts.argument()));
                    }
                }
                case 'C' -> {
                    count = atoi(opts.argument());
                    if (count < 0) {
                        err.printf("Invalid count %d\n", count);
                        ret = EINVAL;
                    } else {
                        debug("count %d\n", count);
                    }
                }
                case 'v' -> {
                    verbose++;
                    debug("verbose\n");
                }
                case 'V' -> {
                    validate++;
                    debug("validate data\n");
                }
                case 'd' -> debug++;
                case 'q' -> selfCreateQp = true;
                default -> {
                    usage();
                    return EINVAL;
                }
            }
        }
        if (ret != 0) {
            return ret;
        }
        if (!chosen) {
            usage();
            return EINVAL;
        }
        try {
            cmChannel = EventChannel.create();
        } catch (RuntimeException e) {
            err.print("rdma_create_event_channel: " + e.getMessage() + "\n");
            return 1;
        }
        Thread cmThread = null;
        try {
            CmId cmId;
            try {
                cmId = cmChannel.createId(PortSpace.TCP);
            } catch (RuntimeException e) {
                err.print("rdma_create_id: " + e.getMessage() + "\n");
                return 1;
            }
            listening = new Cb(server, cmId);
            debug("created cm_id %s\n", cmId);
            cmThread = Thread.ofPlatform().name("rping-cm").daemon().start(this::cmThread);
            if (server) {
                ret = persistent ? runPersistentServer(listening) : runServer(listening);
            } else {
                ret = runClient(listening);
            }
            debug("destroy cm_id %s\n", cmId);
        } finally {
            stopping = true;
            if (cmThread != null) {
                cmThread.interrupt();
                try {
                    cmThread.join(5_000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            cmChannel.close();
        }
        return ret;
    }

    private InetAddress getAddr(String name) {
        try {
            return InetAddress.getByName(name);
        } catch (UnknownHostException e) {
            out.print("getaddrinfo failed (Name or service not known) - invalid hostname or IP address\n");
            return null;
        }
    }

    private static int atoi(String s) {
        String t = s.strip();
        int i = 0;
        boolean neg = false;
        if (i < t.length() && (t.charAt(i) == '-' || t.charAt(i) == '+')) {
            neg = t.charAt(i) == '-';
            i++;
        }
        long v = 0;
        for (; i < t.length() && Character.isDigit(t.charAt(i)); i++) {
            v = Math.min(v * 10 + (t.charAt(i) - '0'), 1L << 32);
        }
        return (int) (neg ? -v : v);
    }

    private void usage() {
        out.print("rping -s [-vVd] [-S size] [-C count] [-a addr] [-p port]\n");
        out.print("rping -c [-vVd] [-S size] [-C count] [-I addr] -a addr [-p port]\n");
        out.print("\t-c\t\tclient side\n");
        out.print("\t-I\t\tSource address to bind to for client.\n");
        out.print("\t-s\t\tserver side.  To bind to any address with IPv6 use -a ::0\n");
        out.print("\t-v\t\tdisplay ping data to stdout\n");
        out.print("\t-V\t\tvalidate ping data\n");
        out.print("\t-d\t\tdebug printfs\n");
        out.print("\t-S size \tping data size\n");
        out.print("\t-C count\tping count times\n");
        out.print("\t-a addr\t\taddress\n");
        out.print("\t-p port\t\tport\n");
        out.print("\t-P\t\tpersistent server mode allowing multiple connections\n");
        out.print("\t-q\t\tuse self-created, self-modified QP\n");
    }

    // ---- connection manager events -------------------------------------------------------------

    private void cmThread() {
        while (!stopping) {
            CmEvent event;
            try {
                event = cmChannel.getEvent(POLL_SLICE);
            } catch (RuntimeException e) {
                if (!stopping) {
                    err.print("rdma_get_cm_event: " + e.getMessage() + "\n");
                    fail(1);
                }
                return;
            }
            if (event == null) {
                continue;
            }
            Cb cb = event.listener() != null ? listening : children.getOrDefault(event.id(), listening);
            int ret = handleEvent(cb, event);
            if (ret != 0) {
                fail(ret);
                return;
            }
        }
    }

    /** What the C program's exit() from the event thread does here: every waiter wakes and gives up. */
    private void fail(int status) {
        fatal = status;
        listening.state = State.ERROR;
        listening.sem.release();
        for (Cb c : children.values()) {
            c.state = State.ERROR;
            c.sem.release();
        }
    }

    private int handleEvent(Cb cb, CmEvent event) {
        CmId id = event.id();
        debug("cma_event type %s cma_id %s (%s)\n", event.type(), id, id == listening.cmId ? "parent" : "child");
        switch (event.type()) {
            case ADDR_RESOLVED -> {
                cb.state = State.ADDR_RESOLVED;
                try {
                    id.resolveRoute(RESOLVE_TIMEOUT);
                } catch (RuntimeException e) {
                    cb.state = State.ERROR;
                    err.print("rdma_resolve_route: " + e.getMessage() + "\n");
                    cb.sem.release();
                }
            }
            case ROUTE_RESOLVED -> {
                cb.state = State.ROUTE_RESOLVED;
                cb.sem.release();
            }
            case CONNECT_REQUEST -> {
                cb.state = State.CONNECT_REQUEST;
                cb.childId = id;
                debug("child cma %s\n", id);
                cb.sem.release();
            }
            case CONNECT_RESPONSE -> {
                debug("CONNECT_RESPONSE\n");
                cb.state = State.CONNECTED;
                cb.sem.release();
            }
            case ESTABLISHED -> {
                debug("ESTABLISHED\n");
                // the server wakes when the first receive completes
                if (!cb.server) {
                    cb.state = State.CONNECTED;
                }
                cb.sem.release();
            }
            case ADDR_ERROR, ROUTE_ERROR, CONNECT_ERROR, UNREACHABLE, REJECTED -> {
                err.printf("cma event %s, error %d\n", event.type(), event.status());
                cb.sem.release();
                return -1;
            }
            case DISCONNECTED -> {
                err.printf("%s DISCONNECT EVENT...\n", cb.server ? "server" : "client");
                cb.state = State.DISCONNECTED;
                cb.sem.release();
            }
            case DEVICE_REMOVAL -> {
                err.print("cma detected device removal!!!!\n");
                cb.state = State.ERROR;
                cb.sem.release();
                return -1;
            }
            default -> err.printf("unhandled event: %s, ignoring\n", event.type());
        }
        return 0;
    }

    // ---- one connection --------------------------------------------------------------------------

    /** The C program's control block: one connection's state, resources and buffers. */
    private final class Cb {
        final boolean server;
        final CmId cmId;
        final Semaphore sem = new Semaphore(0);
        volatile State state = State.IDLE;
        volatile CmId childId;
        RdmaArena arena;
        ProtectionDomain pd;
        CompletionChannel channel;
        CompletionQueue cq;
        QueuePair qp;
        MemorySegment recvBuf;
        MemoryRegion recvMr;
        MemorySegment sendBuf;
        MemoryRegion sendMr;
        MemorySegment rdmaBuf;
        MemoryRegion rdmaMr;
        MemorySegment startBuf;
        MemoryRegion startMr;
        final ReceiveRequests rqWr = new ReceiveRequests(1, 1);
        final SendRequests sqWr = new SendRequests(1, 1);
        final SendRequests rdmaSqWr = new SendRequests(1, 1);
        final WorkCompletions wc = new WorkCompletions(1);
        volatile int remoteRkey;
        volatile long remoteAddr;
        volatile int remoteLen;
        Thread cqThread;
        volatile boolean cqStop;

        Cb(boolean server, CmId cmId) {
            this.server = server;
            this.cmId = cmId;
        }

        /** A copy for one connection of the persistent server, as clone_cb() makes. */
        Cb(Cb listener) {
            this(listener.server, listener.cmId);
            this.childId = listener.childId;
        }

        /** Waits for the next post of the semaphore; false when interrupted or after a fatal event. */
        boolean await() {
            try {
                sem.acquire();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                state = State.ERROR;
                return false;
            }
            return fatal == Integer.MIN_VALUE;
        }

        void releaseWrs() {
            rqWr.close();
            sqWr.close();
            rdmaSqWr.close();
            wc.close();
        }
    }

    private int setupQp(Cb cb, CmId cmId) {
        Context verbs = cmId.context();
        try {
            cb.pd = verbs.allocateProtectionDomain();
        } catch (RuntimeException e) {
            err.print("ibv_alloc_pd failed\n");
            return 1;
        }
        debug("created pd %s\n", cb.pd);
        try {
            cb.channel = verbs.createCompletionChannel();
        } catch (RuntimeException e) {
            err.print("ibv_create_comp_channel failed\n");
            cb.pd.close();
            return 1;
        }
        debug("created channel %s\n", cb.channel);
        try {
            cb.cq = verbs.createCompletionQueue(SQ_DEPTH * 2, cb.channel, 0);
            debug("created cq %s\n", cb.cq);
            cb.cq.requestNotify(false);
        } catch (RuntimeException e) {
            err.print("ibv_create_cq failed\n");
            cb.channel.close();
            cb.pd.close();
            return 1;
        }
        try {
            QueuePairInit init = QueuePairInit.of(QpType.RC, cb.cq).maxSendWr(SQ_DEPTH).maxRecvWr(2).maxSendSge(1).maxRecvSge(1);
            if (selfCreateQp) {
                cb.qp = cb.pd.createQueuePair(init);
                try {
                    cb.qp.modify(new QueuePairAttributes().state(QpState.INIT).pkeyIndex(0).port(cmId.portNumber()).accessFlags(0));
                } catch (RuntimeException e) {
                    cb.qp.close();
                    throw e;
                }
            } else {
                cb.qp = cmId.createQueuePair(cb.pd, init);
            }
        } catch (RuntimeException e) {
            err.print((selfCreateQp ? "ibv_create_qp: " : "rdma_create_qp: ") + e.getMessage() + "\n");
            cb.cq.close();
            cb.channel.close();
            cb.pd.close();
            return 1;
        }
        debug("created qp %s\n", cb.qp);
        return 0;
    }

    private void freeQp(Cb cb) {
        cb.qp.close();
        cb.cq.close();
        cb.channel.close();
        cb.pd.close();
    }

    private int setupBuffers(Cb cb) {
        debug("rping_setup_buffers called on cb %s\n", Integer.toHexString(System.identityHashCode(cb)));
        cb.arena = RdmaArena.ofShared();
        try {
            cb.recvBuf = cb.arena.allocate(INFO_SIZE, 8);
            cb.recvMr = cb.pd.register(cb.recvBuf, Access.LOCAL_WRITE);
            cb.sendBuf = cb.arena.allocate(INFO_SIZE, 8);
            cb.sendMr = cb.pd.register(cb.sendBuf, 0);
            cb.rdmaBuf = cb.arena.allocate(size, 16);
            cb.rdmaMr = cb.pd.register(cb.rdmaBuf, Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE);
            if (!cb.server) {
                cb.startBuf = cb.arena.allocate(size, 16);
                cb.startMr = cb.pd.register(cb.startBuf, Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE);
            }
        } catch (RuntimeException e) {
            err.print("reg_mr failed: " + e.getMessage() + "\n");
            freeBuffers(cb);
            return 1;
        }
        cb.rqWr.get(0).sge(cb.recvMr, 0, INFO_SIZE);
        cb.sqWr.reset(0).opcode(Opcode.SEND).flags(SendFlags.SIGNALED).sge(cb.sendMr, 0, INFO_SIZE);
        cb.rdmaSqWr.reset(0).flags(SendFlags.SIGNALED).sge(cb.rdmaMr, 0, size);
        debug("allocated & registered buffers...\n");
        return 0;
    }

    private void freeBuffers(Cb cb) {
        debug("rping_free_buffers called on cb %s\n", Integer.toHexString(System.identityHashCode(cb)));
        for (MemoryRegion mr : new MemoryRegion[]{cb.recvMr, cb.sendMr, cb.rdmaMr, cb.startMr}) {
            if (mr != null) {
                mr.close();
            }
        }
        if (cb.arena != null) {
            cb.arena.close();
        }
    }

    private boolean postReceive(Cb cb) {
        try {
            cb.qp.postReceive(cb.rqWr, 1);
            return true;
        } catch (RuntimeException e) {
            err.print("ibv_post_recv failed: " + e.getMessage() + "\n");
            return false;
        }
    }

    private boolean postSend(Cb cb, SendRequests wr) {
        try {
            cb.qp.postSend(wr, 1);
            return true;
        } catch (RuntimeException e) {
            err.print("post send error " + e.getMessage() + "\n");
            return false;
        }
    }

    private void startCqThread(Cb cb) {
        cb.cqThread = Thread.ofPlatform().name("rping-cq").daemon().start(() -> cqThread(cb));
    }

    private void stopCqThread(Cb cb) {
        cb.cqStop = true;
        try {
            cb.cqThread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void cqThread(Cb cb) {
        debug("cq_thread started.\n");
        while (!cb.cqStop) {
            CompletionQueue evCq;
            try {
                evCq = cb.channel.await(POLL_SLICE);
            } catch (RuntimeException e) {
                err.print("Failed to get cq event!\n");
                return;
            }
            if (evCq == null) {
                continue;
            }
            if (evCq != cb.cq) {
                err.print("Unknown CQ!\n");
                return;
            }
            try {
                cb.cq.requestNotify(false);
            } catch (RuntimeException e) {
                err.print("Failed to set notify!\n");
                return;
            }
            if (cqEventHandler(cb) != 0) {
                return;
            }
        }
    }

    private int cqEventHandler(Cb cb) {
        boolean flushed = false;
        try {
            while (cb.cq.poll(cb.wc) == 1) {
                WorkCompletion wc = cb.wc.get(0);
                if (!wc.isSuccess()) {
                    if (wc.status() == WcStatus.WR_FLUSH_ERR) {
                        flushed = true;
                        continue;
                    }
                    err.printf("cq completion failed status %d\n", wc.statusCode());
                    return error(cb, -1);
                }
                switch (wc.opcode()) {
                    case SEND -> debug("send completion\n");
                    case RDMA_WRITE -> {
                        debug("rdma write completion\n");
                        cb.state = State.RDMA_WRITE_COMPLETE;
                        cb.sem.release();
                    }
                    case RDMA_READ -> {
                        debug("rdma read completion\n");
                        cb.state = State.RDMA_READ_COMPLETE;
                        cb.sem.release();
                    }
                    case RECV -> {
                        debug("recv completion\n");
                        int ret = cb.server ? serverRecv(cb, wc) : clientRecv(cb, wc);
                        if (ret != 0) {
                            err.printf("recv wc error: %d\n", ret);
                            return error(cb, ret);
                        }
                        try {
                            cb.qp.postReceive(cb.rqWr, 1);
                        } catch (RuntimeException e) {
                            err.print("post recv error: " + e.getMessage() + "\n");
                            return error(cb, -1);
                        }
                        cb.sem.release();
                    }
                    default -> {
                        debug("unknown!!!!! completion\n");
                        return error(cb, -1);
                    }
                }
            }
        } catch (RuntimeException e) {
            err.print("poll error " + e.getMessage() + "\n");
            return error(cb, -1);
        }
        return flushed ? 1 : 0;
    }

    private static int error(Cb cb, int ret) {
        cb.state = State.ERROR;
        cb.sem.release();
        return ret;
    }

    private int serverRecv(Cb cb, WorkCompletion wc) {
        if (wc.byteLength() != INFO_SIZE) {
            err.printf("Received bogus data, size %d\n", wc.byteLength());
            return -1;
        }
        cb.remoteRkey = cb.recvBuf.get(BE32, 8);
        cb.remoteAddr = cb.recvBuf.get(BE64, 0);
        cb.remoteLen = cb.recvBuf.get(BE32, 12);
        debug("Received rkey %x addr %x len %d from peer\n", cb.remoteRkey, cb.remoteAddr, cb.remoteLen);
        State s = cb.state;
        if (s.code() <= State.CONNECTED.code() || s == State.RDMA_WRITE_COMPLETE) {
            cb.state = State.RDMA_READ_ADV;
        } else {
            cb.state = State.RDMA_WRITE_ADV;
        }
        return 0;
    }

    private int clientRecv(Cb cb, WorkCompletion wc) {
        if (wc.byteLength() != INFO_SIZE) {
            err.printf("Received bogus data, size %d\n", wc.byteLength());
            return -1;
        }
        cb.state = cb.state == State.RDMA_READ_ADV ? State.RDMA_WRITE_ADV : State.RDMA_WRITE_COMPLETE;
        return 0;
    }

    private ConnectionParameters connParam(Cb cb) {
        return new ConnectionParameters(new byte[0], 1, 1, false, 7, 7, false, selfCreateQp ? cb.qp.qpNum() : 0);
    }

    /** With -q: the queue pair through INIT, RTR and RTS with the attributes the connection manager gives. */
    private static void selfModifyQp(Cb cb, CmId id) {
        for (QpState s : new QpState[]{QpState.INIT, QpState.RTR, QpState.RTS}) {
            cb.qp.modify(id.initQueuePairAttributes(s));
        }
    }

    private int accept(Cb cb) {
        debug("accepting client connection request\n");
        try {
            if (selfCreateQp) {
                selfModifyQp(cb, cb.childId);
                cb.childId.accept(connParam(cb));
            } else {
                cb.childId.accept(null);
            }
        } catch (RuntimeException e) {
            err.print("rdma_accept: " + e.getMessage() + "\n");
            return -1;
        }
        if (!cb.await() || cb.state == State.ERROR) {
            err.printf("wait for CONNECTED state %d\n", cb.state.code());
            return -1;
        }
        return 0;
    }

    private int disconnect(Cb cb, CmId id) {
        try {
            if (selfCreateQp) {
                cb.qp.modify(new QueuePairAttributes().state(QpState.ERR));
            }
            id.disconnect();
            return 0;
        } catch (RuntimeException e) {
            return -1;
        }
    }

    private int testServer(Cb cb) {
        int ret = 0;
        while (true) {
            // wait for the client's source address, key and length
            if (!cb.await() || cb.state != State.RDMA_READ_ADV) {
                err.printf("wait for RDMA_READ_ADV state %d\n", cb.state.code());
                ret = -1;
                break;
            }
            debug("server received sink adv\n");
            try {
                cb.rdmaSqWr.get(0).opcode(Opcode.RDMA_READ).rdma(cb.remoteAddr, cb.remoteRkey);
                cb.rdmaSqWr.get(0).sge(cb.rdmaMr, 0, cb.remoteLen);
            } catch (RuntimeException e) {
                err.print("post send error " + e.getMessage() + "\n");
                ret = -1;
                break;
            }
            if (!postSend(cb, cb.rdmaSqWr)) {
                ret = -1;
                break;
            }
            debug("server posted rdma read req \n");
            if (!cb.await() || cb.state != State.RDMA_READ_COMPLETE) {
                err.printf("wait for RDMA_READ_COMPLETE state %d\n", cb.state.code());
                ret = -1;
                break;
            }
            debug("server received read complete\n");
            if (verbose > 0) {
                out.printf("server ping data: %s\n", cString(cb.rdmaBuf));
            }
            // tell the client to continue
            if (!postSend(cb, cb.sqWr)) {
                ret = -1;
                break;
            }
            debug("server posted go ahead\n");
            if (!cb.await() || cb.state != State.RDMA_WRITE_ADV) {
                err.printf("wait for RDMA_WRITE_ADV state %d\n", cb.state.code());
                ret = -1;
                break;
            }
            debug("server received sink adv\n");
            int len = (int) strlen(cb.rdmaBuf) + 1;
            cb.rdmaSqWr.get(0).opcode(Opcode.RDMA_WRITE).rdma(cb.remoteAddr, cb.remoteRkey);
            cb.rdmaSqWr.get(0).sge(cb.rdmaMr, 0, len);
            debug("rdma write from lkey %x laddr %x len %d\n", cb.rdmaMr.lkey(), cb.rdmaMr.address(), len);
            if (!postSend(cb, cb.rdmaSqWr)) {
                ret = -1;
                break;
            }
            if (!cb.await() || cb.state != State.RDMA_WRITE_COMPLETE) {
                err.printf("wait for RDMA_WRITE_COMPLETE state %d\n", cb.state.code());
                ret = -1;
                break;
            }
            debug("server rdma write complete \n");
            // tell the client to begin again
            if (!postSend(cb, cb.sqWr)) {
                ret = -1;
                break;
            }
            debug("server posted go ahead\n");
        }
        return cb.state == State.DISCONNECTED ? 0 : ret;
    }

    private int bindServer(Cb cb) {
        try {
            cb.cmId.bind(new InetSocketAddress(address, port));
        } catch (RuntimeException e) {
            err.print("rdma_bind_addr: " + e.getMessage() + "\n");
            return -1;
        }
        debug("rdma_bind_addr successful\n");
        debug("rdma_listen\n");
        try {
            cb.cmId.listen(3);
        } catch (RuntimeException e) {
            err.print("rdma_listen: " + e.getMessage() + "\n");
            return -1;
        }
        return 0;
    }

    private int runServer(Cb cb) {
        int ret = bindServer(cb);
        if (ret != 0) {
            return ret;
        }
        if (!cb.await() || cb.state != State.CONNECT_REQUEST) {
            if (fatal != Integer.MIN_VALUE) {
                return fatal;
            }
            err.printf("wait for CONNECT_REQUEST state %d\n", cb.state.code());
            return -1;
        }
        return serveConnection(cb, false);
    }

    /** Set up, accept and serve the connection request in {@code cb.childId}; clean up. */
    private int serveConnection(Cb cb, boolean persistent) {
        int ret = setupQp(cb, cb.childId);
        if (ret != 0) {
            err.printf("setup_qp failed: %d\n", ret);
            cb.childId.close();
            return ret;
        }
        try {
            ret = setupBuffers(cb);
            if (ret != 0) {
                err.printf("rping_setup_buffers failed: %d\n", ret);
                return ret;
            }
            try {
                if (!postReceive(cb)) {
                    return -1;
                }
                startCqThread(cb);
                try {
                    ret = accept(cb);
                    if (ret != 0) {
                        err.printf("connect error %d\n", ret);
                        return fatal != Integer.MIN_VALUE ? fatal : ret;
                    }
                    ret = testServer(cb);
                    if (ret != 0 && !persistent) {
                        err.printf("rping server failed: %d\n", ret);
                    }
                    disconnect(cb, cb.childId);
                } finally {
                    stopCqThread(cb);
                }
            } finally {
                freeBuffers(cb);
            }
        } finally {
            freeQp(cb);
            children.remove(cb.childId);
            cb.childId.close();
            cb.releaseWrs();
        }
        return fatal != Integer.MIN_VALUE ? fatal : ret;
    }

    private int runPersistentServer(Cb listener) {
        int ret = bindServer(listener);
        if (ret != 0) {
            return ret;
        }
        while (true) {
            if (!listener.await() || listener.state != State.CONNECT_REQUEST) {
                if (fatal != Integer.MIN_VALUE) {
                    return fatal;
                }
                err.printf("wait for CONNECT_REQUEST state %d\n", listener.state.code());
                return -1;
            }
            Cb cb = new Cb(listener);
            children.put(cb.childId, cb);
            Thread.ofPlatform().name("rping-conn").daemon().start(() -> serveConnection(cb, true));
        }
    }

    private int testClient(Cb cb) {
        int ret = 0;
        int start = 65;
        for (int ping = 0; count == 0 || ping < count; ping++) {
            cb.state = State.RDMA_READ_ADV;
            byte[] head = String.format("rdma-ping-%d: ", ping).getBytes(StandardCharsets.US_ASCII);
            int cc = Math.min(head.length, size - 1);
            MemorySegment.copy(head, 0, cb.startBuf, ValueLayout.JAVA_BYTE, 0, cc);
            int c = start;
            for (int i = cc; i < size; i++) {
                cb.startBuf.set(ValueLayout.JAVA_BYTE, i, (byte) c);
                c++;
                if (c > 122) {
                    c = 65;
                }
            }
            start++;
            if (start > 122) {
                start = 65;
            }
            cb.startBuf.set(ValueLayout.JAVA_BYTE, size - 1, (byte) 0);

            formatSend(cb, cb.startMr);
            if (!postSend(cb, cb.sqWr)) {
                ret = -1;
                break;
            }
            // wait for the server to ACK
            if (!cb.await() || cb.state != State.RDMA_WRITE_ADV) {
                err.printf("wait for RDMA_WRITE_ADV state %d\n", cb.state.code());
                ret = -1;
                break;
            }
            formatSend(cb, cb.rdmaMr);
            if (!postSend(cb, cb.sqWr)) {
                ret = -1;
                break;
            }
            // wait for the server to say the RDMA write is complete
            if (!cb.await() || cb.state != State.RDMA_WRITE_COMPLETE) {
                err.printf("wait for RDMA_WRITE_COMPLETE state %d\n", cb.state.code());
                ret = -1;
                break;
            }
            if (validate > 0 && cb.startBuf.mismatch(cb.rdmaBuf) != -1) {
                err.print("data mismatch!\n");
                ret = -1;
                break;
            }
            if (verbose > 0) {
                out.printf("ping data: %s\n", cString(cb.rdmaBuf));
            }
        }
        return cb.state == State.DISCONNECTED ? 0 : ret;
    }

    private void formatSend(Cb cb, MemoryRegion mr) {
        cb.sendBuf.set(BE64, 0, mr.remoteAddress());
        cb.sendBuf.set(BE32, 8, mr.rkey());
        cb.sendBuf.set(BE32, 12, size);
        debug("RDMA addr %x rkey %x len %d\n", mr.remoteAddress(), mr.rkey(), size);
    }

    private int connectClient(Cb cb) {
        try {
            cb.cmId.connect(connParam(cb));
        } catch (RuntimeException e) {
            err.print("rdma_connect: " + e.getMessage() + "\n");
            return -1;
        }
        if (!cb.await() || cb.state != State.CONNECTED) {
            if (fatal == Integer.MIN_VALUE) {
                err.printf("wait for CONNECTED state %d\n", cb.state.code());
            }
            return -1;
        }
        if (selfCreateQp) {
            try {
                selfModifyQp(cb, cb.cmId);
            } catch (RuntimeException e) {
                err.print("rping_modify_qp: " + e.getMessage() + "\n");
                return -1;
            }
            try {
                cb.cmId.establish();
            } catch (RuntimeException e) {
                err.print("rdma_establish: " + e.getMessage() + "\n");
                return -1;
            }
        }
        debug("rdma_connect successful\n");
        return 0;
    }

    private int bindClient(Cb cb) {
        try {
            cb.cmId.resolveAddress(source == null ? null : new InetSocketAddress(source, 0),
                    new InetSocketAddress(address, port), RESOLVE_TIMEOUT);
        } catch (RuntimeException e) {
            err.print("rdma_resolve_addr: " + e.getMessage() + "\n");
            return -1;
        }
        if (!cb.await() || cb.state != State.ROUTE_RESOLVED) {
            if (fatal == Integer.MIN_VALUE) {
                err.printf("waiting for addr/route resolution state %d\n", cb.state.code());
            }
            return -1;
        }
        debug("rdma_resolve_addr - rdma_resolve_route successful\n");
        return 0;
    }

    private int runClient(Cb cb) {
        try {
            int ret = bindClient(cb);
            if (ret != 0) {
                return fatal != Integer.MIN_VALUE ? fatal : ret;
            }
            ret = setupQp(cb, cb.cmId);
            if (ret != 0) {
                err.printf("setup_qp failed: %d\n", ret);
                return ret;
            }
            try {
                ret = setupBuffers(cb);
                if (ret != 0) {
                    err.printf("rping_setup_buffers failed: %d\n", ret);
                    return ret;
                }
                try {
                    if (!postReceive(cb)) {
                        return -1;
                    }
                    startCqThread(cb);
                    try {
                        ret = connectClient(cb);
                        if (ret != 0) {
                            if (fatal != Integer.MIN_VALUE) {
                                return fatal;
                            }
                            err.printf("connect error %d\n", ret);
                            return ret;
                        }
                        ret = testClient(cb);
                        if (ret != 0) {
                            err.printf("rping client failed: %d\n", ret);
                        }
                        disconnect(cb, cb.cmId);
                    } finally {
                        stopCqThread(cb);
                    }
                } finally {
                    freeBuffers(cb);
                }
            } finally {
                freeQp(cb);
            }
            return fatal != Integer.MIN_VALUE ? fatal : ret;
        } finally {
            cb.releaseWrs();
        }
    }

    private static long strlen(MemorySegment s) {
        for (long i = 0; i < s.byteSize(); i++) {
            if (s.get(ValueLayout.JAVA_BYTE, i) == 0) {
                return i;
            }
        }
        return s.byteSize();
    }

    private static String cString(MemorySegment s) {
        byte[] b = s.asSlice(0, strlen(s)).toArray(ValueLayout.JAVA_BYTE);
        return new String(b, StandardCharsets.ISO_8859_1);
    }
}
