package dev.verbs4j.perf.tools;

import dev.verbs4j.perf.tools.PerfOptions.Kind;
import dev.verbs4j.perf.tools.PerfOptions.Verb;
import dev.verbs4j.verbs.Access;
import dev.verbs4j.verbs.AddressHandle;
import dev.verbs4j.verbs.AddressVector;
import dev.verbs4j.verbs.CompletionChannel;
import dev.verbs4j.verbs.CompletionQueue;
import dev.verbs4j.verbs.Context;
import dev.verbs4j.verbs.Device;
import dev.verbs4j.verbs.Gid;
import dev.verbs4j.verbs.LinkLayer;
import dev.verbs4j.verbs.MemoryRegion;
import dev.verbs4j.verbs.Mtu;
import dev.verbs4j.verbs.Opcode;
import dev.verbs4j.verbs.PortAttributes;
import dev.verbs4j.verbs.ProtectionDomain;
import dev.verbs4j.verbs.QpState;
import dev.verbs4j.verbs.QpType;
import dev.verbs4j.verbs.QueuePair;
import dev.verbs4j.verbs.QueuePairAttributes;
import dev.verbs4j.verbs.QueuePairInit;
import dev.verbs4j.verbs.RdmaArena;
import dev.verbs4j.verbs.ReceiveRequests;
import dev.verbs4j.verbs.SendFlags;
import dev.verbs4j.verbs.SendRequest;
import dev.verbs4j.verbs.SendRequests;
import dev.verbs4j.verbs.WcOpcode;
import dev.verbs4j.verbs.WorkCompletion;
import dev.verbs4j.verbs.WorkCompletions;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The engine behind the eight perftest tools: one run of one tool on one side, as perftest 4.5 runs
 * it. It parses the options ({@link PerfOptions}), opens the control channel ({@link Wire}), builds
 * the verbs objects (one buffer and memory region, the completion queues, {@code -q} RC queue
 * pairs), connects them, follows the tool's exact sequence of exchanges, runs the measurement on
 * the allocation-free data path and prints what perftest prints ({@link PerfOutput}). A run owns
 * every native object it creates and frees them before {@link #run} returns.
 */
final class Perftest {

    /** The end of a run with its exit status, after the message went to stderr. */
    static final class Exit extends Exception {

        private static final long serialVersionUID = 1L;

        final int status;

        Exit(int status) {
            super(null, null, false, false);
            this.status = status;
        }
    }

    private static final VarHandle BYTE = ValueLayout.JAVA_BYTE.varHandle();
    private static final int WCS = 64;
    /** perftest's Q_Key of every UD queue pair. */
    private static final int QKEY = 0x11111111;
    /** The GRH in front of every UD receive. */
    private static final int UD_ADDITION = 40;
    /** How long one wait for a completion event lasts before the interrupt flag is looked at. */
    private static final Duration EVENT_SLICE = Duration.ofMillis(200);

    /**
     * The clock of duration mode ({@code -D}), perftest's alarm states by the time: a warm-up
     * margin ({@code -f}; by default a quarter of the duration in whole seconds, rounded down), the
     * sample window in which completions are counted, the same margin again, the end. Each side
     * runs its own clock; nothing about it goes over the wire.
     */
    static final class Phases {

        final long sampleStart;
        final long sampleEnd;
        final long end;

        Phases(int durationSeconds, int marginSeconds, long now) {
            long margin = marginSeconds * 1_000_000_000L;
            sampleStart = now + margin;
            sampleEnd = sampleStart + (durationSeconds * 1_000_000_000L - 2 * margin);
            end = sampleEnd + margin;
        }

        boolean sampling(long now) {
            return now - sampleStart >= 0 && now - sampleEnd < 0;
        }

        boolean over(long now) {
            return now - end >= 0;
        }

        /** The length of the sample window in nanoseconds. */
        long window() {
            return sampleEnd - sampleStart;
        }
    }

    final PerfOptions o;
    final PrintStream out;
    final PrintStream err;

    // the run's objects
    private RdmaArena arena;
    private MemorySegment buf;
    private Context context;
    private ProtectionDomain pd;
    private MemoryRegion mr;
    /** The completion channel of -e, else null. */
    private CompletionChannel events;
    private CompletionQueue sendCq;
    private CompletionQueue recvCq;
    private QueuePair[] qps;
    /** UD: per queue pair, the address handle of the peer's queue pair (on the sending sides). */
    private AddressHandle[] ahs;
    /** UD over RDMA CM: per queue pair, the peer's QPN and Q_Key as the connection manager gave them. */
    private int[] peerQpn;
    private int[] peerQkey;
    private SendRequests[] sends;
    private ReceiveRequests[] recvs;
    private WorkCompletions wcs;
    private Wire.Channel channel;
    /** The RDMA CM side of a -R run, else null. */
    CmRun cm;

    // negotiated and derived values
    private String deviceName;
    private PortAttributes port;
    private int gidIndex = -1;
    private Gid gid;
    private int mtuCode;
    private int cycleBuffer = 4096;
    private int cacheLine = 64;
    private long region;
    private int ownOutReads;
    private boolean relaxed;
    private Wire.Dest[] my;
    private Wire.Dest[] rem;

    // per-QP receive accounting (SEND tests)
    private int[] recvPosted;

    private Perftest(PerfOptions o, PrintStream out, PrintStream err) {
        this.o = o;
        this.out = out;
        this.err = err;
    }

    /** Runs the tool {@code program} with {@code args}; returns perftest's exit status. */
    static int run(String program, Verb verb, Kind kind, String[] args, PrintStream out, PrintStream err) {
        PerfOptions o = new PerfOptions(program, verb, kind);
        Integer bad = o.parse(args, out, err);
        if (bad != null) {
            if (!o.quietExit) {
                err.print(" Parser function exited with Error\n");
            }
            out.flush();
            err.flush();
            return bad;
        }
        Perftest t = new Perftest(o, out, err);
        try {
            return t.execute();
        } catch (Exit e) {
            return e.status;
        } finally {
            t.release();
            out.flush();
            err.flush();
        }
    }

    private boolean client() {
        return o.isClient();
    }

    // ---- the whole run ----

    private int execute() throws Exit {
        Device device = findDevice();
        deviceName = device.name();
        if (o.verb == Verb.READ || o.verb == Verb.ATOMIC) {
            out.print(PerfOutput.RESULT_LINE);
            err.print("Device not recognized to implement inline feature. Disabling it\n");
        }
        if (o.rdmaCm) {
            return CmRun.run(this);
        }
        openDevice(device);
        if (!client()) {
            out.print("\n************************************\n");
            out.print("* Waiting for client to connect... *\n");
            out.print("************************************\n");
        }
        channel = openTcp();
        prefix();
        createResources(false);
        out.print(PerfOutput.header(o, headerInfo()));
        return sequence();
    }

    /** The tool's sequence of exchanges and measurements, from the first key exchange to the end. */
    int sequence() throws Exit {
        boolean lat = o.kind == Kind.LAT;
        switch (o.verb) {
            case SEND -> {
                keysAll();
                connectAll(lat || client() || o.duplex);
                barrier();
                printAddresses();
                return lat ? sendLatency() : sendBandwidth();
            }
            case WRITE, READ, ATOMIC -> {
                if (lat) {
                    barrier();
                }
                keysAll();
                connectAll(lat || client() || o.duplex);
                printAddresses();
                barrier();
                if (lat) {
                    return o.verb == Verb.WRITE ? writeLatency() : readLatency();
                }
                return rdmaBandwidth();
            }
            default -> throw new IllegalStateException();
        }
    }

    // ---- set-up ----

    private Device findDevice() throws Exit {
        List<Device> devices;
        try {
            devices = Device.list();
        } catch (RuntimeException e) {
            devices = List.of();
        }
        if (devices.isEmpty()) {
            err.print(" Did not detect devices \n");
            err.print(" If device exists, check if driver is up\n");
            throw noDevice();
        }
        if (o.deviceName == null) {
            return devices.get(0);
        }
        for (Device d : devices) {
            if (d.name().equals(o.deviceName)) {
                return d;
            }
        }
        err.print("IB device " + o.deviceName + " not found\n");
        throw noDevice();
    }

    /** ib_read_bw and ib_atomic_bw return 7 without a word of their own; the others say so and exit 1. */
    private Exit noDevice() {
        if (o.kind == Kind.BW && (o.verb == Verb.READ || o.verb == Verb.ATOMIC)) {
            return new Exit(7);
        }
        return exit(" Unable to find the Infiniband/RoCE device", 1);
    }

    /** Opens the device and reads the port (TCP mode; RDMA CM gets the context from its id). */
    void openDevice(Device device) throws Exit {
        try {
            context = device.open();
        } catch (RuntimeException e) {
            throw exit(" Couldn't get context for the device", 1);
        }
        readPort();
    }

    void useContext(Context c) throws Exit {
        context = c;
        readPort();
    }

    private void readPort() throws Exit {
        if (o.events) {
            // as perftest: a vector equal to the count passes here (and fails at the CQ)
            int vectors = context.numCompVectors();
            if (o.eqNum > vectors) {
                err.print(" Completion vector specified is invalid\n");
                err.print(" Max completion vector = " + (vectors - 1) + "\n");
                throw new Exit(1);
            }
        }
        try {
            port = context.queryPort(o.ibPort);
        } catch (RuntimeException e) {
            throw exit(" Unable to query port " + o.ibPort, 1);
        }
        if (port.state() != dev.verbs4j.verbs.PortState.ACTIVE) {
            throw exit(" Port number " + o.ibPort + " state is " + port.state(), 1);
        }
        int active = port.activeMtuCode();
        mtuCode = active;
        if (o.mtu != 0) {
            int want = Integer.numberOfTrailingZeros(o.mtu) - 7;
            mtuCode = Math.min(want, active);
        }
        boolean ethernet = port.linkLayer() == LinkLayer.ETHERNET;
        if (o.gidGiven) {
            gidIndex = o.gidIndex;
        } else if (ethernet) {
            gidIndex = context.preferredGidIndex(o.ibPort);
        }
        if (gidIndex >= 0) {
            try {
                gid = context.queryGid(o.ibPort, gidIndex);
            } catch (RuntimeException e) {
                throw exit(" Unable to read the gid of index " + gidIndex, 1);
            }
        } else {
            gid = Gid.of(new byte[Gid.BYTES]);
        }
        if (o.verb == Verb.READ || o.verb == Verb.ATOMIC) {
            int max;
            try {
                max = context.queryDevice().maxQpRdAtom();
            } catch (RuntimeException e) {
                max = 1;
            }
            ownOutReads = o.outReads > 0 ? Math.min(o.outReads, max) : max;
        } else {
            ownOutReads = 1;
        }
    }

    /** The path MTU in bytes. */
    private int mtuBytes() {
        return 128 << mtuCode;
    }

    private Wire.Channel openTcp() throws Exit {
        try {
            if (client()) {
                return Wire.Tcp.connect(o.serverName, o.tcpPort, o.sourceIp);
            }
            return Wire.Tcp.accept(o.tcpPort, o.sourceIp);
        } catch (InterruptedIOException e) {
            throw exit(" Interrupted while waiting for the peer", 1);
        } catch (IOException | RuntimeException e) {
            if (client()) {
                err.print("Couldn't connect to " + o.serverName + ":" + o.tcpPort + "\n");
                err.print("Unable to open file descriptor for socket connection");
            } else {
                err.print("Couldn't listen to port " + o.tcpPort + "\n");
            }
            throw exit(" Unable to init the socket connection", 1);
        }
    }

    void setChannel(Wire.Channel c) {
        channel = c;
    }

    /** The exchanges every tool starts with: version, page size and cache line, MTU. */
    void prefix() throws Exit {
        try {
            double remote = Wire.parseVersion(channel.exchange(Wire.version()));
            if (remote < 5.70) {
                throw exit("Current implementation is not compatible with versions older than 5.70", 1);
            }
            cycleBuffer = Math.max(cycleBuffer, Wire.int32(channel.exchange(Wire.int32(cycleBuffer))));
            cacheLine = Math.max(cacheLine(), Wire.int32(channel.exchange(Wire.int32(cacheLine()))));
            int theirs = Wire.mtu(channel.exchange(Wire.mtu(mtuCode)));
            if (theirs != 0) {
                mtuCode = Math.min(mtuCode, theirs);
            }
        } catch (IOException e) {
            throw exchangeFailed();
        }
        fitDatagram();
    }

    /**
     * UD carries at most one MTU per message: with {@code -a} or the default size the size becomes
     * the MTU (perftest says so), a larger {@code -s} ends the run, once the MTU is agreed.
     */
    void fitDatagram() throws Exit {
        if (!o.isUd() || o.size <= mtuBytes()) {
            return;
        }
        if (o.all || !o.sizeGiven) {
            err.print(" Max msg size in UD is MTU " + mtuBytes() + "\n");
            err.print(" Changing to this MTU\n");
            o.size = mtuBytes();
            return;
        }
        err.print(" Max message size in UD cannot be greater than MTU \n");
        throw exit(" Couldn't get context for the device", 1);
    }

    private static int cacheLine() {
        try {
            String s = Files.readString(Path.of("/sys/devices/system/cpu/cpu0/cache/index0/coherency_line_size")).strip();
            int v = Integer.parseInt(s);
            return v > 0 ? v : 64;
        } catch (IOException | RuntimeException e) {
            return 64;
        }
    }

    /**
     * The buffer, memory region, completion queues and queue pairs (in INIT); with {@code cmQps}
     * the queue pairs come from RDMA CM instead (created later by the caller, see {@link #createQp}).
     */
    void createResources(boolean cmQps) throws Exit {
        long buffSize = Math.max(o.size, cycleBuffer);
        region = (buffSize + cacheLine - 1) / cacheLine * cacheLine;
        long total = region * 2 * o.numQps;
        if (o.isUd()) {
            total += cacheLine; // a receive starts UD_ADDITION bytes before the cache line (the GRH)
        }
        try {
            arena = RdmaArena.ofShared();
            buf = arena.allocate(total, 4096);
        } catch (RuntimeException | OutOfMemoryError e) {
            throw exit("Couldn't allocate work buf.", 1);
        }
        if (!(o.verb == Verb.WRITE && o.kind == Kind.LAT)) {
            fillRandom(buf);
        }
        try {
            pd = context.allocateProtectionDomain();
        } catch (RuntimeException e) {
            throw exit("Couldn't allocate PD", 1);
        }
        int access = Access.LOCAL_WRITE | switch (o.verb) {
            case SEND -> 0;
            case WRITE -> Access.REMOTE_WRITE;
            case READ -> Access.REMOTE_READ;
            case ATOMIC -> Access.REMOTE_ATOMIC;
        };
        relaxed = !(o.verb == Verb.WRITE && o.kind == Kind.LAT);
        try {
            mr = pd.register(buf, relaxed ? access | Access.RELAXED_ORDERING : access);
        } catch (RuntimeException e) {
            try {
                relaxed = false;
                mr = pd.register(buf, access);
            } catch (RuntimeException e2) {
                throw exit("Couldn't allocate MR", 1);
            }
        }
        if (o.events) {
            try {
                events = context.createCompletionChannel();
            } catch (RuntimeException e) {
                throw exit("Couldn't create completion channel", 1);
            }
        }
        try {
            sendCq = context.createCompletionQueue(Math.max(1, o.txDepth * o.numQps), events, o.eqNum);
            recvCq = o.verb == Verb.SEND ? context.createCompletionQueue(Math.max(1, o.rxDepth * o.numQps), events, o.eqNum)
                    : sendCq;
        } catch (RuntimeException e) {
            throw exit("Couldn't create CQ", 1);
        }
        if (events != null) {
            try {
                sendCq.requestNotify(false);
                if (recvCq != sendCq) {
                    recvCq.requestNotify(false);
                }
            } catch (RuntimeException e) {
                throw exit("Couldn't request CQ notification", 1);
            }
        }
        qps = new QueuePair[o.numQps];
        my = new Wire.Dest[o.numQps];
        rem = new Wire.Dest[o.numQps];
        recvPosted = new int[o.numQps];
        sends = new SendRequests[o.numQps];
        recvs = new ReceiveRequests[o.numQps];
        ahs = new AddressHandle[o.numQps];
        peerQpn = new int[o.numQps];
        peerQkey = new int[o.numQps];
        wcs = new WorkCompletions(WCS);
        if (!cmQps) {
            for (int i = 0; i < o.numQps; i++) {
                createQp(i, null);
            }
        }
    }

    /** The init attributes of every test queue pair. */
    QueuePairInit qpInit() {
        QpType type = o.isUd() ? QpType.UD : o.isUc() ? QpType.UC : QpType.RC;
        return QueuePairInit.of(type, sendCq, recvCq).maxSendWr(o.txDepth).maxRecvWr(o.rxDepth)
                .maxSendSge(1).maxRecvSge(1).maxInlineData(o.inlineSize);
    }

    /** Creates queue pair {@code i} (or takes {@code given}, made by RDMA CM) and its local description. */
    void createQp(int i, QueuePair given) throws Exit {
        if (given == null) {
            try {
                qps[i] = pd.createQueuePair(qpInit());
            } catch (RuntimeException e) {
                throw exit(" Unable to create QP.", 1);
            }
            QueuePairAttributes init = new QueuePairAttributes().state(QpState.INIT).pkeyIndex(0).port(o.ibPort);
            if (o.isUd()) {
                init.qkey(QKEY);
            } else {
                init.accessFlags(switch (o.verb) {
                    case SEND -> Access.REMOTE_WRITE | Access.LOCAL_WRITE;
                    case WRITE -> Access.REMOTE_WRITE;
                    case READ -> Access.REMOTE_READ;
                    case ATOMIC -> Access.REMOTE_ATOMIC;
                });
            }
            try {
                qps[i].modify(init);
            } catch (RuntimeException e) {
                throw exit("Failed to modify QP to INIT", 1);
            }
        } else {
            qps[i] = given;
        }
        int psn = ThreadLocalRandom.current().nextInt() & 0xffffff;
        my[i] = new Wire.Dest(port.lid(), ownOutReads, qps[i].qpNum(), psn, mr.rkey(),
                buf.address() + remoteOffset(i), gid.raw(), 0);
        sends[i] = new SendRequests(Math.max(1, o.postList), 1);
        recvs[i] = new ReceiveRequests(1, 1);
    }

    ProtectionDomain pd() {
        return pd;
    }

    // ---- UD over RDMA CM: the peer's address ----

    /** Sends of queue pair {@code i} go to {@code qpn} with {@code qkey} through {@code ah}. */
    void datagramPeer(int i, AddressHandle ah, int qpn, int qkey) {
        ahs[i] = ah;
        peerQpn[i] = qpn;
        peerQkey[i] = qkey;
    }

    /** Posts the receive of the client's QPN message: its GRH and 4 bytes at the start of QP {@code i}'s send area. */
    void postQpnReceive(int i) throws Exit {
        ReceiveRequests r = recvs[i];
        r.get(0).wrId(0).sge(mr, localOffset(i), UD_ADDITION + 4);
        try {
            qps[i].postReceive(r, 1);
        } catch (RuntimeException e) {
            throw exit("Failed to post receive for connection " + i + " for RDMA CM UD request connection parameters.", 1);
        }
    }

    /** Tells the peer this QP's number: a 4-byte SEND with the QPN as immediate data, waited for. */
    void sendQpn(int i) throws Exit {
        SendRequest wr = sends[i].reset(0).wrId(0).opcode(Opcode.SEND_WITH_IMM).flags(SendFlags.SIGNALED)
                .sge(mr, localOffset(i), 4).immediateData(qps[i].qpNum());
        wr.ud(ahs[i], peerQpn[i], peerQkey[i]);
        try {
            qps[i].postSend(sends[i], 1);
        } catch (RuntimeException e) {
            throw exit("Failed to post send for connection " + i + " for RDMA CM UD send connection parameters.", 1);
        }
        WorkCompletion wc = awaitSetup(sendCq);
        if (!wc.isSuccess() || wc.wrId() != 0) {
            err.print("Failed to poll CQ.\nBad WQE status when trying to send UD connection parameters in RDMA CM:\n Status: "
                    + wc.statusCode() + " ; ID: " + (int) wc.wrId() + ".\n");
            throw exit("Failed to send UD connection parameters to the remote node.", 1);
        }
    }

    /**
     * Takes the peer's address from the QPN message of {@link #postQpnReceive}: an address handle
     * from the completion and its GRH, the QPN from the immediate data; {@code qkey} is this side's.
     */
    void peerFromQpnMessage(int i, int portNum, int qkey) throws Exit {
        WorkCompletion wc = awaitSetup(recvCq);
        if (!wc.isSuccess() || wc.opcode() != WcOpcode.RECV || wc.wrId() != 0) {
            err.print("Failed to poll CQ.\nBad WQE status when trying to create AH for UD connection in RDMA CM:\n Status: "
                    + wc.statusCode() + " ; ID: " + (int) wc.wrId() + ".\n");
            throw exit("Failed to initialize UD connection parameters for RDMA CM.", 1);
        }
        AddressHandle ah;
        try {
            ah = pd.createAddressHandle(wc, buf.asSlice(localOffset(i), UD_ADDITION), portNum);
        } catch (RuntimeException e) {
            throw exit("Failed to create AH for RDMA CM connection.", 1);
        }
        datagramPeer(i, ah, wc.immediateData(), qkey);
    }

    /** One completion of {@code cq} during the set-up, waited for interruptibly. */
    private WorkCompletion awaitSetup(CompletionQueue cq) throws Exit {
        int spins = 0;
        while (poll(cq) == 0) {
            if (events != null) {
                awaitEvent();
            } else if ((++spins & 0xfff) == 0) {
                if (Thread.currentThread().isInterrupted()) {
                    throw exit(" Interrupted", 1);
                }
                Thread.onSpinWait();
            }
        }
        return wcs.get(0);
    }

    private static void fillRandom(MemorySegment s) {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        long n = s.byteSize();
        long i = 0;
        for (; i + 8 <= n; i += 8) {
            s.set(ValueLayout.JAVA_LONG_UNALIGNED, i, r.nextLong());
        }
        for (; i < n; i++) {
            s.set(ValueLayout.JAVA_BYTE, i, (byte) r.nextInt());
        }
    }

    /** Where QP {@code i} sends from. */
    private long localOffset(int i) {
        return i * region;
    }

    /** The region of QP {@code i} the peer writes to / reads from / receives into. */
    private long remoteOffset(int i) {
        return (o.numQps + i) * region;
    }

    PerfOutput.HeaderInfo headerInfo() {
        return new PerfOutput.HeaderInfo(deviceName != null ? deviceName : context.name(), 128 << mtuCode, port.linkLayer() == LinkLayer.ETHERNET,
                gidIndex, ownOutReads, relaxed);
    }

    // ---- exchanges ----

    private boolean withGid() {
        return gidIndex >= 0;
    }

    byte[] keyMessage(Wire.Dest d) {
        return o.rdmaCm ? Wire.binary(d, gidIndex) : Wire.text(d, withGid());
    }

    Wire.Dest parseKey(byte[] b) throws Wire.ProtocolException {
        return o.rdmaCm ? Wire.parseBinary(b) : Wire.parseText(b, withGid());
    }

    /** One K exchange carrying QP {@code i}'s description; returns the peer's. */
    private Wire.Dest key(int i) throws Exit {
        return key(i, false);
    }

    private Wire.Dest key(int i, boolean last) throws Exit {
        try {
            byte[] mine = keyMessage(my[i]);
            return parseKey(last ? channel.lastExchange(mine) : channel.exchange(mine));
        } catch (InterruptedIOException e) {
            throw exit(" Interrupted while waiting for the peer", 1);
        } catch (IOException e) {
            err.print("ethernet_read_keys: Couldn't read remote address\n");
            err.print(" Unable to read to socket/rdma_cm\n");
            throw exchangeFailed();
        }
    }

    /** K for every queue pair, in order, keeping the peer's descriptions. */
    void keysAll() throws Exit {
        for (int i = 0; i < o.numQps; i++) {
            rem[i] = key(i);
        }
    }

    /** A synchronising K with QP 0's description (the answer is not needed). */
    void barrier() throws Exit {
        key(0);
    }

    /** The address lines: every local one, then per queue pair a K and the peer's line. */
    void printAddresses() throws Exit {
        for (int i = 0; i < o.numQps; i++) {
            out.print(PerfOutput.address(o, "local", my[i]));
        }
        for (int i = 0; i < o.numQps; i++) {
            rem[i] = key(i);
            out.print(PerfOutput.address(o, "remote", rem[i]));
        }
    }

    /** The final K and "done"; the channel is closed after. */
    private void closeExchange() throws Exit {
        key(0, true);
        channel.finish(true);
        channel = null;
    }

    /** The final K of the send tests, whose failure perftest reports but does not fail on. */
    private void closeExchangeLenient() {
        try {
            closeExchange();
        } catch (Exit e) {
            err.print("Failed to close connection between server and client\n");
            err.print(" Trying to close this side resources\n");
        }
    }

    private Exit exchangeFailed() {
        return exit(" Failed to exchange data between server and clients", 1);
    }

    private void exchangeReport(PerfOutput.Bw mine, PerfOutput.Bw[] theirs) throws Exit {
        try {
            long size = Wire.int64(channel.exchange(Wire.int64(mine.size())));
            long iters = Wire.int64(channel.exchange(Wire.int64(mine.iters())));
            double peak = Wire.float64(channel.exchange(Wire.float64(mine.peak())));
            double avg = Wire.float64(channel.exchange(Wire.float64(mine.avg())));
            double rate = Wire.float64(channel.exchange(Wire.float64(mine.msgRate())));
            theirs[0] = new PerfOutput.Bw(size, iters, peak, avg, rate);
        } catch (IOException e) {
            throw exchangeFailed();
        }
    }

    // ---- connecting ----

    /** RTR for every queue pair (and RTS when {@code send}), towards the peer's descriptions. */
    private void connectAll(boolean send) throws Exit {
        if (o.rdmaCm) {
            return; // RDMA CM connected the queue pairs already
        }
        for (int i = 0; i < o.numQps; i++) {
            Wire.Dest r = rem[i];
            AddressVector av = new AddressVector(o.ibPort, r.lid(), o.sl, gidIndex >= 0 ? Gid.of(r.gid()) : null,
                    Math.max(0, gidIndex), 255, 0, 0);
            QueuePairAttributes rtr = new QueuePairAttributes().state(QpState.RTR);
            if (!o.isUd()) {
                rtr.addressVector(av).pathMtu(Mtu.of(mtuCode)).destQpn(r.qpn()).rqPsn(r.psn());
            }
            if (!o.isUd() && !o.isUc()) {
                rtr.maxDestRdAtomic(ownOutReads).minRnrTimer(12);
            }
            try {
                qps[i].modify(rtr);
            } catch (RuntimeException e) {
                err.print("Failed to modify QP " + qps[i].qpNum() + " to RTR\n");
                throw exit(" Unable to Connect the HCA's through the link", 1);
            }
            if (send) {
                QueuePairAttributes rts = new QueuePairAttributes().state(QpState.RTS).sqPsn(my[i].psn());
                if (!o.isUd() && !o.isUc()) {
                    rts.timeout(o.qpTimeout).retryCount(7).rnrRetry(7).maxRdAtomic(Math.max(1, r.outReads()));
                }
                try {
                    qps[i].modify(rts);
                } catch (RuntimeException e) {
                    err.print("Failed to modify QP to RTS\n");
                    throw exit(" Unable to Connect the HCA's through the link", 1);
                }
                if (o.isUd()) {
                    try {
                        ahs[i] = pd.createAddressHandle(av);
                    } catch (RuntimeException e) {
                        err.print("Failed to create AH\n");
                        throw exit(" Unable to Connect the HCA's through the link", 1);
                    }
                }
            }
        }
    }

    // ---- sizes ----

    private long[] sizes() {
        if (!o.all) {
            return new long[]{o.size};
        }
        // UD: up to the MTU
        int top = o.isUd() ? Integer.numberOfTrailingZeros(mtuBytes()) : 23;
        long[] s = new long[top];
        for (int i = 1; i <= top; i++) {
            s[i - 1] = 1L << i;
        }
        return s;
    }

    // ---- latency tests ----

    private int rttFactor() {
        return o.verb == Verb.SEND || o.verb == Verb.WRITE ? 2 : 1;
    }

    private void printLatencyHeader() {
        if (o.output == PerfOptions.Output.FULL) {
            out.print(PerfOutput.RESULT_LINE);
            out.print(o.duration > 0 ? PerfOutput.LAT_DURATION_HEADER : PerfOutput.LAT_HEADER);
        }
    }

    private void reportLatency(long size, long[] tposted) {
        if (o.histogram) {
            PerfOutput.histogram(out, tposted, o.iters, rttFactor(), !o.unsorted);
        }
        PerfOutput.Latency l = PerfOutput.latency(tposted, o.iters, rttFactor(), o.reportCycles);
        writeJson(PerfOutput.jsonLatency(o, size, o.iters, l));
        String single = PerfOutput.single(o, null, l);
        if (single != null) {
            out.print(single);
        } else if (o.output == PerfOptions.Output.FULL) {
            out.print(PerfOutput.latencyRow(size, o.iters, l));
        }
    }

    /** The row of duration mode: {@code iters} round trips counted in the window of {@code phases}. */
    private void reportLatencyDuration(long size, long iters, Phases phases) {
        double[] v = PerfOutput.latencyDuration(phases.window(), iters, rttFactor());
        writeJson(PerfOutput.jsonLatencyDuration(o, size, iters, v[0], v[1]));
        if (o.output == PerfOptions.Output.LATENCY) {
            out.print(PerfOutput.fixed(v[0], 6) + "\n");
        } else if (o.output == PerfOptions.Output.FULL) {
            out.print(PerfOutput.latencyDurationRow(size, iters, v[0], v[1]));
        }
    }

    /**
     * With --out_json: the file written anew for every row printed (so it holds the last one), as
     * perftest writes it; a file that cannot be opened is reported and the run goes on.
     */
    private void writeJson(String results) {
        if (!o.outJson) {
            return;
        }
        Path file = Path.of(o.outJsonFile);
        String text = PerfOutput.json(o, headerInfo(), results);
        try {
            if (!Files.exists(file)) {
                try {
                    Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
                } catch (UnsupportedOperationException | java.nio.file.FileAlreadyExistsException e) {
                    // created meanwhile, or no POSIX permissions here: written below all the same
                }
            }
            Files.writeString(file, text, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                    StandardOpenOption.WRITE);
        } catch (IOException | RuntimeException e) {
            err.print("failed to open " + o.outJsonFile + "\n");
        }
    }

    private void endTable() {
        if (o.output == PerfOptions.Output.FULL) {
            out.print(PerfOutput.RESULT_LINE);
        }
    }

    private int sendLatency() throws Exit {
        printLatencyHeader();
        long[] tposted = new long[o.iters];
        for (long size : sizes()) {
            postInitialReceives(size);
            barrier();
            if (o.duration > 0) {
                pingPongSendDuration(size);
                continue;
            }
            pingPongSend(size, tposted);
            reportLatency(size, tposted);
        }
        endTable();
        closeExchangeLenient();
        return 0;
    }

    private void pingPongSend(long size, long[] tposted) throws Exit {
        int iters = o.iters;
        datagram(sends[0].reset(0).wrId(0).opcode(Opcode.SEND).flags(flags(size)).sge(mr, localOffset(0), (int) size), 0);
        int scnt = 0;
        int rcnt = 0;
        while (scnt < iters || rcnt < iters) {
            if (rcnt < iters && !(scnt < 1 && client())) {
                awaitOne(recvCq, true, rcnt, 0);
                rcnt++;
                if (recvPosted[0] < iters) {
                    postReceive(0);
                }
            }
            if (scnt < iters) {
                tposted[scnt] = System.nanoTime();
                post(0, 1, scnt);
                scnt++;
                awaitOne(sendCq, false, scnt, scnt);
            }
        }
    }

    /**
     * ib_send_lat -D: the ping-pong until this side's clock ends; the clock starts at the first
     * receive, and the receives of the window are counted.
     */
    private void pingPongSendDuration(long size) throws Exit {
        datagram(sends[0].reset(0).wrId(0).opcode(Opcode.SEND).flags(flags(size)).sge(mr, localOffset(0), (int) size), 0);
        Phases phases = null;
        long counted = 0;
        int scnt = 0;
        int rcnt = 0;
        int spins = 0;
        while (phases == null || !phases.over(System.nanoTime())) {
            if (!(scnt < 1 && client())) {
                int ne;
                while ((ne = poll(recvCq)) == 0) {
                    if (phases != null && phases.over(System.nanoTime())) {
                        break;
                    }
                    if (events != null) {
                        awaitEvent();
                    } else if ((++spins & 0xfff) == 0 && Thread.currentThread().isInterrupted()) {
                        throw exit(" Interrupted", 1);
                    }
                }
                if (ne == 0) {
                    break;
                }
                long now = System.nanoTime();
                if (phases == null) {
                    phases = new Phases(o.duration, o.margin, now);
                }
                for (int w = 0; w < ne; w++) {
                    check(wcs.get(w), true, rcnt, 0);
                    rcnt++;
                    if (phases.sampling(now)) {
                        counted++;
                    }
                    postReceive(0);
                }
            }
            if (phases != null && phases.over(System.nanoTime())) {
                break;
            }
            post(0, 1, scnt);
            scnt++;
            awaitOne(sendCq, false, scnt, scnt);
        }
        reportLatencyDuration(size, counted, phases);
    }

    /** UD: addresses a SEND of queue pair {@code i} to the peer's queue pair. */
    private void datagram(SendRequest wr, int i) {
        if (o.isUd()) {
            if (o.rdmaCm) {
                wr.ud(ahs[i], peerQpn[i], peerQkey[i]);
            } else {
                wr.ud(ahs[i], rem[i].qpn(), QKEY);
            }
        }
    }

    private int flags(long size) {
        return SendFlags.SIGNALED | (size <= o.inlineSize ? SendFlags.INLINE : 0);
    }

    private int writeLatency() throws Exit {
        printLatencyHeader();
        long[] tposted = new long[o.iters];
        for (long size : sizes()) {
            if (o.duration > 0) {
                pingPongWriteDuration(size);
                continue;
            }
            pingPongWrite(size, tposted);
            reportLatency(size, tposted);
        }
        endTable();
        // ib_write_lat ends without a final exchange
        channel.finish(false);
        channel = null;
        return 0;
    }

    private void pingPongWrite(long size, long[] tposted) throws Exit {
        int iters = o.iters;
        sends[0].reset(0).wrId(0).opcode(Opcode.RDMA_WRITE).flags(flags(size)).sge(mr, localOffset(0), (int) size)
                .rdma(rem[0].vaddr(), rem[0].rkey());
        long pollAt = remoteOffset(0) + size - 1;
        long postAt = localOffset(0) + size - 1;
        int scnt = 0;
        int rcnt = 0;
        int ccnt = 0;
        while (scnt < iters || ccnt < iters || rcnt < iters) {
            if (rcnt < iters && !(scnt < 1 && !client())) {
                rcnt++;
                byte want = (byte) rcnt;
                int spins = 0;
                while ((byte) BYTE.getVolatile(buf, pollAt) != want) {
                    if ((++spins & 0xfff) == 0 && Thread.currentThread().isInterrupted()) {
                        throw exit(" Interrupted", 1);
                    }
                    Thread.onSpinWait();
                }
            }
            if (scnt < iters) {
                tposted[scnt] = System.nanoTime();
                BYTE.setVolatile(buf, postAt, (byte) ++scnt);
                post(0, 1, scnt);
            }
            if (ccnt < iters) {
                awaitOne(sendCq, false, scnt, ccnt);
                ccnt++;
            }
        }
    }

    /** ib_write_lat -D: the ping-pong until this side's clock (started here) ends; the writes completed in the window count. */
    private void pingPongWriteDuration(long size) throws Exit {
        sends[0].reset(0).wrId(0).opcode(Opcode.RDMA_WRITE).flags(flags(size)).sge(mr, localOffset(0), (int) size)
                .rdma(rem[0].vaddr(), rem[0].rkey());
        long pollAt = remoteOffset(0) + size - 1;
        long postAt = localOffset(0) + size - 1;
        Phases phases = new Phases(o.duration, o.margin, System.nanoTime());
        long counted = 0;
        int scnt = 0;
        int rcnt = 0;
        loop:
        while (!phases.over(System.nanoTime())) {
            if (!(scnt < 1 && !client())) {
                rcnt++;
                byte want = (byte) rcnt;
                int spins = 0;
                while ((byte) BYTE.getVolatile(buf, pollAt) != want) {
                    if ((++spins & 0xff) == 0) {
                        if (phases.over(System.nanoTime())) {
                            break loop;
                        }
                        if (Thread.currentThread().isInterrupted()) {
                            throw exit(" Interrupted", 1);
                        }
                    }
                    Thread.onSpinWait();
                }
            }
            BYTE.setVolatile(buf, postAt, (byte) ++scnt);
            post(0, 1, scnt);
            if (phases.over(System.nanoTime())) {
                break;
            }
            awaitOne(sendCq, false, scnt, scnt);
            if (phases.sampling(System.nanoTime())) {
                counted++;
            }
        }
        reportLatencyDuration(size, counted, phases);
    }

    private int readLatency() throws Exit {
        if (!client()) {
            // the server is passive: it waits in the final exchange while the client measures
            closeExchange();
            out.print(PerfOutput.RESULT_LINE);
            return 0;
        }
        printLatencyHeader();
        long[] tposted = new long[o.iters];
        for (long size : sizes()) {
            SendRequest wr = sends[0].reset(0).wrId(0).flags(SendFlags.SIGNALED).sge(mr, localOffset(0), (int) size);
            if (o.verb == Verb.READ) {
                wr.opcode(Opcode.RDMA_READ).rdma(rem[0].vaddr(), rem[0].rkey());
            } else {
                atomic(wr, rem[0]);
            }
            if (o.duration > 0) {
                // one operation at a time until the clock ends; those completed in the window count
                Phases phases = new Phases(o.duration, o.margin, System.nanoTime());
                long counted = 0;
                for (int scnt = 0; !phases.over(System.nanoTime()); scnt++) {
                    post(0, 1, scnt);
                    if (phases.over(System.nanoTime())) {
                        break;
                    }
                    awaitOne(sendCq, false, scnt + 1, scnt + 1);
                    if (phases.sampling(System.nanoTime())) {
                        counted++;
                    }
                }
                reportLatencyDuration(size, counted, phases);
                continue;
            }
            for (int scnt = 0; scnt < o.iters; scnt++) {
                tposted[scnt] = System.nanoTime();
                post(0, 1, scnt);
                awaitOne(sendCq, false, scnt + 1, scnt + 1);
            }
            reportLatency(size, tposted);
        }
        endTable();
        closeExchange();
        return 0;
    }

    private void atomic(SendRequest wr, Wire.Dest r) {
        if (o.atomicType == PerfOptions.AtomicType.FETCH_AND_ADD) {
            wr.opcode(Opcode.ATOMIC_FETCH_AND_ADD).atomic(r.vaddr(), r.rkey(), 1, 0);
        } else {
            wr.opcode(Opcode.ATOMIC_CMP_AND_SWP).atomic(r.vaddr(), r.rkey(), 0, 0);
        }
    }

    // ---- bandwidth tests ----

    private void printBwHeader() {
        if (o.output == PerfOptions.Output.FULL) {
            out.print(PerfOutput.RESULT_LINE);
            out.print(PerfOutput.bwHeader(o));
        }
    }

    private void printBw(PerfOutput.Bw b) {
        writeJson(PerfOutput.jsonBw(o, b));
        String single = PerfOutput.single(o, b, null);
        if (single != null) {
            out.print(single);
        } else if (o.output == PerfOptions.Output.FULL) {
            out.print(PerfOutput.bwRow(o, b));
        }
    }

    private int rdmaBandwidth() throws Exit {
        printBwHeader();
        if (!client() && !o.duplex) {
            barrier();
            PerfOutput.Bw[] theirs = new PerfOutput.Bw[1];
            exchangeReport(new PerfOutput.Bw(0, 0, 0, 0, 0), theirs);
            printBw(theirs[0]);
            closeExchange();
            endTable();
            return 0;
        }
        PerfOutput.Bw last = null;
        for (long size : sizes()) {
            if (o.duplex) {
                barrier();
            }
            last = stream(size, false);
            if (o.duplex) {
                if (o.all) {
                    barrier();
                }
                PerfOutput.Bw[] theirs = new PerfOutput.Bw[1];
                exchangeReport(last, theirs);
                printBw(last.plus(theirs[0]));
            } else {
                printBw(last);
            }
        }
        endTable();
        if (!o.duplex) {
            barrier();
            exchangeReport(last, new PerfOutput.Bw[1]);
        }
        closeExchange();
        return limits(last);
    }

    private int sendBandwidth() throws Exit {
        printBwHeader();
        PerfOutput.Bw last = null;
        for (long size : sizes()) {
            if (!client() || o.duplex) {
                postInitialReceives(size);
            }
            barrier();
            if (o.duplex && o.duration > 0) {
                // perftest exchanges no reports in duration mode: each side prints its own count
                last = stream(size, true);
                printBw(last);
            } else if (o.duplex) {
                last = stream(size, true);
                PerfOutput.Bw[] theirs = new PerfOutput.Bw[1];
                exchangeReport(last, theirs);
                printBw(last.plus(theirs[0]));
            } else if (client()) {
                last = stream(size, false);
                printBw(last);
            } else {
                last = receiveStream(size);
                printBw(last);
            }
            if (o.all) {
                barrier();
            }
        }
        endTable();
        closeExchangeLenient();
        return client() ? limits(last) : 0;
    }

    private int limits(PerfOutput.Bw b) {
        if (b == null || !client()) {
            return 0;
        }
        if (o.limitBw > 0 && b.avg() < o.limitBw) {
            err.print("Error: BW result is below bw limit\n");
            return 1;
        }
        if (o.limitMsgRate > 0 && b.msgRate() < o.limitMsgRate) {
            err.print("Error: Msg rate  is below msg_rate limit\n");
            return 1;
        }
        return 0;
    }

    /**
     * The client's side of a bandwidth test: {@code iters} operations of {@code size} bytes on every
     * queue pair, at most {@code txDepth} outstanding per queue pair, a completion every
     * {@code cqMod}. With {@code alsoReceive} (send -b) the receives of the peer's stream are
     * consumed and re-posted in the same loop.
     */
    private PerfOutput.Bw stream(long size, boolean alsoReceive) throws Exit {
        if (o.duration > 0) {
            return streamDuration(size, alsoReceive);
        }
        int q = o.numQps;
        int iters = o.iters;
        int n = iters * q;
        int list = Math.max(1, o.postList);
        int cqMod = Math.max(1, o.cqMod);
        long[] tposted = new long[n];
        long[] tcompleted = new long[n];
        int[] scnt = new int[q];
        int[] ccnt = new int[q];
        int baseFlags = prepareStream(size);
        int totScnt = 0;
        int totCcnt = 0;
        int rcnt = 0;
        int rTarget = alsoReceive ? n : 0;
        boolean started = client() || !alsoReceive;
        int idle = 0;
        while (totCcnt < n || rcnt < rTarget) {
            if (started) {
                for (int i = 0; i < q; i++) {
                    while (scnt[i] < iters && scnt[i] - ccnt[i] + list <= o.txDepth) {
                        for (int k = 0; k < list; k++) {
                            int idx = scnt[i] + k + 1;
                            boolean signal = idx % cqMod == 0 || idx == iters;
                            sends[i].get(k).flags(signal ? baseFlags | SendFlags.SIGNALED : baseFlags);
                        }
                        long now = System.nanoTime();
                        for (int k = 0; k < list; k++) {
                            tposted[totScnt + k] = now;
                        }
                        post(i, list, totScnt);
                        scnt[i] += list;
                        totScnt += list;
                    }
                }
            }
            int ne = poll(sendCq);
            for (int w = 0; w < ne; w++) {
                WorkCompletion wc = wcs.get(w);
                check(wc, false, totScnt, totCcnt);
                int i = (int) wc.wrId();
                int next = Math.min((ccnt[i] / cqMod + 1) * cqMod, iters);
                int covered = next - ccnt[i];
                ccnt[i] = next;
                long now = System.nanoTime();
                for (int k = 0; k < covered; k++) {
                    tcompleted[totCcnt++] = now;
                }
            }
            if (alsoReceive && rcnt < rTarget) {
                int nr = poll(recvCq);
                for (int w = 0; w < nr; w++) {
                    WorkCompletion wc = wcs.get(w);
                    check(wc, true, rcnt, 0);
                    int i = (int) wc.wrId();
                    rcnt++;
                    started = true;
                    if (recvPosted[i] < iters) {
                        postReceive(i);
                    }
                }
                ne += nr;
            }
            if (ne == 0 && events != null) {
                awaitEvent();
            } else if (ne == 0 && (++idle & 0xfff) == 0 && Thread.currentThread().isInterrupted()) {
                throw exit(" Interrupted", 1);
            }
        }
        return PerfOutput.bandwidth(o, size, n, tposted, tcompleted, o.peakOff());
    }

    /** The work requests of every queue pair for a stream of {@code size}-byte operations, unsignaled. */
    private int prepareStream(long size) {
        int list = Math.max(1, o.postList);
        for (int i = 0; i < o.numQps; i++) {
            for (int k = 0; k < list; k++) {
                SendRequest wr = sends[i].reset(k).wrId(i).flags(flags(size) & ~SendFlags.SIGNALED)
                        .sge(mr, localOffset(i), (int) size);
                switch (o.verb) {
                    case SEND -> datagram(wr.opcode(Opcode.SEND), i);
                    case WRITE -> wr.opcode(Opcode.RDMA_WRITE).rdma(rem[i].vaddr(), rem[i].rkey());
                    case READ -> wr.opcode(Opcode.RDMA_READ).rdma(rem[i].vaddr(), rem[i].rkey());
                    case ATOMIC -> atomic(wr, rem[i]);
                }
            }
        }
        return flags(size) & ~SendFlags.SIGNALED;
    }

    /**
     * {@link #stream} in duration mode: operations kept in flight on every queue pair until this
     * side's clock ends (started at once, or by the first receive for the ib_send_bw -b server),
     * a completion every {@code cqMod}; the operations completed (and with {@code alsoReceive} the
     * messages received) in the sample window count. What is still in flight at the end is left.
     */
    private PerfOutput.Bw streamDuration(long size, boolean alsoReceive) throws Exit {
        int q = o.numQps;
        int list = Math.max(1, o.postList);
        int cqMod = Math.max(1, o.cqMod);
        int baseFlags = prepareStream(size);
        long[] scnt = new long[q];
        long[] ccnt = new long[q];
        long counted = 0;
        boolean started = client() || !alsoReceive;
        Phases phases = started ? new Phases(o.duration, o.margin, System.nanoTime()) : null;
        int idle = 0;
        while (phases == null || !phases.over(System.nanoTime())) {
            if (started) {
                for (int i = 0; i < q; i++) {
                    while (scnt[i] - ccnt[i] + list <= o.txDepth) {
                        for (int k = 0; k < list; k++) {
                            boolean signal = (scnt[i] + k + 1) % cqMod == 0;
                            sends[i].get(k).flags(signal ? baseFlags | SendFlags.SIGNALED : baseFlags);
                        }
                        post(i, list, (int) scnt[i]);
                        scnt[i] += list;
                    }
                }
            }
            int ne = poll(sendCq);
            long now = System.nanoTime();
            for (int w = 0; w < ne; w++) {
                WorkCompletion wc = wcs.get(w);
                int i = (int) wc.wrId();
                check(wc, false, (int) scnt[i], (int) ccnt[i]);
                ccnt[i] += cqMod;
                if (phases != null && phases.sampling(now)) {
                    counted += cqMod;
                }
            }
            if (alsoReceive) {
                int nr = poll(recvCq);
                now = System.nanoTime();
                if (nr > 0 && phases == null) {
                    phases = new Phases(o.duration, o.margin, now);
                    started = true;
                }
                for (int w = 0; w < nr; w++) {
                    WorkCompletion wc = wcs.get(w);
                    check(wc, true, (int) counted, 0);
                    if (phases.sampling(now)) {
                        counted++;
                    }
                    postReceive((int) wc.wrId());
                }
                ne += nr;
            }
            if (ne == 0 && (++idle & 0xfff) == 0 && Thread.currentThread().isInterrupted()) {
                throw exit(" Interrupted", 1);
            }
        }
        return PerfOutput.bandwidthDuration(o, size, counted, phases.window());
    }

    /** The ib_send_bw server: receives every message, timed from the first to the last receive. */
    private PerfOutput.Bw receiveStream(long size) throws Exit {
        if (o.duration > 0) {
            return receiveStreamDuration(size);
        }
        int q = o.numQps;
        int n = o.iters * q;
        long first = 0;
        long last = 0;
        int rcnt = 0;
        int idle = 0;
        long lastProgress = System.nanoTime();
        while (rcnt < n) {
            int ne = poll(recvCq);
            if (ne == 0 && events != null) {
                awaitEvent();
                if (System.nanoTime() - lastProgress > 120_000_000_000L) {
                    throw exit(" Did not get Message for 120 Seconds, exiting..", 17);
                }
                continue;
            }
            if (ne == 0) {
                if ((++idle & 0xfff) == 0) {
                    if (Thread.currentThread().isInterrupted()) {
                        throw exit(" Interrupted", 1);
                    }
                    if (System.nanoTime() - lastProgress > 120_000_000_000L) {
                        throw exit(" Did not get Message for 120 Seconds, exiting..", 17);
                    }
                }
                continue;
            }
            long now = System.nanoTime();
            lastProgress = now;
            for (int w = 0; w < ne; w++) {
                WorkCompletion wc = wcs.get(w);
                check(wc, true, rcnt, 0);
                if (rcnt == 0) {
                    first = now;
                }
                rcnt++;
                int i = (int) wc.wrId();
                if (recvPosted[i] < o.iters) {
                    postReceive(i);
                }
            }
            last = now;
        }
        long[] tp = {first};
        long[] tc = new long[n];
        tc[n - 1] = last;
        return PerfOutput.bandwidth(o, size, n, tp, tc, true);
    }

    /**
     * The ib_send_bw server in duration mode: its clock starts at the first receive; the messages
     * received in the sample window count; every receive is posted again.
     */
    private PerfOutput.Bw receiveStreamDuration(long size) throws Exit {
        Phases phases = null;
        long counted = 0;
        int rcnt = 0;
        int idle = 0;
        while (phases == null || !phases.over(System.nanoTime())) {
            int ne = poll(recvCq);
            if (ne == 0) {
                if ((++idle & 0xfff) == 0 && Thread.currentThread().isInterrupted()) {
                    throw exit(" Interrupted", 1);
                }
                continue;
            }
            long now = System.nanoTime();
            if (phases == null) {
                phases = new Phases(o.duration, o.margin, now);
            }
            for (int w = 0; w < ne; w++) {
                WorkCompletion wc = wcs.get(w);
                check(wc, true, rcnt, 0);
                rcnt++;
                if (phases.sampling(now)) {
                    counted++;
                }
                postReceive((int) wc.wrId());
            }
        }
        return PerfOutput.bandwidthDuration(o, size, counted, phases.window());
    }

    // ---- the data path ----

    /** Posts up to rx_depth receives of {@code size} bytes per queue pair for the next round. */
    private void postInitialReceives(long size) throws Exit {
        for (int i = 0; i < o.numQps; i++) {
            if (o.isUd()) {
                // the 40-byte GRH lands just before the cache line the payload starts on
                recvs[i].get(0).wrId(i).sge(mr, remoteOffset(i) + cacheLine - UD_ADDITION, (int) size + UD_ADDITION);
            } else {
                recvs[i].get(0).wrId(i).sge(mr, remoteOffset(i), (int) size);
            }
            recvPosted[i] = 0;
            int first = o.duration > 0 ? o.rxDepth : Math.min(o.rxDepth, o.iters);
            for (int k = 0; k < first; k++) {
                postReceive(i);
            }
        }
    }

    private void postReceive(int i) throws Exit {
        try {
            qps[i].postReceive(recvs[i], 1);
        } catch (RuntimeException e) {
            throw exit("Couldn't post receive: rcnt=" + recvPosted[i], completionStatus());
        }
        recvPosted[i]++;
    }

    private void post(int i, int count, int scnt) throws Exit {
        try {
            qps[i].postSend(sends[i], count);
        } catch (RuntimeException e) {
            throw exit("Couldn't post send: scnt=" + scnt, completionStatus());
        }
    }

    private int poll(CompletionQueue cq) throws Exit {
        try {
            return cq.poll(wcs);
        } catch (RuntimeException e) {
            throw exit("Poll CQ failed", completionStatus());
        }
    }

    /** Waits for one completion on {@code cq} (interruptibly) and checks it. */
    private void awaitOne(CompletionQueue cq, boolean recv, int a, int b) throws Exit {
        int spins = 0;
        int ne;
        while ((ne = poll(cq)) == 0) {
            if (events != null) {
                awaitEvent();
            } else if ((++spins & 0xfff) == 0 && Thread.currentThread().isInterrupted()) {
                throw exit(" Interrupted", 1);
            }
        }
        for (int w = 0; w < ne; w++) {
            check(wcs.get(w), recv, a, b);
        }
    }

    /**
     * With -e: sleeps until a completion queue of the channel signals (or a slice passes), then
     * arms that queue again; the caller polls next. Every queue is armed from its creation on and
     * again after each of its events, so a completion after the caller's empty poll always wakes.
     */
    private void awaitEvent() throws Exit {
        CompletionQueue cq;
        try {
            cq = events.await(EVENT_SLICE);
        } catch (RuntimeException e) {
            throw exit("Failed to get cq_event", 1);
        }
        if (cq != null) {
            try {
                cq.requestNotify(false);
            } catch (RuntimeException e) {
                throw exit("Couldn't request CQ notification", 1);
            }
        }
        if (Thread.currentThread().isInterrupted()) {
            throw exit(" Interrupted", 1);
        }
    }

    /**
     * A failed completion ends the run as perftest ends it: its message names the side by the queue
     * (a receive "at server", a send "at client", whatever the role), then the counters.
     */
    private void check(WorkCompletion wc, boolean recv, int a, int b) throws Exit {
        if (!wc.isSuccess()) {
            err.print(" Completion with error at " + (recv ? "server" : "client") + "\n");
            err.print(String.format(Locale.ROOT, " Failed status %d: wr_id %d syndrom 0x%x\n", wc.statusCode(), (int) wc.wrId(),
                    wc.vendorError()));
            err.print(recv ? " rcnt=" + a + "\n" : "scnt=" + a + ", ccnt=" + b + "\n");
            String after = switch (o.verb) {
                case WRITE -> o.kind == Kind.LAT ? "Test exited with Error" : " Failed to complete run_iter_bw function successfully";
                case READ -> o.kind == Kind.BW ? " Failed to complete run_iter_bw function successfully" : null;
                case ATOMIC -> o.kind == Kind.BW ? " Error occurred in run_iter function" : null;
                case SEND -> null;
            };
            if (after != null) {
                err.print(after + "\n");
            }
            throw new Exit(completionStatus());
        }
    }

    /** The status perftest exits with after a completion error: 17, or 1 for write_lat, write_bw, atomic_bw. */
    private int completionStatus() {
        boolean one = o.verb == Verb.WRITE || (o.verb == Verb.ATOMIC && o.kind == Kind.BW);
        return one ? 1 : 17;
    }

    // ---- helpers ----

    Exit exit(String message, int status) {
        err.print(message + "\n");
        return new Exit(status);
    }

    Context context() {
        return context;
    }

    QueuePair[] qps() {
        return qps;
    }

    int ownOutReads() {
        return ownOutReads;
    }

    /** Frees everything that is left, quietly. */
    private void release() {
        if (cm != null) {
            cm.disconnect();
        } else if (channel != null) {
            channel.close();
        }
        for (AutoCloseable c : ahs == null ? new AutoCloseable[0] : ahs) {
            closeQuietly(c);
        }
        for (AutoCloseable c : qps == null ? new AutoCloseable[0] : qps) {
            closeQuietly(c);
        }
        if (sendCq != recvCq) {
            closeQuietly(recvCq);
        }
        closeQuietly(sendCq);
        closeQuietly(events);
        closeQuietly(mr);
        closeQuietly(pd);
        if (sends != null) {
            for (SendRequests s : sends) {
                closeQuietly(s);
            }
        }
        if (recvs != null) {
            for (ReceiveRequests r : recvs) {
                closeQuietly(r);
            }
        }
        closeQuietly(wcs);
        if (cm != null) {
            cm.close(); // the context belongs to librdmacm
        } else {
            closeQuietly(context);
        }
        closeQuietly(arena);
    }

    static void closeQuietly(AutoCloseable c) {
        if (c == null) {
            return;
        }
        try {
            c.close();
        } catch (Exception ignored) {
            // best effort on the way out
        }
    }
}
