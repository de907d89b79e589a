package dev.verbs4j.perf.tools;

import dev.verbs4j.perf.tools.PerfOptions.Kind;
import dev.verbs4j.perf.tools.PerfOptions.Verb;
import dev.verbs4j.tools.ToolExit;
import dev.verbs4j.verbs.Closeables;
import dev.verbs4j.verbs.Context;
import dev.verbs4j.verbs.Device;
import dev.verbs4j.verbs.Gid;
import dev.verbs4j.verbs.GidEntry;
import dev.verbs4j.verbs.GidType;
import dev.verbs4j.verbs.LinkLayer;
import dev.verbs4j.verbs.PortAttributes;
import dev.verbs4j.verbs.PortState;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The device side of a perftest run: which device ({@code -d}), its context, the port
 * ({@code -i}) with its LID, GID ({@code -x}) and MTU ({@code -m}), the outstanding reads it
 * allows ({@code -o}), and what the two sides agree on in their opening exchanges: the path MTU,
 * the cycle buffer and the cache line; from those, the message sizes of the run.
 */
final class PerftestDevice {

    private final PerfOptions o;
    private final PrintStream mtuOut;
    private final PrintStream err;

    private String deviceName;
    private Context context;
    /** Whether {@link #close} closes the context (not when RDMA CM gave it). */
    private boolean ownContext;
    private PortAttributes port;
    private int gidIndex = -1;
    private Gid gid;
    private int mtuCode;
    private int cycleBuffer = 4096;
    private int cacheLine = 64;
    private int ownOutReads;

    PerftestDevice(PerfOptions o, PrintStream out, PrintStream err) {
        this.o = o;
        this.mtuOut = out;
        this.err = err;
    }

    private ToolExit exit(String message, int status) {
        return ToolExit.printed(err, message, status);
    }

    // ---- the device and its port ----

    /** The device of {@code -d}, or the first one. */
    Device findDevice() throws ToolExit {
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
        for (Device d : devices) {
            if (o.deviceName == null || d.name().equals(o.deviceName)) {
                deviceName = d.name();
                return d;
            }
        }
        err.print("IB device " + o.deviceName + " not found\n");
        throw noDevice();
    }

    /** ib_read_bw and ib_atomic_bw return 7 without a word of their own; the others say so and exit 1. */
    private ToolExit noDevice() {
        if (o.kind == Kind.BW && (o.verb == Verb.READ || o.verb == Verb.ATOMIC)) {
            return new ToolExit(7);
        }
        return exit(" Unable to find the Infiniband/RoCE device", 1);
    }

    /** Opens the device and reads the port (TCP mode; RDMA CM gets the context from its id). */
    void open(Device device) throws ToolExit {
        try {
            context = device.open();
        } catch (RuntimeException e) {
            throw exit(" Couldn't get context for the device", 1);
        }
        ownContext = true;
        readPort();
    }

    /** Uses the context RDMA CM opened (it stays librdmacm's) and reads the port. */
    void useContext(Context c) throws ToolExit {
        context = c;
        readPort();
    }

    /** perftest's failure of its link check: {@code message} (if any), then its two closing lines. */
    private ToolExit linkLayer(String message) {
        if (message != null) {
            err.print(message + "\n");
        }
        err.print(" Couldn't set the link layer\n");
        return exit(" Couldn't get context for the device", 1);
    }

    /** The link layer: the port's, or the one --force-link names. */
    private boolean ethernet() {
        return o.forceLink != null ? o.forceLink.equals("Ethernet") : port.linkLayer() == LinkLayer.ETHERNET;
    }

    /**
     * perftest's choice of a GID index on an Ethernet port without -x: walking the table from
     * index 0, an IPv4-mapped GID replaces one that is not (the reverse with --ipv6), and between
     * two of the same kind RoCE v2 replaces RoCE v1.
     */
    private int bestGidIndex() {
        java.util.Map<Integer, GidEntry> entries = new java.util.HashMap<>();
        for (GidEntry e : context.queryGidTable()) {
            if (e.port() == o.ibPort) {
                entries.put(e.index(), e);
            }
        }
        int length = Math.max(port.gidTableLength(), entries.keySet().stream().mapToInt(i -> i + 1).max().orElse(0));
        int best = 0;
        for (int i = 1; i < length; i++) {
            GidEntry cur = entries.get(best);
            GidEntry rival = entries.get(i);
            boolean v4 = cur != null && KeyExchange.ipv4Mapped(cur.gid().raw());
            boolean v4Rival = rival != null && KeyExchange.ipv4Mapped(rival.gid().raw());
            if (v4Rival && !v4 && !o.ipv6) {
                best = i;
            } else if (!v4Rival && v4 && o.ipv6) {
                best = i;
            } else if (cur != null && rival != null && rate(rival.type()) > rate(cur.type())) {
                best = i;
            }
        }
        return best;
    }

    private static int rate(GidType t) {
        return t == GidType.ROCE_V2 ? 2 : t == GidType.ROCE_V1 ? 1 : -1;
    }

    private void readPort() throws ToolExit {
        if (o.events) {
            // as perftest: a vector equal to the count passes here (and fails at the CQ)
            int vectors = context.numCompVectors();
            if (o.eqNum > vectors) {
                err.print(" Completion vector specified is invalid\n");
                err.print(" Max completion vector = " + (vectors - 1) + "\n");
                throw new ToolExit(1);
            }
        }
        try {
            port = context.queryPort(o.ibPort);
        } catch (RuntimeException e) {
            throw linkLayer(" Unable to query port " + o.ibPort + " attributes");
        }
        if (port.state() != PortState.ACTIVE) {
            throw exit(" Port number " + o.ibPort + " state is " + port.state(), 1);
        }
        if (o.dualport) {
            // -O: the second port as perftest checks it (Soft-RoCE devices have one port)
            PortAttributes second;
            try {
                second = context.queryPort(2);
            } catch (RuntimeException e) {
                throw linkLayer(" Unable to query port 2 attributes");
            }
            if (second.state() != PortState.ACTIVE) {
                err.print(" Port number 2 state is " + second.state() + "\n");
                throw linkLayer(null);
            }
            err.print(" " + o.program + ": --dualport is not supported by verbs4j\n");
            throw new ToolExit(1);
        }
        int active = port.activeMtuCode();
        mtuCode = active;
        if (o.mtu != 0) {
            // perftest's set_mtu: a value that is no MTU falls back to the active one, a larger one is capped
            int want = switch (o.mtu) {
                case 256, 512, 1024, 2048, 4096 -> Integer.numberOfTrailingZeros(o.mtu) - 7;
                default -> {
                    err.print(" Invalid MTU - " + o.mtu + " \n");
                    err.print(" Please choose mtu from {256,512,1024,2048,4096}\n");
                    err.print(" Will run with the port active mtu - " + active + "\n");
                    yield active;
                }
            };
            if (want > active) {
                mtuOut.print("Requested mtu is higher than active mtu \n");
                mtuOut.print("Changing to active mtu - " + active + "\n");
                want = active;
            }
            mtuCode = want;
        }
        boolean ethernet = ethernet();
        if (o.gidGiven) {
            gidIndex = o.gidIndex;
        } else if (ethernet) {
            gidIndex = bestGidIndex();
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

    // ---- what the sides agree on ----

    /** The cycle buffer (4096, or the peer's when larger). */
    int cycleBuffer() {
        return cycleBuffer;
    }

    /** The path MTU as its IBV_MTU code. */
    int mtuCode() {
        return mtuCode;
    }

    /** The path MTU in bytes. */
    int mtuBytes() {
        return 128 << mtuCode;
    }

    /** Takes the agreed cycle buffer and cache line, and the lower MTU when the peer names one. */
    void agree(int agreedCycleBuffer, int agreedCacheLine, int peerMtuCode) {
        cycleBuffer = agreedCycleBuffer;
        cacheLine = agreedCacheLine;
        if (peerMtuCode != 0) {
            mtuCode = Math.min(mtuCode, peerMtuCode);
        }
    }

    /**
     * UD carries at most one MTU per message: with {@code -a} or the default size the size becomes
     * the MTU (perftest says so), a larger {@code -s} ends the run, once the MTU is agreed.
     */
    void fitDatagram() throws ToolExit {
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

    /** The message sizes of the run: {@code -s}, or with {@code -a} every power of two from 2 (UD: up to the MTU). */
    long[] sizes() {
        if (!o.all) {
            return new long[]{o.size};
        }
        int top = o.isUd() ? Integer.numberOfTrailingZeros(mtuBytes()) : 23;
        long[] s = new long[top];
        for (int i = 1; i <= top; i++) {
            s[i - 1] = 1L << i;
        }
        return s;
    }

    /** This machine's cache line, as perftest reads it (64 when unknown). */
    static int systemCacheLine() {
        try {
            String s = Files.readString(Path.of("/sys/devices/system/cpu/cpu0/cache/index0/coherency_line_size")).strip();
            int v = Integer.parseInt(s);
            return v > 0 ? v : 64;
        } catch (IOException | RuntimeException e) {
            return 64;
        }
    }

    // ---- what the run's objects use ----

    Context context() {
        return context;
    }

    /** The port's LID. */
    int lid() {
        return port.lid();
    }

    /** The GID index in use, or -1 without one (InfiniBand without {@code -x}). */
    int gidIndex() {
        return gidIndex;
    }

    /** The GID of {@link #gidIndex}, all zeros without one. */
    Gid gid() {
        return gid;
    }

    int cacheLine() {
        return cacheLine;
    }

    /** The RDMA READs and atomics this side lets be outstanding (1 for SEND and WRITE). */
    int ownOutReads() {
        return ownOutReads;
    }

    /** What the header says about the device; {@code relaxed}: whether the region has relaxed ordering. */
    PerfOutput.HeaderInfo headerInfo(boolean relaxed) {
        return new PerfOutput.HeaderInfo(deviceName != null ? deviceName : context.name(), 128 << mtuCode,
                ethernet(), gidIndex, ownOutReads, relaxed);
    }

    /** Closes the context if this run opened it; a failure is logged. */
    void close() {
        if (ownContext) {
            Closeables.closeLogged(System.getLogger(PerftestDevice.class.getName()), context);
        }
    }
}
