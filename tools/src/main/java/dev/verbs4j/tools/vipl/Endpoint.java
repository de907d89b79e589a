package dev.verbs4j.tools.vipl;

import dev.verbs4j.verbs.RdmaArena;
import dev.verbs4j.vipl.VipConnHandle;
import dev.verbs4j.vipl.VipCq;
import dev.verbs4j.vipl.VipCqEntry;
import dev.verbs4j.vipl.VipDescriptor;
import dev.verbs4j.vipl.VipException;
import dev.verbs4j.vipl.VipMemAttributes;
import dev.verbs4j.vipl.VipMemHandle;
import dev.verbs4j.vipl.VipNetAddress;
import dev.verbs4j.vipl.VipNic;
import dev.verbs4j.vipl.VipNicAttributes;
import dev.verbs4j.vipl.VipPtag;
import dev.verbs4j.vipl.VipReliabilityLevel;
import dev.verbs4j.vipl.VipReturn;
import dev.verbs4j.vipl.VipStatus;
import dev.verbs4j.vipl.VipVi;
import dev.verbs4j.vipl.VipViAttributes;
import dev.verbs4j.vipl.Vipl;

import java.io.IOException;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * One side of a tool's connection through the VIPL API: the NIC, a protection tag, the registered
 * regions (descriptors and data, in one {@link RdmaArena} this object owns and frees on {@link #close}),
 * an optional CQ for the receive queue, and one VI; plus the bounded completion waits the tools use.
 */
final class Endpoint implements AutoCloseable {

    /** A failure at run time: the message (naming the VIPL function and its VipReturn), exit status 1. */
    static final class Failure extends RuntimeException {
        private static final long serialVersionUID = 1L;
        /** This side's decision (a refused client), not caused by an error: the peer's leaving after it is no news. */
        final boolean refusal;

        Failure(String message) {
            this(message, false);
        }

        private Failure(String message, boolean refusal) {
            super(message);
            this.refusal = refusal;
        }

        /**
         * This side refused the peer for {@code reason}, once {@code refusalSent} has waited for the send of the
         * refusal. That send may end flushed rather than done: the client reads the refusal and
         * disconnects, and the disconnect can reach this side before the acknowledgement of the
         * send does. Either way the refusal is what ends the run.
         */
        static Failure refusal(String reason, Runnable refusalSent) {
            try {
                refusalSent.run();
            } catch (Failure flushed) {
                // the client has left, after the refusal or without it: nothing more to tell it
            }
            return new Failure("refused the client: " + reason, true);
        }
    }

    /** The bytes each descriptor of the tools takes: a control segment and one data segment, rounded to the alignment. */
    private static final int DESC_SLOT = 64;
    private static final int DESC_SLOTS = 512;

    final ToolOptions o;
    final RdmaArena arena = RdmaArena.ofShared();
    final VipNic nic;
    final VipPtag ptag;
    final VipCq cq;
    final VipNetAddress localAddress;
    final String deviceName;
    VipVi vi;
    private final MemorySegment descMemory;
    private final VipMemHandle descHandle;
    private int descUsed;
    private final List<MemorySegment> regions = new ArrayList<>();
    private final List<VipMemHandle> handles = new ArrayList<>();
    /** The descriptor the last Done or Wait dequeued (a flyweight re-pointed each time). */
    final VipDescriptor out = VipDescriptor.empty();
    private final VipCqEntry entry = new VipCqEntry();
    private final long timeoutNanos;
    /** The NIC's asynchronous errors (VipErrorCallback), reported with a failure; after success they are the peer's disconnect. */
    private final List<String> asyncErrors = new java.util.concurrent.CopyOnWriteArrayList<>();

    /**
     * Opens the NIC, creates the tag and the descriptor region (and the CQ with {@code -c}).
     *
     * @throws ToolOptions.UsageException when the NIC does not support the reliability level asked for
     */
    Endpoint(ToolOptions o) throws ToolOptions.UsageException {
        this.o = o;
        this.timeoutNanos = o.timeoutMillis * 1_000_000L;
        String device;
        String local;
        try {
            device = o.device != null ? o.device : firstDevice();
            local = o.local != null ? o.local : deviceAddress(device);
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
        this.deviceName = device;
        VipNic n;
        try {
            n = Vipl.openNic(device);
        } catch (VipException e) {
            arena.close();
            throw new Failure(e.getMessage());
        }
        this.nic = n;
        try {
            VipNicAttributes attrs = Vipl.queryNic(nic);
            if (o.levelGiven && (attrs.reliabilityLevelSupport() & o.level.mask()) == 0) {
                List<String> supported = new ArrayList<>();
                for (VipReliabilityLevel l : VipReliabilityLevel.values()) {
                    if ((attrs.reliabilityLevelSupport() & l.mask()) != 0) {
                        supported.add(ToolOptions.name(l));
                    }
                }
                throw new ToolOptions.UsageException("reliability level " + ToolOptions.name(o.level)
                        + " is not supported by this VIPL on " + device + " (supported: " + String.join(", ", supported) + ")");
            }
            if (attrs.maxTransferSize() < ToolOptions.MAX_SIZE) {
                throw new Failure("VipQueryNic: " + device + " transfers at most " + attrs.maxTransferSize()
                        + " bytes per descriptor, the tools need " + ToolOptions.MAX_SIZE);
            }
            this.localAddress = VipNetAddress.of(local, o.isServer() ? o.discriminator() : new byte[0]);
            Vipl.errorCallback(nic, null, (context, error) -> asyncErrors.add(error.errorCode()
                    + (error.vi() != null ? " on the VI" : "") + " (" + error.resourceCode() + ")"));
            this.ptag = Vipl.createPtag(nic);
            this.cq = o.cq ? Vipl.createCQ(nic, 1024) : null;
            this.descMemory = arena.allocate((long) DESC_SLOT * DESC_SLOTS, 4096);
            this.descHandle = Vipl.registerMem(nic, descMemory, VipMemAttributes.of(ptag));
        } catch (VipException e) {
            Vipl.closeNic(nic);
            arena.close();
            throw new Failure(e.getMessage());
        } catch (RuntimeException | ToolOptions.UsageException e) {
            Vipl.closeNic(nic);
            arena.close();
            throw e;
        }
    }

    /** The first RDMA device by name, as the C tools take it. */
    static String firstDevice() {
        try (Stream<Path> s = Files.list(Path.of("/sys/class/infiniband"))) {
            return s.map(p -> p.getFileName().toString()).sorted().findFirst()
                    .orElseThrow(() -> new Failure("VipOpenNic: no RDMA device (/sys/class/infiniband is empty); give -d"));
        } catch (IOException e) {
            throw new Failure("VipOpenNic: no RDMA device (" + e.getMessage() + "); give -d");
        }
    }

    /**
     * The IPv4 address of {@code device}'s port 1: the first IPv4-mapped GID of its table (a RoCE
     * v2 GID carries the interface's address).
     */
    static String deviceAddress(String device) {
        Path gids = Path.of("/sys/class/infiniband", device, "ports", "1", "gids");
        if (device.contains("/") || !Files.isDirectory(gids)) {
            throw new Failure("VipOpenNic: VIP_INVALID_PARAMETER (no device " + device + ")");
        }
        for (int i = 0; i < 256; i++) {
            String gid;
            try {
                gid = Files.readString(gids.resolve(Integer.toString(i))).strip();
            } catch (IOException e) {
                break;
            }
            String[] w = gid.split(":");
            if (w.length == 8 && String.join("", List.of(w).subList(0, 5)).matches("0+") && w[5].equals("ffff")) {
                int hi = Integer.parseInt(w[6], 16);
                int lo = Integer.parseInt(w[7], 16);
                return (hi >> 8) + "." + (hi & 0xff) + "." + (lo >> 8) + "." + (lo & 0xff);
            }
        }
        throw new Failure("no IPv4 address on " + device + " (no IPv4-mapped GID on port 1); give -l ADDRESS");
    }

    /** Registers native memory of {@code bytes} for local use under the tag; freed and deregistered on close. */
    MemorySegment allocate(long bytes) {
        MemorySegment m = arena.allocate(bytes, 4096);
        try {
            handles.add(Vipl.registerMem(nic, m, VipMemAttributes.of(ptag)));
        } catch (VipException e) {
            throw new Failure(e.getMessage());
        }
        regions.add(m);
        return m;
    }

    /** The handle of a region {@link #allocate} gave. */
    VipMemHandle handle(MemorySegment region) {
        for (int i = 0; i < regions.size(); i++) {
            if (regions.get(i).address() == region.address()) {
                return handles.get(i);
            }
        }
        throw new IllegalArgumentException("not a registered region");
    }

    /** A new descriptor (room for one data segment) in the registered descriptor region. */
    VipDescriptor descriptor() {
        if (descUsed == DESC_SLOTS) {
            throw new IllegalStateException("descriptor region full");
        }
        return VipDescriptor.at(descMemory, (long) DESC_SLOT * descUsed++, 1);
    }

    /** The VI's attributes: the level, MaxTransferSize = the tools' largest size, no RDMA. */
    VipViAttributes attributes(VipReliabilityLevel level) {
        return VipViAttributes.of(ptag).withReliabilityLevel(level).withMaxTransferSize(ToolOptions.MAX_SIZE);
    }

    /** Creates the VI (receive queue on the CQ with {@code -c}). */
    void createVi(VipReliabilityLevel level) {
        try {
            vi = Vipl.createVi(nic, attributes(level), null, cq);
        } catch (VipException e) {
            throw new Failure(e.getMessage());
        }
    }

    /**
     * Server: says that it waits, waits for a client's request (bounded) and accepts it with the
     * VI, then says from where and at which reliability level.
     */
    void acceptClient(String program, PrintStream out) {
        out.printf("# %s server: %s %s, discriminator %d, waiting for a client%n", program, deviceName,
                localAddress.inetAddress().getHostAddress(), o.port);
        VipConnHandle request = awaitRequest();
        VipReliabilityLevel level = accept(request);
        out.printf("# connected to %s, %s%n", request.remoteAddress().inetAddress().getHostAddress(), ToolOptions.name(level));
    }

    /** Server: waits for a request on the local address with the discriminator (bounded); the VI is not created yet. */
    private VipConnHandle awaitRequest() {
        try {
            return Vipl.connectWait(nic, localAddress, o.timeoutMillis);
        } catch (VipException e) {
            throw new Failure(e.getMessage());
        }
    }

    /**
     * Server: accepts with the VI (created and with its receives posted before the request came, so
     * that the requester does not wait for that), taking the requester's reliability level unless
     * {@code -r} was given (VipSetViAttributes on the Idle VI); rejects on failure.
     */
    private VipReliabilityLevel accept(VipConnHandle request) {
        VipReliabilityLevel wanted = request.remoteAttributes().reliabilityLevel();
        VipReliabilityLevel level = o.levelGiven ? o.level : wanted;
        if (level != o.level) {
            VipReturn rc = Vipl.setViAttributes(vi, attributes(level));
            if (rc != VipReturn.SUCCESS) {
                Vipl.connectReject(request);
                throw new Failure("VipSetViAttributes: " + rc.cName() + " (the client asked for " + ToolOptions.name(wanted) + ")");
            }
        }
        VipReturn rc = Vipl.connectAccept(request, vi);
        if (rc != VipReturn.SUCCESS) {
            Vipl.connectReject(request);
            throw new Failure("VipConnectAccept: " + rc.cName() + (rc == VipReturn.INVALID_RELIABILITY_LEVEL
                    ? " (the client asked for " + ToolOptions.name(request.remoteAttributes().reliabilityLevel())
                    + ", this server for " + ToolOptions.name(o.level) + ")" : ""));
        }
        return level;
    }

    /** Client: connects the VI to the server, retrying while nobody listens yet, within the timeout. */
    void connect(String server) {
        VipNetAddress remote = VipNetAddress.of(server, o.discriminator());
        long deadline = System.nanoTime() + timeoutNanos;
        while (true) {
            long left = Math.max(1, (deadline - System.nanoTime()) / 1_000_000);
            VipReturn rc = Vipl.connectRequest(vi, localAddress, remote, left);
            if (rc == VipReturn.SUCCESS) {
                return;
            }
            if (rc != VipReturn.NOT_REACHABLE || System.nanoTime() + 200_000_000L > deadline) {
                throw new Failure("VipConnectRequest: " + rc.cName() + " (server " + server + ", discriminator "
                        + o.port + ", within " + o.timeoutMillis / 1000.0 + " s)");
            }
            sleep(200);
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new Failure("interrupted");
        }
    }

    // ---- posting and completions ----

    /** Forms {@code d} as a Send/Receive of {@code length} bytes at {@code data} and posts it. */
    void post(boolean recv, VipDescriptor d, MemorySegment data, VipMemHandle dataHandle, long offset, int length) {
        d.sendReceive(0).addData(data.address() + offset, dataHandle.value(), length);
        VipReturn rc = recv ? Vipl.postRecv(vi, d, descHandle) : Vipl.postSend(vi, d, descHandle);
        if (rc != VipReturn.SUCCESS) {
            throw new Failure((recv ? "VipPostRecv: " : "VipPostSend: ") + rc.cName());
        }
    }

    /**
     * Dequeues the head of the receive ({@code recv}) or send queue once it is done, polling
     * (VipRecvDone, VipSendDone; VipCQDone first with {@code -c}) or blocking ({@code -w}: VipRecvWait,
     * VipSendWait; VipCQWait then VipRecvDone with {@code -c}), at most the timeout; the descriptor is
     * {@link #out}, and one completed with an error is a failure.
     */
    VipDescriptor await(boolean recv, String what) {
        long deadline = System.nanoTime() + timeoutNanos;
        String function;
        if (recv && cq != null) {
            function = o.waitMode ? "VipCQWait" : "VipCQDone";
            VipReturn rc;
            int spins = 0;
            while ((rc = o.waitMode ? Vipl.cqWait(cq, slice(deadline), entry) : Vipl.cqDone(cq, entry)) != VipReturn.SUCCESS) {
                if (rc != VipReturn.NOT_DONE && rc != VipReturn.TIMEOUT) {
                    throw new Failure(function + ": " + rc.cName() + " (waiting for " + what + ")");
                }
                if (o.waitMode || (++spins & 255) == 0) {
                    checkDeadline(deadline, function, rc, what);
                }
            }
            rc = Vipl.recvDone(vi, out);
            if (rc != VipReturn.SUCCESS) {
                throw new Failure("VipRecvDone: " + rc.cName() + " after a CQ entry (" + what + ")");
            }
            function = "VipRecvDone";
        } else if (o.waitMode) {
            function = recv ? "VipRecvWait" : "VipSendWait";
            VipReturn rc;
            while ((rc = recv ? Vipl.recvWait(vi, slice(deadline), out) : Vipl.sendWait(vi, slice(deadline), out))
                    != VipReturn.SUCCESS) {
                if (rc != VipReturn.TIMEOUT) {
                    throw new Failure(function + ": " + rc.cName() + " (waiting for " + what + ")");
                }
                checkDeadline(deadline, function, rc, what);
            }
        } else {
            function = recv ? "VipRecvDone" : "VipSendDone";
            VipReturn rc;
            int spins = 0;
            while ((rc = recv ? Vipl.recvDone(vi, out) : Vipl.sendDone(vi, out)) != VipReturn.SUCCESS) {
                if (rc != VipReturn.NOT_DONE) {
                    throw new Failure(function + ": " + rc.cName() + " (waiting for " + what + ")");
                }
                if ((++spins & 255) == 0) {
                    checkDeadline(deadline, function, rc, what);
                }
            }
        }
        checkStatus(function, what);
        return out;
    }

    /**
     * Dequeues the head of the receive or send queue if it is done, without waiting (VipCQDone and
     * VipRecvDone with {@code -c}); true when {@link #out} is a completed descriptor.
     */
    boolean poll(boolean recv, String what) {
        if (recv && cq != null) {
            VipReturn rc = Vipl.cqDone(cq, entry);
            if (rc == VipReturn.NOT_DONE) {
                return false;
            }
            if (rc != VipReturn.SUCCESS) {
                throw new Failure("VipCQDone: " + rc.cName() + " (" + what + ")");
            }
            rc = Vipl.recvDone(vi, out);
            if (rc != VipReturn.SUCCESS) {
                throw new Failure("VipRecvDone: " + rc.cName() + " after a CQ entry (" + what + ")");
            }
        } else {
            VipReturn rc = recv ? Vipl.recvDone(vi, out) : Vipl.sendDone(vi, out);
            if (rc == VipReturn.NOT_DONE) {
                return false;
            }
            if (rc != VipReturn.SUCCESS) {
                throw new Failure((recv ? "VipRecvDone: " : "VipSendDone: ") + rc.cName() + " (" + what + ")");
            }
        }
        checkStatus(recv ? "VipRecvDone" : "VipSendDone", what);
        return true;
    }

    /** The deadline of a wait that starts now. */
    long deadline() {
        return System.nanoTime() + timeoutNanos;
    }

    /** Fails when the deadline passed or the thread was interrupted. */
    void checkDeadline(long deadline, String function, VipReturn rc, String what) {
        if (Thread.interrupted()) {
            throw new Failure(function + ": interrupted (waiting for " + what + ")");
        }
        if (System.nanoTime() - deadline > 0) {
            throw new Failure(function + ": " + rc.cName() + " for " + o.timeoutMillis / 1000.0 + " s (waiting for " + what
                    + "; is the peer there?)");
        }
    }

    /** The next wait's timeout: at most 200 ms, so that an interrupt is seen, and not past the deadline. */
    private static long slice(long deadline) {
        return Math.max(1, Math.min(200, (deadline - System.nanoTime()) / 1_000_000));
    }

    private void checkStatus(String function, String what) {
        int st = out.status();
        if ((st & VipStatus.ERROR_MASK) != 0) {
            throw new Failure(function + ": VIP_SUCCESS, but the descriptor completed with " + VipStatus.describe(st)
                    + " (" + what + ")");
        }
    }

    // ---- control messages: 16 bytes, type and value ----

    static final int PLAN = 0x504c414e;
    static final int ACK = 0x41434b00;
    static final int NACK = 0x4e41434b;
    static final int CREDIT = 0x43524454;
    static final int DONE = 0x444f4e45;

    static void putControl(MemorySegment m, long offset, int type, long value) {
        m.set(ValueLayout.JAVA_INT_UNALIGNED, offset, type);
        m.set(ValueLayout.JAVA_INT_UNALIGNED, offset + 4, 0);
        m.set(ValueLayout.JAVA_LONG_UNALIGNED, offset + 8, value);
    }

    static int controlType(MemorySegment m, long offset) {
        return m.get(ValueLayout.JAVA_INT_UNALIGNED, offset);
    }

    static long controlValue(MemorySegment m, long offset) {
        return m.get(ValueLayout.JAVA_LONG_UNALIGNED, offset + 8);
    }

    // ---- payload pattern ----

    /** The pattern's length: every payload is a window of it, starting at {@code iteration % PATTERN_SHIFT}. */
    static final int PATTERN_SHIFT = 251;

    /** Reference bytes the payloads are windows of (native, for fast copies and compares). */
    static MemorySegment pattern(Arena arena, int maxSize) {
        MemorySegment p = arena.allocate(maxSize + PATTERN_SHIFT, 64);
        for (int i = 0; i < p.byteSize(); i++) {
            p.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 131 + 7 + (i >> 8)));
        }
        return p;
    }

    /**
     * Checks that {@code length} bytes of {@code data} at {@code offset} are the pattern window of
     * {@code iteration}; throws a failure naming the first differing byte.
     */
    static void verify(MemorySegment pattern, MemorySegment data, long offset, int length, long iteration, String what) {
        long shift = iteration % PATTERN_SHIFT;
        long at = MemorySegment.mismatch(pattern, shift, shift + length, data, offset, offset + length);
        if (at >= 0) {
            throw new Failure("payload mismatch in " + what + " at byte " + at + ": expected 0x"
                    + Integer.toHexString(pattern.get(ValueLayout.JAVA_BYTE, shift + at) & 0xff) + ", got 0x"
                    + Integer.toHexString(data.get(ValueLayout.JAVA_BYTE, offset + at) & 0xff));
        }
    }

    /** {@code f}, with the asynchronous errors the NIC reported so far appended (none to a refusal, which caused them). */
    Failure withAsyncErrors(Failure f) {
        return asyncErrors.isEmpty() || f.refusal ? f : new Failure(f.getMessage() + "; asynchronous errors: " + String.join(", ", asyncErrors));
    }

    /** Disconnects, dequeues what was flushed, destroys the VI, deregisters and closes the NIC; frees the memory. */
    @Override
    public void close() {
        try {
            if (vi != null) {
                Vipl.disconnect(vi);
                while (Vipl.sendDone(vi, out) == VipReturn.SUCCESS || Vipl.recvDone(vi, out) == VipReturn.SUCCESS) {
                    // flushed descriptors
                }
                Vipl.destroyVi(vi);
            }
            for (int i = 0; i < regions.size(); i++) {
                Vipl.deregisterMem(nic, regions.get(i).address(), handles.get(i));
            }
            Vipl.deregisterMem(nic, descMemory.address(), descHandle);
            if (cq != null) {
                Vipl.destroyCQ(cq);
            }
            Vipl.destroyPtag(nic, ptag);
        } finally {
            Vipl.closeNic(nic);   // D16: cleans up whatever is left
            arena.close();
        }
    }
}
