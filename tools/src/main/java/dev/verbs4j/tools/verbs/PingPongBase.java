package dev.verbs4j.tools.verbs;

import dev.verbs4j.tools.Getopt;
import dev.verbs4j.tools.ToolExit;
import dev.verbs4j.verbs.AddressVector;
import dev.verbs4j.verbs.Closeables;
import dev.verbs4j.verbs.CompletionChannel;
import dev.verbs4j.verbs.CompletionQueue;
import dev.verbs4j.verbs.Context;
import dev.verbs4j.verbs.Device;
import dev.verbs4j.verbs.Errno;
import dev.verbs4j.verbs.Gid;
import dev.verbs4j.verbs.LinkLayer;
import dev.verbs4j.verbs.MemoryRegion;
import dev.verbs4j.verbs.Mtu;
import dev.verbs4j.verbs.PortAttributes;
import dev.verbs4j.verbs.ProtectionDomain;
import dev.verbs4j.verbs.QpState;
import dev.verbs4j.verbs.QueuePair;
import dev.verbs4j.verbs.QueuePairAttributes;
import dev.verbs4j.verbs.QueuePairEndpoint;
import dev.verbs4j.verbs.RdmaArena;
import dev.verbs4j.verbs.ReceiveRequests;
import dev.verbs4j.verbs.SendFlags;
import dev.verbs4j.verbs.SendRequests;
import dev.verbs4j.verbs.VerbsException;
import dev.verbs4j.verbs.WorkCompletion;
import dev.verbs4j.verbs.WorkCompletions;

import java.io.InterruptedIOException;
import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Supplier;

/**
 * What the ping-pong tools ({@link PingPong} for RC, UC and UD; {@link SrqPingPong}) share: the
 * options common to rdma-core's {@code ibv_*_pingpong} examples, the steps of their
 * {@code pp_init_ctx()} and {@code pp_connect_ctx()}, the TCP exchange's set-up, the ping-pong
 * loop and the tear-down, each with the C programs' messages. A run owns the verbs objects and the
 * buffer it creates and frees them before {@link #runToEnd} returns.
 */
abstract class PingPongBase {

    private static final System.Logger LOG = System.getLogger(PingPongBase.class.getName());

    static final int RECV_WRID = 1;
    static final int SEND_WRID = 2;
    static final int PAGE_SIZE = 4096;
    static final int ODP_SUPPORT = 1;
    static final int ODP_SUPPORT_SEND = 1;
    static final Gid ZERO_GID = Gid.of(new byte[Gid.BYTES]);
    /** How long one wait for a completion event lasts before the interrupt flag is checked again. */
    private static final Duration EVENT_SLICE = Duration.ofMillis(200);

    /** The C program's name, as its messages and usage text spell it. */
    final String program;
    final PrintStream out;
    final PrintStream err;

    // options, with the C defaults
    String ibDevName;
    String serverName;
    int tcpPort = OutOfBandExchange.DEFAULT_PORT;
    int ibPort = 1;
    long size;
    Mtu mtu = Mtu.MTU_1024;
    long rxDepth = 500;
    long iters = 1000;
    int sl;
    boolean useEvent;
    int gidx = -1;
    boolean useOdp;
    boolean validateBuf;

    // the run's objects
    RdmaArena bufferArena;
    MemorySegment buf;
    Context context;
    CompletionChannel channel;
    ProtectionDomain pd;
    MemoryRegion mr;
    CompletionQueue cq;
    int sendFlags = SendFlags.SIGNALED;
    ReceiveRequests recv;
    SendRequests send;
    WorkCompletions wcs;
    /** Per queue pair, the work requests (of {@link #RECV_WRID}, {@link #SEND_WRID}) still awaited. */
    int[] pending;
    int routs;
    long rcnt;
    long scnt;

    /** The TCP exchange of the addresses, with the C programs' messages. */
    final PingPongExchange exchange() {
        return new PingPongExchange(err);
    }

    /** A tool named {@code program} as C spells it, {@code defaultSize} its {@code -s} unless given. */
    PingPongBase(String program, long defaultSize, PrintStream out, PrintStream err) {
        this.program = program;
        this.size = defaultSize;
        this.out = out;
        this.err = err;
    }

    /** Runs the tool with {@code args}; returns the C program's exit status, everything freed. */
    final int runToEnd(String[] args) {
        try {
            return execute(args);
        } catch (ToolExit e) {
            return e.status();
        } finally {
            release();
            out.flush();
            err.flush();
        }
    }

    /** The tool's whole run; returns the exit status or throws {@link ToolExit}. */
    abstract int execute(String[] args) throws ToolExit;

    // ---- options ----

    /**
     * Reads the options the tools share and hands the others to {@link #option}; returns the
     * status to exit with when they are wrong (after the usage text), else null.
     */
    final Integer parse(String[] args, String shortOptions, String... longOptions) {
        Getopt opts = new Getopt(program, args, shortOptions, longOptions);
        for (int c; (c = opts.next(err)) != -1; ) {
            String arg = opts.argument();
            boolean ok = switch (c) {
                case 'p' -> {
                    int v = Getopt.strtol(arg);
                    boolean valid = v >= 0 && v <= 65535;
                    if (valid) {
                        tcpPort = v;
                    }
                    yield valid;
                }
                case 'd' -> {
                    ibDevName = arg;
                    yield true;
                }
                case 'i' -> {
                    ibPort = Getopt.strtol(arg);
                    yield ibPort >= 1;
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
                    yield mtu != null;
                }
                case 'r' -> {
                    rxDepth = unsigned(arg);
                    yield true;
                }
                case 'n' -> {
                    iters = unsigned(arg);
                    yield true;
                }
                case 'l' -> {
                    sl = Getopt.strtol(arg);
                    yield true;
                }
                case 'e' -> useEvent = true;
                case 'g' -> {
                    gidx = Getopt.strtol(arg);
                    yield true;
                }
                case 'o' -> useOdp = true;
                case 'c' -> validateBuf = true;
                default -> option(c, arg);
            };
            if (!ok) {
                usage();
                return 1;
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

    /**
     * Takes an option only this tool has ({@code arg} is its argument, or null); false when the
     * option is unknown or its value wrong.
     */
    abstract boolean option(int c, String arg);

    /** Prints the usage text to {@code out}. */
    abstract void usage();

    /** The first lines of every tool's usage text, up to and with {@code --ib-port}. */
    final StringBuilder usageHead() {
        return new StringBuilder()
                .append("Usage:\n")
                .append("  ").append(program).append("            start a server and wait for connection\n")
                .append("  ").append(program).append(" <host>     connect to server at <host>\n")
                .append("\n")
                .append("Options:\n")
                .append("  -p, --port=<port>      listen on/connect to port <port> (default 18515)\n")
                .append("  -d, --ib-dev=<dev>     use IB device <dev> (default first device found)\n")
                .append("  -i, --ib-port=<port>   use port <port> of IB device (default 1)\n");
    }

    /** {@code strtoul()} into an unsigned int, as the C tools store sizes and counts. */
    static long unsigned(String arg) {
        return Integer.toUnsignedLong(Getopt.strtol(arg));
    }

    // ---- set-up ----

    /** The device {@code -d} names, else the first one. */
    final Device findDevice() throws ToolExit {
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

    /** The start of {@code pp_init_ctx()}: the page-aligned work buffer of {@code bytes} filled with {@code fill}, and the context. */
    final void openContext(Device device, long bytes, byte fill) throws ToolExit {
        try {
            bufferArena = RdmaArena.ofShared();
            buf = bufferArena.allocate(Math.max(1, bytes), PAGE_SIZE);
        } catch (RuntimeException | OutOfMemoryError e) {
            throw exit("Couldn't allocate work buf.");
        }
        buf.fill(fill);
        context = orExit(device::open, "Couldn't get context for " + device.name());
    }

    /** The completion channel (with {@code -e}) and the protection domain. */
    final void allocateDomain() throws ToolExit {
        if (useEvent) {
            channel = orExit(context::createCompletionChannel, "Couldn't create completion channel");
        }
        pd = orExit(context::allocateProtectionDomain, "Couldn't allocate PD");
    }

    /** Posts one receive of {@link #recv} where this tool's receives go. */
    abstract void postReceive();

    /** Posts {@code n} receives one at a time, as C does; adds the number posted to {@link #routs}. */
    final void postReceives(int n) {
        for (int i = 0; i < n; ++i) {
            try {
                postReceive();
            } catch (RuntimeException e) {
                return;
            }
            ++routs;
        }
    }

    /** What the C tools do after {@code pp_init_ctx()}: post the receives, arm the CQ (with {@code -e}), read the port. */
    final PortAttributes startReceiving() throws ToolExit {
        postReceives(checkedInt(rxDepth));
        if (routs < rxDepth) {
            throw exit("Couldn't post receive (" + routs + ")");
        }
        if (useEvent) {
            requestNotify();
        }
        return orExit(() -> context.queryPort(ibPort), "Couldn't get port info");
    }

    /**
     * The local address of queue pair {@code qpn} with a random PSN; {@code needLid}: a port
     * that is not Ethernet must have a LID. {@code gidFailure} is the message, before the index,
     * when the GID of {@code -g} cannot be read.
     */
    final QueuePairEndpoint localEndpoint(PortAttributes port, int qpn, boolean needLid, String gidFailure) throws ToolExit {
        int lid = port.lid();
        if (needLid && port.linkLayer() != LinkLayer.ETHERNET && lid == 0) {
            throw exit("Couldn't get local LID");
        }
        Gid gid = ZERO_GID;
        if (gidx >= 0) {
            gid = orExit(() -> context.queryGid(ibPort, gidx), gidFailure + gidx);
        }
        return new QueuePairEndpoint(lid, qpn, ThreadLocalRandom.current().nextInt() & 0xffffff, gid);
    }

    /** Prints one address line as C does; {@code label} is {@code "local address: "} or {@code "remote address:"}. */
    final void printAddress(String label, QueuePairEndpoint e, String afterPsn) {
        out.print(String.format(Locale.ROOT, "  %s LID 0x%04x, QPN 0x%06x, PSN 0x%06x%s GID %s\n",
                label, e.lid(), e.qpn(), e.psn(), afterPsn, e.gid()));
    }

    /** The address vector towards {@code lid}, with a GRH to {@code gid} when that is set. */
    final AddressVector addressVector(int lid, Gid gid) {
        boolean global = gid.interfaceId() != 0;
        return new AddressVector(ibPort, lid, sl, global ? gid : null, gidx, global ? 1 : 0, 0, 0);
    }

    /**
     * {@code pp_connect_ctx()} for a connected queue pair ({@code reliable}: RC, else UC): RTR
     * towards {@code dest} through {@code av}, then RTS; false after printing why it failed, with
     * {@code name} for the queue pair.
     */
    final boolean connect(QueuePair qp, String name, int myPsn, QueuePairEndpoint dest, AddressVector av, boolean reliable) {
        QueuePairAttributes rtr = new QueuePairAttributes().state(QpState.RTR).addressVector(av).pathMtu(mtu)
                .destQpn(dest.qpn()).rqPsn(dest.psn());
        if (reliable) {
            rtr.maxDestRdAtomic(1).minRnrTimer(12);
        }
        try {
            qp.modify(rtr);
        } catch (RuntimeException e) {
            err.print("Failed to modify " + name + " to RTR\n");
            return false;
        }
        QueuePairAttributes rts = new QueuePairAttributes().state(QpState.RTS).sqPsn(myPsn);
        if (reliable) {
            rts.timeout(14).retryCount(7).rnrRetry(7).maxRdAtomic(1);
        }
        try {
            qp.modify(rts);
        } catch (RuntimeException e) {
            err.print("Failed to modify " + name + " to RTS\n");
            return false;
        }
        return true;
    }

    // ---- the ping-pong ----

    /** The queue pair of {@code slot} (0 to the number of queue pairs given to {@link #pingPong}). */
    abstract QueuePair queuePair(int slot);

    /**
     * The ping-pong over {@code slots} queue pairs, whose messages start at {@code offset} in the
     * buffer: the client's first sends, then the loop until {@link #iters} messages went each way,
     * the rates printed as C does, and (with {@code -c}) the server's check of the buffer.
     * {@link #send} and {@link #wcs} are ready.
     */
    final void pingPong(int slots, int offset) throws ToolExit {
        pending = new int[slots];
        Arrays.fill(pending, RECV_WRID);
        if (serverName != null) {
            if (validateBuf) {
                for (long i = 0; i < size; i += PAGE_SIZE) {
                    buf.set(ValueLayout.JAVA_BYTE, offset + i, (byte) 0);
                }
            }
            for (int i = 0; i < slots; ++i) {
                if (!postSend(i)) {
                    throw exit("Couldn't post send");
                }
                pending[i] |= SEND_WRID;
            }
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
                    throw exit(program + ": interrupted");
                } catch (RuntimeException e) {
                    throw exit("Failed to get cq_event");
                }
                ++numCqEvents;
                if (evCq != cq) {
                    throw exit("CQ event for unknown CQ " + evCq);
                }
                requestNotify();
            }
            int ne;
            do {
                try {
                    ne = cq.poll(wcs);
                } catch (VerbsException e) {
                    throw exit("poll CQ failed " + -e.errno());
                }
                if (ne < 1 && Thread.currentThread().isInterrupted()) {
                    throw exit(program + ": interrupted");
                }
            } while (!useEvent && ne < 1);

            for (int i = 0; i < ne; ++i) {
                if (!completion(wcs.get(i))) {
                    completionFailed(ne);
                    throw new ToolExit(1);
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
            for (long i = 0; i < size; i += PAGE_SIZE) {
                if (buf.get(ValueLayout.JAVA_BYTE, offset + i) != 0) {
                    out.print("invalid data in page " + i / PAGE_SIZE + "\n");
                }
            }
        }
        if (numCqEvents > 0) {
            cq.ackEvents();
        }
    }

    /** Called after a completion ended the run, with the number polled; the RC tool says so. */
    void completionFailed(int polled) {
    }

    private void requestNotify() throws ToolExit {
        try {
            cq.requestNotify(false);
        } catch (RuntimeException e) {
            throw exit("Couldn't request CQ notification");
        }
    }

    private boolean postSend(int slot) {
        try {
            queuePair(slot).postSend(send, 1);
            return true;
        } catch (RuntimeException e) {
            return false;
        }
    }

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

    /** The slot of the queue pair {@code wc} is for; -1 after printing that there is none. */
    int slotOf(WorkCompletion wc) {
        for (int i = 0; i < pending.length; ++i) {
            if (queuePair(i).qpNum() == wc.qpNum()) {
                return i;
            }
        }
        err.print(String.format(Locale.ROOT, "Couldn't find QPN %06x\n", wc.qpNum()));
        return -1;
    }

    /** The C tools' handling of one work completion: false after printing why the run ends. */
    private boolean completion(WorkCompletion wc) {
        int wrId = (int) wc.wrId();
        if (!wc.isSuccess()) {
            err.print("Failed status " + wc.status().description() + " (" + wc.statusCode() + ") for wr_id " + wrId + "\n");
            return false;
        }
        int slot = slotOf(wc);
        if (slot < 0) {
            return false;
        }
        switch (wrId) {
            case SEND_WRID -> ++scnt;
            case RECV_WRID -> {
                // as C: refilled once no more receives are left than there are queue pairs
                if (--routs <= pending.length) {
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
        pending[slot] &= ~wrId;
        if (scnt < iters && pending[slot] == 0) {
            if (!postSend(slot)) {
                err.print("Couldn't post send\n");
                return false;
            }
            pending[slot] = RECV_WRID | SEND_WRID;
        }
        return true;
    }

    // ---- tear-down ----

    /** The end of C's tear-down: the protection domain, the completion channel, the context; returns 0. */
    final int closeDomain() throws ToolExit {
        close(pd, "Couldn't deallocate PD");
        if (channel != null) {
            close(channel, "Couldn't destroy completion channel");
        }
        close(context, "Couldn't release context");
        return 0;
    }

    final void close(AutoCloseable c, String message) throws ToolExit {
        try {
            c.close();
        } catch (Exception e) {
            throw exit(message);
        }
    }

    /**
     * Frees whatever is left (after a failure or an interrupt): the run's status is settled, so a
     * failed close is logged at WARNING and the others still run.
     */
    private void release() {
        Closeables.closeLogged(LOG, context, send, recv, wcs, bufferArena);
    }

    // ---- helpers ----

    /** {@code action}'s result; when it throws, {@code message} goes to stderr and the run ends with 1. */
    final <T> T orExit(Supplier<T> action, String message) throws ToolExit {
        try {
            return action.get();
        } catch (RuntimeException e) {
            throw exit(message);
        }
    }

    final int fail(String message) {
        err.print(message + "\n");
        return 1;
    }

    final ToolExit exit(String message) {
        err.print(message + "\n");
        return new ToolExit(1);
    }

    static int checkedInt(long v) {
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
