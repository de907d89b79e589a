package dev.verbs4j.verbs.tools;

import dev.verbs4j.verbs.Access;
import dev.verbs4j.verbs.AddressHandle;
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
import dev.verbs4j.verbs.VerbsException;
import dev.verbs4j.verbs.WorkCompletion;
import dev.verbs4j.verbs.WorkCompletions;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The common body of {@link RcPingPong}, {@link UcPingPong} and {@link UdPingPong}: rdma-core's
 * {@code ibv_*_pingpong} examples redone on the verbs4j API, with their options, output, exit
 * codes and wire protocol ({@link OutOfBandExchange}). Each run owns the verbs objects and the
 * buffer it creates and frees them before returning.
 */
final class PingPong {

    /** The three transports, with what differs between the three C programs. */
    enum Transport {
        RC("rc_pingpong", QpType.RC, "p:d:i:s:m:r:n:l:eg:oOPtcjN", 4096),
        UC("uc_pingpong", QpType.UC, "p:d:i:s:m:r:n:l:eg:c", 4096),
        UD("ud_pingpong", QpType.UD, "p:d:i:s:r:n:l:eg:c", 1024);

        final String program;
        final QpType qpType;
        final String shortOptions;
        final int defaultSize;

        Transport(String program, QpType qpType, String shortOptions, int defaultSize) {
            this.program = program;
            this.qpType = qpType;
            this.shortOptions = shortOptions;
            this.defaultSize = defaultSize;
        }
    }

    private static final int RECV_WRID = 1;
    private static final int SEND_WRID = 2;
    private static final int PAGE_SIZE = 4096;
    /** UD receive buffers start with room for the 40-byte GRH. */
    private static final int GRH_BYTES = 40;
    private static final int UD_QKEY = 0x11111111;
    /** How long one wait for a completion event lasts before the interrupt flag is checked again. */
    private static final Duration EVENT_SLICE = Duration.ofMillis(200);

    private static final int ODP_SUPPORT = 1;
    private static final int ODP_SUPPORT_IMPLICIT = 1 << 1;
    private static final int ODP_SUPPORT_SEND = 1;
    private static final int ODP_SUPPORT_RECV = 1 << 1;

    private final Transport transport;
    private final PrintStream out;
    private final PrintStream err;

    // options, with the C defaults
    private String ibDevName;
    private String serverName;
    private int tcpPort = OutOfBandExchange.DEFAULT_PORT;
    private int ibPort = 1;
    private long size;
    private Mtu mtu = Mtu.MTU_1024;
    private long rxDepth = 500;
    private long iters = 1000;
    private int sl;
    private boolean useEvent;
    private int gidx = -1;
    private boolean useOdp;
    private boolean implicitOdp;
    private boolean prefetchMr;
    private boolean useTs;
    private boolean validateBuf;
    private boolean useDm;
    private boolean useNewSend;

    // the run's objects
    private Arena bufferArena;
    private MemorySegment buf;
    private Context context;
    private CompletionChannel channel;
    private ProtectionDomain pd;
    private MemoryRegion mr;
    private CompletionQueue cq;
    private QueuePair qp;
    private AddressHandle ah;
    private int sendFlags = SendFlags.SIGNALED;
    private ReceiveRequests recv;
    private SendRequests send;
    private WorkCompletions wcs;
    private int pending;
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

    private PingPong(Transport transport, PrintStream out, PrintStream err) {
        this.transport = transport;
        this.out = out;
        this.err = err;
        this.size = transport.defaultSize;
    }

    /** Runs {@code transport}'s tool with {@code args}; returns the C program's exit status. */
    static int run(Transport transport, String[] args, PrintStream out, PrintStream err) {
        PingPong p = new PingPong(transport, out, err);
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
        if (useOdp && useDm) {
            return fail("DM memory region can't be on demand");
        }
        if (!useOdp && prefetchMr) {
            return fail("prefetch is valid only with on-demand memory region");
        }
        if (useNewSend) {
            return fail(transport.program + ": -N/--new_send (the ibv_wr_* send API) is not supported by verbs4j");
        }

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
        int lid = portInfo.lid();
        if (transport != Transport.UD && portInfo.linkLayer() != LinkLayer.ETHERNET && lid == 0) {
            return fail("Couldn't get local LID");
        }
        Gid gid = Gid.of(new byte[Gid.BYTES]);
        if (gidx >= 0) {
            try {
                gid = context.queryGid(ibPort, gidx);
            } catch (RuntimeException e) {
                return fail(transport == Transport.UD ? "Could not get local gid for gid index " + gidx
                        : "can't read sgid of index " + gidx);
            }
        }
        QueuePairEndpoint local = new QueuePairEndpoint(lid, qp.qpNum(), ThreadLocalRandom.current().nextInt() & 0xffffff, gid);
        out.print(String.format(Locale.ROOT, "  local address:  LID 0x%04x, QPN 0x%06x, PSN 0x%06x%s GID %s\n",
                local.lid(), local.qpn(), local.psn(), transport == Transport.UD ? ":" : ",", local.gid()));

        QueuePairEndpoint remote = serverName != null ? clientExchange(local) : serverExchange(local);
        out.print(String.format(Locale.ROOT, "  remote address: LID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID %s\n",
                remote.lid(), remote.qpn(), remote.psn(), remote.gid()));

        if (serverName != null && !connectQp(local.psn(), remote)) {
            return 1;
        }

        int sendOffset = transport == Transport.UD ? GRH_BYTES : 0;
        send = new SendRequests(1, 1);
        var wr = send.get(0).wrId(SEND_WRID).opcode(Opcode.SEND).flags(sendFlags).sge(mr, sendOffset, (int) size);
        if (transport == Transport.UD) {
            wr.ud(ah, remote.qpn(), UD_QKEY);
        }
        wcs = new WorkCompletions(2);

        pending = RECV_WRID;
        if (serverName != null) {
            if (validateBuf) {
                for (long i = 0; i < size; i += PAGE_SIZE) {
                    buf.set(ValueLayout.JAVA_BYTE, sendOffset + i, (byte) 0);
                }
            }
            if (!postSend()) {
                return fail("Couldn't post send");
            }
            pending |= SEND_WRID;
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
                    return fail(transport.program + ": interrupted");
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
                    return fail(transport.program + ": interrupted");
                }
            } while (!useEvent && ne < 1);

            for (int i = 0; i < ne; ++i) {
                if (!completion(wcs.get(i))) {
                    if (transport == Transport.RC) {
                        err.print("parse WC failed " + ne + "\n");
                    }
                    return 1;
                }
            }
        }
        long usecExact = (System.nanoTime() - start) / 1000;

        // as C: float microseconds, double arithmetic from there
        float usec = usecExact;
        long bytes = size * iters * 2;
        out.print(bytes + " bytes in " + fixed2(usec / 1000000.) + " seconds = " + fixed2(bytes * 8. / usec) + " Mbit/sec\n");
        out.print((int) iters + " iters in " + fixed2(usec / 1000000.) + " seconds = " + fixed2(usec / (float) iters) + " usec/iter\n");

        if (serverName == null && validateBuf) {
            int offset = transport == Transport.UD ? GRH_BYTES : 0;
            for (long i = 0; i < size; i += PAGE_SIZE) {
                if (buf.get(ValueLayout.JAVA_BYTE, offset + i) != 0) {
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
        Getopt opts = new Getopt(transport.program, args, transport.shortOptions,
                "port:p", "ib-dev:d", "ib-port:i", "size:s", "mtu:m", "rx-depth:r", "iters:n", "sl:l", "events:e",
                "gid-idx:g", "odp:o", "iodp:O", "prefetch:P", "ts:t", "chk:c", "dm:j", "new_send:N");
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
                case 's' -> size = unsigned(arg);
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
                case 'r' -> rxDepth = unsigned(arg);
                case 'n' -> iters = unsigned(arg);
                case 'l' -> sl = Getopt.strtol(arg);
                case 'e' -> useEvent = true;
                case 'g' -> gidx = Getopt.strtol(arg);
                case 'o' -> useOdp = true;
                case 'P' -> prefetchMr = true;
                case 'O' -> {
                    useOdp = true;
                    implicitOdp = true;
                }
                case 't' -> useTs = true;
                case 'c' -> validateBuf = true;
                case 'j' -> useDm = true;
                case 'N' -> useNewSend = true;
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

    /** {@code strtoul()} into an unsigned int, as the C tools store sizes and counts. */
    private static long unsigned(String arg) {
        return Integer.toUnsignedLong(Getopt.strtol(arg));
    }

    private void usage() {
        String p = transport.program;
        StringBuilder s = new StringBuilder()
                .append("Usage:\n")
                .append("  ").append(p).append("            start a server and wait for connection\n")
                .append("  ").append(p).append(" <host>     connect to server at <host>\n")
                .append("\n")
                .append("Options:\n")
                .append("  -p, --port=<port>      listen on/connect to port <port> (default 18515)\n")
                .append("  -d, --ib-dev=<dev>     use IB device <dev> (default first device found)\n")
                .append("  -i, --ib-port=<port>   use port <port> of IB device (default 1)\n");
        if (transport == Transport.UD) {
            s.append("  -s, --size=<size>      size of message to exchange (default 2048)\n")
                    .append("  -r, --rx-depth=<dep>   number of receives to post at a time (default 500)\n")
                    .append("  -n, --iters=<iters>    number of exchanges (default 1000)\n")
                    .append("  -l, --sl=<SL>          send messages with service level <SL> (default 0)\n")
                    .append("  -e, --events           sleep on CQ events (default poll)\n")
                    .append("  -g, --gid-idx=<gid index> local port gid index\n")
                    .append("  -c, --chk              validate received buffer\n");
        } else {
            s.append("  -s, --size=<size>      size of message to exchange (default 4096)\n")
                    .append("  -m, --mtu=<size>       path MTU (default 1024)\n")
                    .append("  -r, --rx-depth=<dep>   number of receives to post at a time (default 500)\n")
                    .append("  -n, --iters=<iters>    number of exchanges (default 1000)\n")
                    .append("  -l, --sl=<sl>          service level value\n")
                    .append("  -e, --events           sleep on CQ events (default poll)\n")
                    .append("  -g, --gid-idx=<gid index> local port gid index\n");
            if (transport == Transport.RC) {
                s.append("  -o, --odp\t\t    use on demand paging\n")
                        .append("  -O, --iodp\t\t    use implicit on demand paging\n")
                        .append("  -P, --prefetch\t    prefetch an ODP MR\n")
                        .append("  -t, --ts\t            get CQE with timestamp\n")
                        .append("  -c, --chk\t            validate received buffer\n")
                        .append("  -j, --dm\t            use device memory\n")
                        .append("  -N, --new_send            use new post send WR API\n");
            } else {
                s.append("  -c, --chk              validate received buffer\n");
            }
        }
        out.print(s);
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

    /** What the C tools' {@code pp_init_ctx()} does, with the same messages. */
    private void initContext(Device device) throws Exit {
        long bufBytes = transport == Transport.UD ? size + GRH_BYTES : size;
        try {
            bufferArena = Arena.ofShared();
            buf = bufferArena.allocate(Math.max(1, bufBytes), PAGE_SIZE);
        } catch (RuntimeException | OutOfMemoryError e) {
            throw exit("Couldn't allocate work buf.");
        }
        buf.fill((byte) 0x7b);

        try {
            context = device.open();
        } catch (RuntimeException e) {
            throw exit("Couldn't get context for " + device.name());
        }

        if (transport == Transport.UD) {
            int portMtu;
            try {
                portMtu = 1 << (context.queryPort(ibPort).activeMtuCode() + 7);
            } catch (RuntimeException e) {
                throw exit("Unable to query port info for port " + ibPort);
            }
            if (size > portMtu) {
                throw exit("Requested size larger than port MTU (" + portMtu + ")");
            }
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

        int access = Access.LOCAL_WRITE;
        if (useOdp || useTs || useDm) {
            DeviceAttributes attrs;
            try {
                attrs = context.queryDevice();
            } catch (RuntimeException e) {
                throw exit("Couldn't query device for its features");
            }
            if (useOdp) {
                int rcCaps = ODP_SUPPORT_SEND | ODP_SUPPORT_RECV;
                if ((attrs.odpGeneralCaps() & ODP_SUPPORT) == 0 || (attrs.odpRcCaps() & rcCaps) != rcCaps) {
                    throw exit("The device isn't ODP capable or does not support RC send and receive with ODP");
                }
                if (implicitOdp && (attrs.odpGeneralCaps() & ODP_SUPPORT_IMPLICIT) == 0) {
                    throw exit("The device doesn't support implicit ODP");
                }
                if (implicitOdp) {
                    throw exit(transport.program + ": -O/--iodp (implicit on-demand paging) is not supported by verbs4j");
                }
                if (prefetchMr) {
                    throw exit(transport.program + ": -P/--prefetch (ibv_advise_mr) is not supported by verbs4j");
                }
                access |= Access.ON_DEMAND;
            }
            if (useTs) {
                if (attrs.completionTimestampMask() == 0) {
                    throw exit("The device isn't completion timestamp capable");
                }
                throw exit(transport.program + ": -t/--ts (completion timestamps) is not supported by verbs4j");
            }
            if (useDm) {
                if (attrs.maxDmSize() == 0) {
                    throw exit("Device doesn't support dm allocation");
                }
                if (attrs.maxDmSize() < size) {
                    throw exit("Device memory is insufficient");
                }
                throw exit(transport.program + ": -j/--dm (device memory) is not supported by verbs4j");
            }
        }

        try {
            mr = pd.register(buf.asSlice(0, bufBytes), access);
        } catch (RuntimeException e) {
            throw exit("Couldn't register MR");
        }
        try {
            cq = context.createCompletionQueue(checkedInt(rxDepth + 1), channel, 0);
        } catch (RuntimeException e) {
            throw exit("Couldn't create CQ");
        }
        try {
            qp = pd.createQueuePair(QueuePairInit.of(transport.qpType, cq)
                    .maxSendWr(1).maxRecvWr(checkedInt(rxDepth)).maxSendSge(1).maxRecvSge(1));
        } catch (RuntimeException e) {
            throw exit("Couldn't create QP");
        }
        if (qp.maxInlineData() >= size) {
            sendFlags |= SendFlags.INLINE;
        }

        QueuePairAttributes init = new QueuePairAttributes().state(QpState.INIT).pkeyIndex(0).port(ibPort);
        if (transport == Transport.UD) {
            init.qkey(UD_QKEY);
        } else {
            init.accessFlags(0);
        }
        try {
            qp.modify(init);
        } catch (RuntimeException e) {
            throw exit("Failed to modify QP to INIT");
        }
        recv = new ReceiveRequests(1, 1);
        recv.get(0).wrId(RECV_WRID).sge(mr, 0, (int) bufBytes);
    }

    /** Posts {@code n} receives one at a time, as C does; adds the number posted to {@link #routs}. */
    private void postReceives(int n) {
        for (int i = 0; i < n; ++i) {
            try {
                qp.postReceive(recv, 1);
            } catch (RuntimeException e) {
                return;
            }
            ++routs;
        }
    }

    private boolean postSend() {
        try {
            qp.postSend(send, 1);
            return true;
        } catch (RuntimeException e) {
            return false;
        }
    }

    // ---- the exchange ----

    private QueuePairEndpoint clientExchange(QueuePairEndpoint local) throws Exit {
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
                x.send(local);
            } catch (IOException e) {
                throw exit("Couldn't send local address");
            }
            try {
                QueuePairEndpoint remote = x.receive();
                x.sendDone();
                return remote;
            } catch (IOException e) {
                err.print("client read/write: " + e.getMessage() + "\n");
                throw exit("Couldn't read/write remote address");
            }
        } catch (IOException closing) {
            throw exit("Couldn't read/write remote address");
        }
    }

    private QueuePairEndpoint serverExchange(QueuePairEndpoint local) throws Exit {
        OutOfBandExchange x;
        try {
            x = OutOfBandExchange.accept(tcpPort, null, null);
        } catch (InterruptedIOException e) {
            throw exit("accept() failed");
        } catch (IOException | RuntimeException e) {
            throw exit("Couldn't listen to port " + tcpPort);
        }
        try (x) {
            QueuePairEndpoint remote;
            try {
                remote = x.receive();
            } catch (IOException e) {
                int n = e instanceof OutOfBandExchange.ShortMessageException s ? s.received() : -1;
                err.print("server read: " + e.getMessage() + "\n");
                throw exit(n + "/" + OutOfBandExchange.MESSAGE_BYTES + ": Couldn't read remote address");
            }
            if (!connectQp(local.psn(), remote)) {
                throw exit("Couldn't connect to remote QP");
            }
            try {
                x.send(local);
                x.receiveDone();
            } catch (IOException e) {
                throw exit("Couldn't send/recv local address");
            }
            return remote;
        } catch (IOException closing) {
            throw exit("Couldn't send/recv local address");
        }
    }

    /** The C tools' {@code pp_connect_ctx()}: false after printing why it failed. */
    private boolean connectQp(int myPsn, QueuePairEndpoint dest) {
        boolean global = dest.gid().interfaceId() != 0;
        AddressVector av = new AddressVector(ibPort, dest.lid(), sl, global ? dest.gid() : null, gidx, global ? 1 : 0, 0, 0);
        if (transport == Transport.UD) {
            try {
                qp.modify(new QueuePairAttributes().state(QpState.RTR));
            } catch (RuntimeException e) {
                err.print("Failed to modify QP to RTR\n");
                return false;
            }
            try {
                qp.modify(new QueuePairAttributes().state(QpState.RTS).sqPsn(myPsn));
            } catch (RuntimeException e) {
                err.print("Failed to modify QP to RTS\n");
                return false;
            }
            try {
                ah = pd.createAddressHandle(av);
            } catch (RuntimeException e) {
                err.print("Failed to create AH\n");
                return false;
            }
            return true;
        }
        QueuePairAttributes rtr = new QueuePairAttributes().state(QpState.RTR).addressVector(av).pathMtu(mtu)
                .destQpn(dest.qpn()).rqPsn(dest.psn());
        if (transport == Transport.RC) {
            rtr.maxDestRdAtomic(1).minRnrTimer(12);
        }
        try {
            qp.modify(rtr);
        } catch (RuntimeException e) {
            err.print("Failed to modify QP to RTR\n");
            return false;
        }
        QueuePairAttributes rts = new QueuePairAttributes().state(QpState.RTS).sqPsn(myPsn);
        if (transport == Transport.RC) {
            rts.timeout(14).retryCount(7).rnrRetry(7).maxRdAtomic(1);
        }
        try {
            qp.modify(rts);
        } catch (RuntimeException e) {
            err.print("Failed to modify QP to RTS\n");
            return false;
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

    /** The C tools' handling of one work completion: false after printing why the run ends. */
    private boolean completion(WorkCompletion wc) {
        int wrId = (int) wc.wrId();
        if (!wc.isSuccess()) {
            err.print("Failed status " + wc.status().description() + " (" + wc.statusCode() + ") for wr_id " + wrId + "\n");
            return false;
        }
        switch (wrId) {
            case SEND_WRID -> ++scnt;
            case RECV_WRID -> {
                if (--routs <= 1) {
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
        pending &= ~wrId;
        if (scnt < iters && pending == 0) {
            if (!postSend()) {
                err.print("Couldn't post send\n");
                return false;
            }
            pending = RECV_WRID | SEND_WRID;
        }
        return true;
    }

    // ---- tear-down ----

    /** Frees everything in C's order, with its messages; returns the exit status. */
    private int closeAll() throws Exit {
        close(qp, "Couldn't destroy QP");
        close(cq, "Couldn't destroy CQ");
        close(mr, "Couldn't deregister MR");
        if (ah != null) {
            close(ah, "Couldn't destroy AH");
        }
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

    /** {@code printf("%.2f")} as glibc does it: the exact binary value, rounded half to even. */
    static String fixed2(double v) {
        if (Double.isNaN(v)) {
            return "nan";
        }
        if (Double.isInfinite(v)) {
            return v > 0 ? "inf" : "-inf";
        }
        return new BigDecimal(v).setScale(2, RoundingMode.HALF_EVEN).toPlainString();
    }
}
