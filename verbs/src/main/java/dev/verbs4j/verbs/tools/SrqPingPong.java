package dev.verbs4j.verbs.tools;

import dev.verbs4j.verbs.Access;
import dev.verbs4j.verbs.AddressVector;
import dev.verbs4j.verbs.CompletionChannel;
import dev.verbs4j.verbs.CompletionQueue;
import dev.verbs4j.verbs.Context;
import dev.verbs4j.verbs.Device;
import dev.verbs4j.verbs.DeviceAttributes;
import dev.verbs4j.verbs.Errno;
import dev.verbs4j.verbs.Gid;
import dev.verbs4j.verbs.LinkLayer;
import dev.verbs4j.verbs.MemoryRegion;
import dev.verbs4j.verbs.Mtu;
import dev.verbs4j.verbs.Opcode;
import dev.verbs4j.verbs.OutOfBandExchange;
import dev.verbs4j.verbs.PortAttributes;
import dev.verbs4j.verbs.ProtectionDomain;
import dev.verbs4j.verbs.QpState;
import dev.verbs4j.verbs.QpType;
import dev.verbs4j.verbs.QueuePair;
import dev.verbs4j.verbs.QueuePairAttributes;
import dev.verbs4j.verbs.QueuePairEndpoint;
import dev.verbs4j.verbs.QueuePairInit;
import dev.verbs4j.verbs.ReceiveRequests;
import dev.verbs4j.verbs.SendFlags;
import dev.verbs4j.verbs.SendRequests;
import dev.verbs4j.verbs.SharedReceiveQueue;
import dev.verbs4j.verbs.VerbsException;
import dev.verbs4j.verbs.WorkCompletion;
import dev.verbs4j.verbs.WorkCompletions;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;

/**
 * {@code srq_pingpong}: the Java twin of rdma-core's {@code ibv_srq_pingpong}, a ping-pong of SEND
 * messages over several reliable connected (RC) queue pairs that take their receive buffers from
 * one shared receive queue, with the same options, output, exit codes and TCP exchange, so that
 * either side can be the C program.
 *
 * <p>The exchange is that of the other pingpongs ({@link OutOfBandExchange}), repeated: each side
 * sends one {@code "%04x:%06x:%06x:%s"} message for each of the C tool's 256 queue pair slots (the
 * unused ones all zeros), the client first; the server connects its queue pairs, answers with its
 * own 256 messages, and the client ends with {@code "done"}. Without a host argument it is the
 * server; with one, the client. Each run owns and frees the verbs objects it creates.
 */
public final class SrqPingPong {

    private static final String PROGRAM = "srq_pingpong";
    private static final String SHORT_OPTIONS = "p:d:i:s:m:q:r:n:l:eog:c";

    private static final int RECV_WRID = 1;
    private static final int SEND_WRID = 2;
    /** The C tool's slot count: it always exchanges this many endpoints. */
    static final int MAX_QP = 256;
    private static final int PAGE_SIZE = 4096;
    private static final Duration EVENT_SLICE = Duration.ofMillis(200);

    private static final int ODP_SUPPORT = 1;
    private static final int ODP_SUPPORT_SEND = 1;
    private static final int ODP_SUPPORT_SRQ_RECV = 1 << 5;

    private final PrintStream out;
    private final PrintStream err;

    // options, with the C defaults
    private String ibDevName;
    private String serverName;
    private int tcpPort = OutOfBandExchange.DEFAULT_PORT;
    private int ibPort = 1;
    private long size = 4096;
    private Mtu mtu = Mtu.MTU_1024;
    private long numQp = 16;
    private long rxDepth = 500;
    private long iters = 1000;
    private int sl;
    private boolean useEvent;
    private int gidx = -1;
    private boolean useOdp;
    private boolean validateBuf;

    // the run's objects
    private Arena bufferArena;
    private MemorySegment buf;
    private Context context;
    private CompletionChannel channel;
    private ProtectionDomain pd;
    private MemoryRegion mr;
    private CompletionQueue cq;
    private SharedReceiveQueue srq;
    private QueuePair[] qps;
    private int qpCount;
    private int sendFlags = SendFlags.SIGNALED;
    private ReceiveRequests recv;
    private SendRequests send;
    private WorkCompletions wcs;
    private int[] pending;
    private int routs;
    private long rcnt;
    private long scnt;

    /** A run that ends with the status to return, after its message went to stderr. */
    private static final class Exit extends Exception {

        private static final long serialVersionUID = 1L;

        final int status;

        Exit(int status) {
            super(null, null, false, false);
            this.status = status;
        }
    }

    private SrqPingPong(PrintStream out, PrintStream err) {
        this.out = out;
        this.err = err;
    }

    /** Runs the tool and exits with its status. */
    public static void main(String[] args) {
        int rc = run(args, System.out, System.err);
        System.out.flush();
        System.exit(rc & 0xff);
    }

    /**
     * Runs the tool, writing to {@code out} and {@code err}; returns what {@code ibv_srq_pingpong}
     * returns. Interrupting the calling thread ends a run that waits (for the peer or for
     * completions) with status 1.
     */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        SrqPingPong p = new SrqPingPong(out, err);
        try {
            return p.execute(args);
        } catch (Exit e) {
            return e.status;
        } finally {
            p.release();
            out.flush();
            err.flush();
        }
    }

    private int execute(String[] args) throws Exit {
        Integer bad = parse(args);
        if (bad != null) {
            return bad;
        }
        if (numQp > rxDepth) {
            return fail("rx_depth " + (int) rxDepth + " is too small for " + (int) numQp
                    + " QPs -- must have at least one receive per QP.");
        }
        if (numQp >= MAX_QP) {
            return fail("num_qp " + (int) numQp + " must be less than " + (MAX_QP - 1));
        }
        qpCount = (int) numQp;
        int numWc = checkedInt(numQp + rxDepth);

        Device device = findDevice();
        initContext(device);

        postReceives(checkedInt(rxDepth));
        if (routs < rxDepth) {
            return fail("Couldn't post receive (" + routs + ")");
        }
        if (useEvent) {
            try {
                cq.requestNotify(false);
            } catch (RuntimeException e) {
                return fail("Couldn't request CQ notification");
            }
        }

        PortAttributes portInfo;
        try {
            portInfo = context.queryPort(ibPort);
        } catch (RuntimeException e) {
            return fail("Couldn't get port info");
        }
        QueuePairEndpoint[] local = new QueuePairEndpoint[MAX_QP];
        Gid zero = Gid.of(new byte[Gid.BYTES]);
        java.util.Arrays.fill(local, new QueuePairEndpoint(0, 0, 0, zero));
        for (int i = 0; i < qpCount; ++i) {
            int lid = portInfo.lid();
            if (portInfo.linkLayer() != LinkLayer.ETHERNET && lid == 0) {
                return fail("Couldn't get local LID");
            }
            Gid gid = zero;
            if (gidx >= 0) {
                try {
                    gid = context.queryGid(ibPort, gidx);
                } catch (RuntimeException e) {
                    return fail("Could not get local gid for gid index " + gidx);
                }
            }
            local[i] = new QueuePairEndpoint(lid, qps[i].qpNum(), ThreadLocalRandom.current().nextInt() & 0xffffff, gid);
            out.print(String.format(Locale.ROOT, "  local address:  LID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID %s\n",
                    local[i].lid(), local[i].qpn(), local[i].psn(), local[i].gid()));
        }

        QueuePairEndpoint[] remote = serverName != null ? clientExchange(local) : serverExchange(local);
        for (int i = 0; i < qpCount; ++i) {
            out.print(String.format(Locale.ROOT, "  remote address: LID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID %s\n",
                    remote[i].lid(), remote[i].qpn(), remote[i].psn(), remote[i].gid()));
        }

        if (serverName != null && !connectQps(local, remote)) {
            return 1;
        }

        send = new SendRequests(1, 1);
        send.get(0).wrId(SEND_WRID).opcode(Opcode.SEND).flags(sendFlags).sge(mr, 0, (int) size);
        wcs = new WorkCompletions(Math.max(1, numWc));

        pending = new int[qpCount];
        if (serverName != null) {
            if (validateBuf) {
                for (long i = 0; i < size; i += PAGE_SIZE) {
                    buf.set(ValueLayout.JAVA_BYTE, i, (byte) 0);
                }
            }
            for (int i = 0; i < qpCount; ++i) {
                if (!postSend(i)) {
                    return fail("Couldn't post send");
                }
                pending[i] = SEND_WRID | RECV_WRID;
            }
        } else {
            java.util.Arrays.fill(pending, RECV_WRID);
        }

        long start = System.nanoTime();
        int numCqEvents = 0;
        rcnt = 0;
        scnt = 0;
        while (rcnt < iters || scnt < iters) {
            if (useEvent) {
                CompletionQueue evCq;
                try {
                    evCq = awaitEvent();
                } catch (InterruptedIOException e) {
                    return fail(PROGRAM + ": interrupted");
                } catch (RuntimeException e) {
                    return fail("Failed to get cq_event");
                }
                ++numCqEvents;
                if (evCq != cq) {
                    return fail("CQ event for unknown CQ " + evCq);
                }
                try {
                    cq.requestNotify(false);
                } catch (RuntimeException e) {
                    return fail("Couldn't request CQ notification");
                }
            }
            int ne;
            do {
                try {
                    ne = cq.poll(wcs);
                } catch (VerbsException e) {
                    return fail("poll CQ failed " + -e.errno());
                }
                if (ne < 1 && Thread.currentThread().isInterrupted()) {
                    return fail(PROGRAM + ": interrupted");
                }
            } while (!useEvent && ne < 1);

            for (int i = 0; i < ne; ++i) {
                if (!completion(wcs.get(i))) {
                    return 1;
                }
            }
        }
        long usecExact = (System.nanoTime() - start) / 1000;

        // as C: float microseconds, double arithmetic from there
        float usec = usecExact;
        long bytes = size * iters * 2;
        out.print(bytes + " bytes in " + PingPong.fixed2(usec / 1000000.) + " seconds = "
                + PingPong.fixed2(bytes * 8. / usec) + " Mbit/sec\n");
        out.print((int) iters + " iters in " + PingPong.fixed2(usec / 1000000.) + " seconds = "
                + PingPong.fixed2(usec / (float) iters) + " usec/iter\n");

        if (serverName == null && validateBuf) {
            for (long i = 0; i < size; i += PAGE_SIZE) {
                if (buf.get(ValueLayout.JAVA_BYTE, i) != 0) {
                    out.print("invalid data in page " + i / PAGE_SIZE + "\n");
                }
            }
        }
        if (numCqEvents > 0) {
            cq.ackEvents();
        }
        return closeAll();
    }

    // ---- options ----

    /** Reads the options; returns the status to exit with when they are wrong, else null. */
    private Integer parse(String[] args) {
        Getopt opts = new Getopt(PROGRAM, args, SHORT_OPTIONS,
                "port:p", "ib-dev:d", "ib-port:i", "size:s", "mtu:m", "num-qp:q", "rx-depth:r", "iters:n", "sl:l",
                "events:e", "odp:o", "gid-idx:g", "chk:c");
        for (int c; (c = opts.next(err)) != -1; ) {
            String arg = opts.argument();
            switch (c) {
                case 'p' -> {
                    int v = Getopt.strtol(arg);
                    if (v < 0 || v > 65535) {
                        usage();
                        return 1;
                    }
                    tcpPort = v;
                }
                case 'd' -> ibDevName = arg;
                case 'i' -> {
                    ibPort = Getopt.strtol(arg);
                    if (ibPort < 1) {
                        usage();
                        return 1;
                    }
                }
                case 's' -> {
                    size = unsigned(arg);
                    if (size < 1) {
                        usage();
                        return 1;
                    }
                }
                case 'm' -> {
                    mtu = switch (Getopt.strtol(arg)) {
                        case 256 -> Mtu.MTU_256;
                        case 512 -> Mtu.MTU_512;
                        case 1024 -> Mtu.MTU_1024;
                        case 2048 -> Mtu.MTU_2048;
                        case 4096 -> Mtu.MTU_4096;
                        default -> null;
                    };
                    if (mtu == null) {
                        usage();
                        return 1;
                    }
                }
                case 'q' -> numQp = unsigned(arg);
                case 'r' -> rxDepth = unsigned(arg);
                case 'n' -> iters = unsigned(arg);
                case 'l' -> sl = Getopt.strtol(arg);
                case 'e' -> useEvent = true;
                case 'g' -> gidx = Getopt.strtol(arg);
                case 'o' -> useOdp = true;
                case 'c' -> validateBuf = true;
                default -> {
                    usage();
                    return 1;
                }
            }
        }
        List<String> operands = opts.operands();
        if (operands.size() == 1) {
            serverName = operands.get(0);
        } else if (operands.size() > 1) {
            usage();
            return 1;
        }
        return null;
    }

    /** {@code strtoul()} into an unsigned int, as the C tool stores sizes and counts. */
    private static long unsigned(String arg) {
        return Integer.toUnsignedLong(Getopt.strtol(arg));
    }

    private void usage() {
        String p = PROGRAM;
        out.print("Usage:\n"
                + "  " + p + "            start a server and wait for connection\n"
                + "  " + p + " <host>     connect to server at <host>\n"
                + "\n"
                + "Options:\n"
                + "  -p, --port=<port>      listen on/connect to port <port> (default 18515)\n"
                + "  -d, --ib-dev=<dev>     use IB device <dev> (default first device found)\n"
                + "  -i, --ib-port=<port>   use port <port> of IB device (default 1)\n"
                + "  -s, --size=<size>      size of message to exchange (default 4096)\n"
                + "  -m, --mtu=<size>       path MTU (default 1024)\n"
                + "  -q, --num-qp=<num>     number of QPs to use (default 16)\n"
                + "  -r, --rx-depth=<dep>   number of receives to post at a time (default 500)\n"
                + "  -n, --iters=<iters>    number of exchanges per QP(default 1000)\n"
                + "  -l, --sl=<sl>          service level value\n"
                + "  -e, --events           sleep on CQ events (default poll)\n"
                + "  -g, --gid-idx=<gid index> local port gid index\n"
                + "  -o, --odp\t\t    use on demand paging\n"
                + "  -c, --chk              validate received buffer\n");
    }

    // ---- set-up ----

    private Device findDevice() throws Exit {
        List<Device> devices;
        try {
            devices = Device.list();
        } catch (VerbsException e) {
            throw exit("Failed to get IB devices list: " + Errno.message(e.errno()));
        }
        if (ibDevName == null) {
            if (devices.isEmpty()) {
                throw exit("No IB devices found");
            }
            return devices.get(0);
        }
        for (Device d : devices) {
            if (d.name().equals(ibDevName)) {
                return d;
            }
        }
        throw exit("IB device " + ibDevName + " not found");
    }

    /** What the C tool's {@code pp_init_ctx()} does, in its order and with its messages. */
    private void initContext(Device device) throws Exit {
        try {
            bufferArena = Arena.ofShared();
            buf = bufferArena.allocate(size, PAGE_SIZE);
        } catch (RuntimeException | OutOfMemoryError e) {
            throw exit("Couldn't allocate work buf.");
        }
        buf.fill((byte) 0);

        try {
            context = device.open();
        } catch (RuntimeException e) {
            throw exit("Couldn't get context for " + device.name());
        }
        int access = Access.LOCAL_WRITE;
        if (useOdp) {
            DeviceAttributes attrs;
            try {
                attrs = context.queryDevice();
            } catch (RuntimeException e) {
                throw exit("Couldn't query device for its features");
            }
            int rcCaps = ODP_SUPPORT_SEND | ODP_SUPPORT_SRQ_RECV;
            if ((attrs.odpGeneralCaps() & ODP_SUPPORT) == 0 || (attrs.odpRcCaps() & rcCaps) != rcCaps) {
                throw exit("The device isn't ODP capable or does not support RC send, receive and srq with ODP");
            }
            access |= Access.ON_DEMAND;
        }
        if (useEvent) {
            try {
                channel = context.createCompletionChannel();
            } catch (RuntimeException e) {
                throw exit("Couldn't create completion channel");
            }
        }
        try {
            pd = context.allocateProtectionDomain();
        } catch (RuntimeException e) {
            throw exit("Couldn't allocate PD");
        }
        try {
            mr = pd.register(buf, access);
        } catch (RuntimeException e) {
            throw exit("Couldn't register MR");
        }
        try {
            cq = context.createCompletionQueue(checkedInt(rxDepth + numQp), channel, 0);
        } catch (RuntimeException e) {
            throw exit("Couldn't create CQ");
        }
        try {
            srq = pd.createSharedReceiveQueue(checkedInt(rxDepth), 1);
        } catch (RuntimeException e) {
            throw exit("Couldn't create SRQ");
        }
        qps = new QueuePair[qpCount];
        for (int i = 0; i < qpCount; ++i) {
            try {
                qps[i] = pd.createQueuePair(QueuePairInit.of(QpType.RC, cq).sharedReceiveQueue(srq)
                        .maxSendWr(1).maxSendSge(1));
            } catch (RuntimeException e) {
                throw exit("Couldn't create QP[" + i + "]");
            }
            if (qps[i].maxInlineData() >= size) {
                sendFlags |= SendFlags.INLINE;
            }
        }
        for (int i = 0; i < qpCount; ++i) {
            try {
                qps[i].modify(new QueuePairAttributes().state(QpState.INIT).pkeyIndex(0).port(ibPort).accessFlags(0));
            } catch (RuntimeException e) {
                throw exit("Failed to modify QP[" + i + "] to INIT");
            }
        }
        recv = new ReceiveRequests(1, 1);
        recv.get(0).wrId(RECV_WRID).sge(mr, 0, (int) size);
    }

    /** Posts {@code n} receives to the SRQ one at a time, as C does; adds the number posted to {@link #routs}. */
    private void postReceives(int n) {
        for (int i = 0; i < n; ++i) {
            try {
                srq.postReceive(recv, 1);
            } catch (RuntimeException e) {
                return;
            }
            ++routs;
        }
    }

    private boolean postSend(int qpIndex) {
        try {
            qps[qpIndex].postSend(send, 1);
            return true;
        } catch (RuntimeException e) {
            return false;
        }
    }

    // ---- the exchange ----

    private QueuePairEndpoint[] clientExchange(QueuePairEndpoint[] local) throws Exit {
        OutOfBandExchange x;
        try {
            x = OutOfBandExchange.connect(serverName, tcpPort, null, null);
        } catch (UnknownHostException e) {
            throw exit("Name or service not known for " + serverName + ":" + tcpPort);
        } catch (IOException | RuntimeException e) {
            throw exit("Couldn't connect to " + serverName + ":" + tcpPort);
        }
        try (x) {
            try {
                sendAll(x, local);
            } catch (IOException e) {
                throw exit("Couldn't send local address");
            }
            QueuePairEndpoint[] remote = receiveAll(x, "client read");
            try {
                x.sendDone();
            } catch (IOException e) {
                err.print("client write: " + e.getMessage() + "\n");
                throw new Exit(1);
            }
            return remote;
        } catch (IOException closing) {
            throw exit("Couldn't read/write remote address");
        }
    }

    private QueuePairEndpoint[] serverExchange(QueuePairEndpoint[] local) throws Exit {
        OutOfBandExchange x;
        try {
            x = OutOfBandExchange.accept(tcpPort, null, null);
        } catch (InterruptedIOException e) {
            throw exit("accept() failed");
        } catch (IOException | RuntimeException e) {
            throw exit("Couldn't listen to port " + tcpPort);
        }
        try (x) {
            QueuePairEndpoint[] remote = receiveAll(x, "server read");
            if (!connectQps(local, remote)) {
                throw exit("Couldn't connect to remote QP");
            }
            try {
                sendAll(x, local);
            } catch (IOException e) {
                throw exit("Couldn't send local address");
            }
            try {
                x.receiveDone();
            } catch (IOException e) {
                err.print("client write: " + e.getMessage() + "\n");
                throw new Exit(1);
            }
            return remote;
        } catch (IOException closing) {
            throw exit("Couldn't send/recv local address");
        }
    }

    /** Sends all {@link #MAX_QP} local messages, the unused slots included. */
    private static void sendAll(OutOfBandExchange x, QueuePairEndpoint[] local) throws IOException {
        for (QueuePairEndpoint e : local) {
            x.send(e);
        }
    }

    /** Reads the peer's {@link #MAX_QP} messages, as C does whatever the number of queue pairs. */
    private QueuePairEndpoint[] receiveAll(OutOfBandExchange x, String who) throws Exit {
        QueuePairEndpoint[] remote = new QueuePairEndpoint[MAX_QP];
        for (int i = 0; i < MAX_QP; ++i) {
            try {
                remote[i] = x.receive();
            } catch (IOException e) {
                int n = e instanceof OutOfBandExchange.ShortMessageException s ? s.received() : -1;
                err.print(who + ": " + e.getMessage() + "\n");
                throw exit(n + "/" + OutOfBandExchange.MESSAGE_BYTES + ": Couldn't read remote address [" + i + "]");
            }
        }
        return remote;
    }

    /** The C tool's {@code pp_connect_ctx()}: false after printing why it failed. */
    private boolean connectQps(QueuePairEndpoint[] my, QueuePairEndpoint[] dest) {
        // as C, the first remote GID decides whether there is a GRH, and is the destination of all
        boolean global = dest[0].gid().interfaceId() != 0;
        for (int i = 0; i < qpCount; ++i) {
            AddressVector av = new AddressVector(ibPort, dest[i].lid(), sl, global ? dest[0].gid() : null, gidx,
                    global ? 1 : 0, 0, 0);
            QueuePairAttributes rtr = new QueuePairAttributes().state(QpState.RTR).addressVector(av).pathMtu(mtu)
                    .destQpn(dest[i].qpn()).rqPsn(dest[i].psn()).maxDestRdAtomic(1).minRnrTimer(12);
            try {
                qps[i].modify(rtr);
            } catch (RuntimeException e) {
                err.print("Failed to modify QP[" + i + "] to RTR\n");
                return false;
            }
            QueuePairAttributes rts = new QueuePairAttributes().state(QpState.RTS).sqPsn(my[i].psn())
                    .timeout(14).retryCount(7).rnrRetry(7).maxRdAtomic(1);
            try {
                qps[i].modify(rts);
            } catch (RuntimeException e) {
                err.print("Failed to modify QP[" + i + "] to RTS\n");
                return false;
            }
        }
        return true;
    }

    // ---- the ping-pong ----

    private CompletionQueue awaitEvent() throws InterruptedIOException {
        while (true) {
            CompletionQueue c = channel.await(EVENT_SLICE);
            if (c != null) {
                return c;
            }
            if (Thread.currentThread().isInterrupted()) {
                throw new InterruptedIOException();
            }
        }
    }

    private int findQp(int qpn) {
        for (int i = 0; i < qpCount; ++i) {
            if (qps[i].qpNum() == qpn) {
                return i;
            }
        }
        return -1;
    }

    /** The C tool's handling of one work completion: false after printing why the run ends. */
    private boolean completion(WorkCompletion wc) {
        int wrId = (int) wc.wrId();
        if (!wc.isSuccess()) {
            err.print("Failed status " + wc.status().description() + " (" + wc.statusCode() + ") for wr_id " + wrId + "\n");
            return false;
        }
        int qpIndex = findQp(wc.qpNum());
        if (qpIndex < 0) {
            err.print(String.format(Locale.ROOT, "Couldn't find QPN %06x\n", wc.qpNum()));
            return false;
        }
        switch (wrId) {
            case SEND_WRID -> ++scnt;
            case RECV_WRID -> {
                if (--routs <= qpCount) {
                    postReceives(checkedInt(rxDepth - routs));
                    if (routs < rxDepth) {
                        err.print("Couldn't post receive (" + routs + ")\n");
                        return false;
                    }
                }
                ++rcnt;
            }
            default -> {
                err.print("Completion for unknown wr_id " + wrId + "\n");
                return false;
            }
        }
        pending[qpIndex] &= ~wrId;
        if (scnt < iters && pending[qpIndex] == 0) {
            if (!postSend(qpIndex)) {
                err.print("Couldn't post send\n");
                return false;
            }
            pending[qpIndex] = RECV_WRID | SEND_WRID;
        }
        return true;
    }

    // ---- tear-down ----

    /** Frees everything in C's order, with its messages; returns the exit status. */
    private int closeAll() throws Exit {
        for (int i = 0; i < qpCount; ++i) {
            close(qps[i], "Couldn't destroy QP[" + i + "]");
        }
        close(srq, "Couldn't destroy SRQ");
        close(cq, "Couldn't destroy CQ");
        close(mr, "Couldn't deregister MR");
        close(pd, "Couldn't deallocate PD");
        if (channel != null) {
            close(channel, "Couldn't destroy completion channel");
        }
        close(context, "Couldn't release context");
        return 0;
    }

    private void close(AutoCloseable c, String message) throws Exit {
        try {
            c.close();
        } catch (Exception e) {
            throw exit(message);
        }
    }

    /** Frees whatever is left, quietly (after a failure or an interrupt). */
    private void release() {
        for (AutoCloseable c : new AutoCloseable[]{context, send, recv, wcs}) {
            if (c != null) {
                try {
                    c.close();
                } catch (Exception ignored) {
                    // best effort on the way out
                }
            }
        }
        if (bufferArena != null) {
            bufferArena.close();
        }
    }

    // ---- helpers ----

    private int fail(String message) {
        err.print(message + "\n");
        return 1;
    }

    private Exit exit(String message) {
        err.print(message + "\n");
        return new Exit(1);
    }

    private static int checkedInt(long v) {
        return (int) Math.min(Integer.MAX_VALUE, v);
    }
}
