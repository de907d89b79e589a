package dev.verbs4j.naaice;

import dev.verbs4j.rdmacm.CmEvent;
import dev.verbs4j.rdmacm.CmEventType;
import dev.verbs4j.rdmacm.CmId;
import dev.verbs4j.rdmacm.ConnectionParameters;
import dev.verbs4j.rdmacm.EventChannel;
import dev.verbs4j.rdmacm.PortSpace;
import dev.verbs4j.verbs.Access;
import dev.verbs4j.verbs.CompletionChannel;
import dev.verbs4j.verbs.CompletionQueue;
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
import dev.verbs4j.verbs.WorkCompletion;
import dev.verbs4j.verbs.WorkCompletions;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * The low-level NAAICE client (the communication context of the NAAICE AP1 API): one RDMA
 * connection to a network-attached accelerator, its parameter regions, the memory region setup and
 * any number of RPCs, one at a time, with the explicit {@link NaaState} machine of the C library.
 *
 * <p>Every step exists as a non-blocking start ({@link #startConnect}, {@link #startRegionSetup},
 * {@link #startRpc}) completed by {@link #progress()} (one poll round, never blocks), and as a
 * blocking call with a timeout ({@link #connect}, {@link #setupRegions}, {@link #rpc}). Every
 * failure puts the context in {@link NaaState#ERROR} and keeps the cause ({@link #failure()}).
 *
 * <p>Memory: the parameter regions are the application's own native {@link MemorySegment}s,
 * registered in place (no copy), and the NAA writes output regions straight into them. They must
 * come from an open {@link dev.verbs4j.verbs.RdmaArena} (or the global arena): closing the arena
 * deregisters the regions before it frees the memory, so neither the NIC nor the NAA can reach
 * freed memory, and the context then fails at its next transfer; memory of any other arena is
 * refused when the context registers it (before it connects), with a {@link NaaiceException}
 * naming the parameter. Only output regions give the NAA remote write access. The context owns
 * everything else it creates (event channel, connection id, protection domain, completion channel
 * and queue, queue pair, the memory registrations and its MRSP buffer) and frees it on {@link
 * #close()}.
 *
 * <p>Threads: one thread drives a context at a time; every method takes the context's lock, so a
 * call from another thread (typically {@link #close()}) is safe. A blocking call holds the lock
 * only while it progresses, never while it sleeps: it sleeps on the connection manager's or the
 * completion channel without it (a virtual thread parks there, its carrier free; see the
 * readiness poller of verbs), so a {@link #close()} from another thread gets the lock at once,
 * wakes the sleeper by closing the channels, and the blocking call ends with an {@link
 * IllegalStateException} (the context is closed). A sleep lasts until a completion or event
 * arrives, at most one second at a time (a connection manager event that comes while the
 * context sleeps on its completions is seen then), so an idle context costs one wake-up a second.
 */
public final class NaaClient implements AutoCloseable {

    /** The NAAICE default port. */
    public static final int DEFAULT_PORT = 12345;

    private static final System.Logger LOG = System.getLogger(NaaClient.class.getName());
    /** The MRSP buffer: sent from and received into locally, never accessed by the NAA. */
    private static final int MRSP_ACCESS = Access.LOCAL_WRITE;
    /** An output parameter: the NAA writes it back. */
    private static final int OUTPUT_ACCESS = Access.LOCAL_WRITE | Access.REMOTE_WRITE;
    /** Any other parameter: only read locally, by the RDMA writes to the NAA. */
    private static final int INPUT_ACCESS = 0;
    private static final long WR_MRSP_RECV = 1;
    private static final long WR_MRSP_SEND = 2;
    private static final long WR_DATA_RECV = 3;
    private static final long WR_WRITE = 4;
    private static final long WR_MRSP_ABORT = 5;
    /** How long {@link #close()} waits for the NAA's answer to a request already sent. */
    private static final long ANSWER_WAIT_NANOS = 2_000_000_000L;
    /** How long {@link #close()} waits for the completion of its abort message. */
    private static final long ABORT_SEND_WAIT_NANOS = 1_000_000_000L;
    /** How long {@link #close()} leaves the NAA to take its abort message before disconnecting. */
    private static final long ABORT_GRACE_NANOS = 500_000_000L;
    /** The longest one sleep lasts (see the class comment). */
    private static final long SLICE_NANOS = 1_000_000_000L;
    private static final long PAGE = 4096;

    /** One region of the context (parameter or internal). */
    private static final class Region {
        final MemorySegment segment;
        final long size;
        final int flags;
        /** How errors name it: "parameter 1", or the middleware's "input 0", "output 1". */
        final String label;
        long bytesToSend;
        MemoryRegion mr;
        long remoteAddress;
        int remoteRkey;
        long requestedAddress;

        Region(MemorySegment segment, long size, int flags, String label) {
            this.segment = segment;
            this.size = size;
            this.flags = flags;
            this.label = label;
            this.bytesToSend = size;
        }

        int access() {
            return (flags & RegionFlags.OUTPUT) != 0 ? OUTPUT_ACCESS : INPUT_ACCESS;
        }

        boolean internal() {
            return (flags & RegionFlags.INTERNAL) != 0;
        }
    }

    /** What a context is made with; see {@link NaaClient#builder}. A mutable builder on the heap. */
    public static final class Builder {
        private final InetSocketAddress naa;
        private InetSocketAddress local;
        private final List<Region> regions = new ArrayList<>();
        private int maxRequestEntries = Mrsp.C_MAX_REQUEST_ENTRIES;
        private Duration addressTimeout = Duration.ofSeconds(2);
        private Duration routeTimeout = Duration.ofSeconds(2);
        private long requestedAddressOffset;

        private Builder(InetSocketAddress naa) {
            this.naa = Objects.requireNonNull(naa, "naa");
        }

        /** The local address to connect from (port 0 for any); default: what the routing table picks. */
        public Builder localAddress(InetSocketAddress address) {
            this.local = address;
            return this;
        }

        /**
         * Adds a parameter region: the application's native segment, of an open {@link
         * dev.verbs4j.verbs.RdmaArena} or the global arena, registered in place, with {@link
         * RegionFlags} (INPUT, OUTPUT, SINGLE_SEND; any combination, also none). Memory of another
         * arena is refused when the context registers it (see {@link NaaClient}).
         */
        public Builder parameter(MemorySegment segment, int flags) {
            return parameter(segment, flags, "parameter " + regions.stream().filter(r -> !r.internal()).count());
        }

        /** {@link #parameter(MemorySegment, int)} with the name errors give it. */
        Builder parameter(MemorySegment segment, int flags, String label) {
            Objects.requireNonNull(segment, label);
            if (!segment.isNative()) {
                throw new IllegalArgumentException(label + ": a parameter region must be a native segment (it is registered in place)");
            }
            if (segment.byteSize() == 0 || segment.byteSize() > 0xffff_ffffL) {
                throw new IllegalArgumentException(label + ": a parameter region has 1 .. 2^32-1 bytes, got " + segment.byteSize());
            }
            if ((flags & RegionFlags.INTERNAL) != 0 || (flags & ~0x0e) != 0) {
                throw new IllegalArgumentException(label + ": parameter flags are INPUT, OUTPUT, SINGLE_SEND; got "
                        + RegionFlags.describe(flags));
            }
            if (!segment.scope().isAlive()) {
                throw new IllegalArgumentException(label + ": its arena is already closed");
            }
            regions.add(new Region(segment, segment.byteSize(), flags, label));
            return this;
        }

        /** Adds an input parameter ({@link RegionFlags#INPUT}). */
        public Builder input(MemorySegment segment) {
            return parameter(segment, RegionFlags.INPUT);
        }

        /** Adds an output parameter ({@link RegionFlags#OUTPUT}). */
        public Builder output(MemorySegment segment) {
            return parameter(segment, RegionFlags.OUTPUT);
        }

        /** Adds an input/output parameter. */
        public Builder inOut(MemorySegment segment) {
            return parameter(segment, RegionFlags.INPUT | RegionFlags.OUTPUT);
        }

        /** Adds an internal region: {@code size} bytes of NAA-only scratch memory, never transferred. */
        public Builder internal(long size) {
            if (size < 0 || size > 0xffff_ffffL) {
                throw new IllegalArgumentException("an internal region has 0 .. 2^32-1 bytes, got " + size);
            }
            regions.add(new Region(null, size, RegionFlags.INTERNAL, "internal region"));
            return this;
        }

        /**
         * The most entries (parameters + internal) one request may carry: default {@value
         * Mrsp#C_MAX_REQUEST_ENTRIES}, all a C NAA can receive; up to 255 for a Java NAA.
         */
        public Builder maxRequestEntries(int n) {
            if (n < 1 || n > 255) {
                throw new IllegalArgumentException("maxRequestEntries is 1..255, got " + n);
            }
            this.maxRequestEntries = n;
            return this;
        }

        /** The address and route resolution timeouts (default 2 s each). */
        public Builder resolveTimeouts(Duration address, Duration route) {
            this.addressTimeout = address;
            this.routeTimeout = route;
            return this;
        }

        /** The first requested NAA address (default 0); the rest follow page-aligned, internal regions first. */
        public Builder requestedAddressOffset(long offset) {
            this.requestedAddressOffset = offset;
            return this;
        }

        /**
         * A context in {@link NaaState#INIT} (creates its event channel and connection id).
         *
         * @throws IllegalArgumentException without parameters, or with more entries than allowed
         */
        public NaaClient build() {
            long params = regions.stream().filter(r -> !r.internal()).count();
            if (params == 0) {
                throw new IllegalArgumentException("a NAAICE context needs at least one parameter region");
            }
            if (regions.size() > maxRequestEntries) {
                throw new IllegalArgumentException(regions.size() + " regions: one request carries at most " + maxRequestEntries
                        + (maxRequestEntries == Mrsp.C_MAX_REQUEST_ENTRIES ? " (what a C NAA can receive)" : ""));
            }
            return new NaaClient(this);
        }
    }

    /** A builder for a context talking to the NAA at {@code naa}. */
    public static Builder builder(InetSocketAddress naa) {
        return new Builder(naa);
    }

    private final InetSocketAddress naa;
    private final InetSocketAddress local;
    private final Duration addressTimeout;
    private final Duration routeTimeout;
    private final List<Region> params = new ArrayList<>();
    private final List<Region> internals = new ArrayList<>();
    private final StateMachine machine = new StateMachine(StateMachine.Role.CLIENT);
    private final EventChannel events;
    private final CmId id;
    private ProtectionDomain pd;
    private CompletionChannel completionChannel;
    private CompletionQueue cq;
    private QueuePair qp;
    private MemoryRegion mrspBuffer;
    private final SendRequests sends;
    private final ReceiveRequests receives = new ReceiveRequests(1, 1);
    private final WorkCompletions completions = new WorkCompletions(64);
    private NaaiceException failure;
    private boolean closed;
    /** Held by every method: one thread at a time drives the context, and close() may come from any. */
    private final ReentrantLock lock = new ReentrantLock();

    // connection and MRSP progress, for close(): a C NAA must see a region setup or an abort first
    private boolean established;
    private boolean peerDisconnected;
    private boolean requestPosted;
    private boolean answerArrived;
    // MRSP progress
    private boolean mrspSendDone;
    private MrspMessage mrspAnswer;
    // RPC progress
    private int rpcs;
    private int writesExpected;
    private int writesDone;
    private boolean replySeen;
    private int replyImmediate;
    private int replyBytes;
    private int userData;
    private long rpcStart;
    private long lastRpcNanos;
    private long connectStart;
    private long setupNanos;

    private NaaClient(Builder b) {
        this.naa = b.naa;
        this.local = b.local;
        this.addressTimeout = b.addressTimeout;
        this.routeTimeout = b.routeTimeout;
        for (Region r : b.regions) {
            (r.internal() ? internals : params).add(r);
        }
        // Requested NAA addresses, as the C host makes them: internal regions first, page-aligned steps.
        long next = b.requestedAddressOffset;
        List<Region> order = new ArrayList<>(internals);
        order.addAll(params);
        for (Region r : order) {
            r.requestedAddress = next;
            next += (r.size + PAGE - 1) / PAGE * PAGE;
        }
        this.sends = new SendRequests(params.size() + 1, 1);
        EventChannel ch = null;
        try {
            ch = EventChannel.create();
            this.events = ch;
            this.id = ch.createId(PortSpace.TCP);
        } catch (RuntimeException e) {
            if (ch != null) {
                ch.close();
            }
            sends.close();
            receives.close();
            completions.close();
            throw e;
        }
    }

    /** The current state. */
    public NaaState state() {
        return underLock(() -> machine.state());
    }

    /** Why the context is in {@link NaaState#ERROR}, or null. */
    public NaaiceException failure() {
        return underLock(() -> failure);
    }

    /** The NAA's address. */
    public InetSocketAddress naaAddress() {
        return naa;
    }

    /** The number of parameter regions. */
    public int parameterCount() {
        return params.size();
    }

    /** The RPCs started on this connection. */
    public int rpcCount() {
        return underLock(() -> rpcs);
    }

    /** The raw 32-bit immediate of the last reply (host order). */
    public int lastReplyImmediate() {
        return underLock(() -> replyImmediate);
    }

    /** The return code of the last reply (0 = success), decoded as {@link Immediate#returnCode}. */
    public int lastReturnCode() {
        return underLock(() -> Immediate.returnCode(replyImmediate));
    }

    /** The byte count of the last reply's completion: the length of the NAA's final write only. */
    public long bytesReceived() {
        return underLock(() -> Integer.toUnsignedLong(replyBytes));
    }

    /** Nanoseconds from {@link #startConnect} to the end of the region setup. */
    public long setupNanos() {
        return underLock(() -> setupNanos);
    }

    /** Nanoseconds of the last finished RPC, from its start to the NAA's reply. */
    public long lastRpcNanos() {
        return underLock(() -> lastRpcNanos);
    }

    /** Sets the three user bytes U0, U1, U2 of the next RPCs' immediates (default 0). */
    public void setUserBytes(int u0, int u1, int u2) {
        lock.lock();
        try {
            Immediate.request(1, u0, u1, u2);
            this.userData = (u2 << 24) | (u1 << 16) | (u0 << 8);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Sends only the first {@code bytes} of parameter {@code index} in the next RPCs; a negative
     * value restores the full size. The NAA still writes outputs back at their full size.
     */
    public void setBytesToSend(int index, long bytes) {
        lock.lock();
        try {
            Region r = params.get(index);
            if (bytes > r.size) {
                throw new IllegalArgumentException("parameter " + index + " has " + r.size + " bytes, cannot send " + bytes);
            }
            r.bytesToSend = bytes < 0 ? r.size : bytes;
        } finally {
            lock.unlock();
        }
    }

    // ---------------------------------------------------------------- non-blocking steps

    /** INIT: starts resolving the NAA's address; {@link #progress()} then moves to READY and CONNECTED. */
    public void startConnect() {
        lock.lock();
        try {
            expect(NaaState.INIT, "startConnect");
            connectStart = System.nanoTime();
            try {
                id.resolveAddress(local, naa, addressTimeout);
            } catch (RuntimeException e) {
                throw fail(NaaiceException.Reason.LOCAL, 0, "cannot resolve " + naa, e);
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * CONNECTED: posts the receive for the answer and sends the advertise+request with the
     * parameter regions (registered in place when the address was resolved); {@link #progress()}
     * then moves to MRSP_RECEIVING and MRSP_DONE.
     */
    public void startRegionSetup() {
        lock.lock();
        try {
            expect(NaaState.CONNECTED, "startRegionSetup");
            try {
                List<MrspMessage.RequestEntry> entries = new ArrayList<>();
                for (Region r : params) {
                    // every region's rkey travels (the C NAA takes them as given); only an output's lets the NAA write.
                    // The address is only a number for the peer: the region keeps its RdmaArena memory registered
                    // until it is closed, and the arena's close deregisters it before freeing, so the key dies first.
                    entries.add(new MrspMessage.RequestEntry(r.flags, r.requestedAddress, r.mr.address(), r.mr.rkey(), r.size));
                }
                for (Region r : internals) {
                    entries.add(new MrspMessage.RequestEntry(RegionFlags.INTERNAL, r.requestedAddress, 0, 0, r.size));
                }
                // The answer lands in the first half of the buffer, the request goes from the second half.
                long half = mrspBuffer.length() / 2;
                receives.get(0).wrId(WR_MRSP_RECV).sge(mrspBuffer, 0, (int) half);
                qp.postReceive(receives, 1);
                int len = Mrsp.encode(new MrspMessage.Request(entries), mrspBuffer.segment().asSlice(half));
                sends.reset(0).wrId(WR_MRSP_SEND).opcode(Opcode.SEND).flags(SendFlags.SIGNALED | SendFlags.SOLICITED)
                        .sge(mrspBuffer, half, len);
                mrspSendDone = false;
                mrspAnswer = null;
                machine.moveTo(NaaState.MRSP_SENDING);
                qp.postSend(sends, 1);
                requestPosted = true;
            } catch (NaaiceException e) {
                throw e;
            } catch (RuntimeException e) {
                throw fail(NaaiceException.Reason.LOCAL, 0, "cannot start the region setup: " + e.getMessage(), e);
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * MRSP_DONE, FINISHED (or ERROR after a non-zero NAA return code): starts an RPC of function
     * {@code fn} (1..127): posts the receive for the reply, then writes the inputs (single-send
     * ones only in the first RPC) with the last write carrying the immediate; {@link #progress()}
     * then moves to DATA_RECEIVING and FINISHED.
     */
    public void startRpc(int fn) {
        lock.lock();
        try {
            NaaState s = machine.state();
            if (s == NaaState.ERROR && failure != null && failure.reason() == NaaiceException.Reason.NAA_RETURN_CODE) {
                failure = null;
            } else if (s != NaaState.MRSP_DONE && s != NaaState.FINISHED) {
                throw new IllegalStateException("startRpc needs MRSP_DONE or FINISHED, the context is " + s
                        + (failure != null ? " (" + failure.getMessage() + ")" : ""));
            }
            int imm = Immediate.request(fn) | userData;
            try {
                receives.get(0).wrId(WR_DATA_RECV).noSge();
                qp.postReceive(receives, 1);
                int n = 0;
                for (Region r : params) {
                    if ((r.flags & RegionFlags.INPUT) == 0 || ((r.flags & RegionFlags.SINGLE_SEND) != 0 && rpcs > 0)) {
                        continue;
                    }
                    SendRequest w = sends.reset(n++).wrId(WR_WRITE).opcode(Opcode.RDMA_WRITE).flags(SendFlags.SIGNALED)
                            .rdma(r.remoteAddress, r.remoteRkey);
                    if (r.bytesToSend > 0) {
                        w.sge(r.mr, 0, (int) r.bytesToSend);
                    }
                }
                if (n == 0) {
                    // Nothing to write: a zero-length write-with-imm to NAA region 0 still starts the RPC.
                    Region r0 = params.get(0);
                    sends.reset(n++).wrId(WR_WRITE).rdma(r0.remoteAddress, r0.remoteRkey);
                }
                sends.get(n - 1).opcode(Opcode.RDMA_WRITE_WITH_IMM).flags(SendFlags.SIGNALED | SendFlags.SOLICITED).immediateData(imm);
                writesExpected = n;
                writesDone = 0;
                replySeen = false;
                rpcs++;
                rpcStart = System.nanoTime();
                machine.moveTo(NaaState.DATA_SENDING);
                qp.postSend(sends, n);
            } catch (RuntimeException e) {
                throw fail(NaaiceException.Reason.LOCAL, 0, "cannot start RPC " + (rpcs + 1) + ": " + e.getMessage(), e);
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * One non-blocking progress round: takes the pending connection manager events and drains the
     * completion queue, moving the state machine. Returns the state afterwards.
     */
    public NaaState progress() {
        lock.lock();
        try {
            if (closed || machine.state() == NaaState.ERROR && failure != null
                    && failure.reason() != NaaiceException.Reason.NAA_RETURN_CODE) {
                return machine.state();
            }
            try {
                CmEvent ev;
                while ((ev = events.tryGetEvent()) != null) {
                    handle(ev);
                }
                if (cq != null) {
                    drain();
                }
            } catch (NaaiceException e) {
                // the context is in ERROR
            } catch (RuntimeException e) {
                fail(NaaiceException.Reason.LOCAL, 0, "progress failed", e);
            }
            return machine.state();
        } finally {
            lock.unlock();
        }
    }

    /**
     * One progress round that may wait: progresses, and if that moved nothing and the context is
     * still working towards a state, sleeps on the completion or event channel for at most {@code
     * max} (and at most one second; the lock is not held meanwhile) and progresses again. Never
     * fails for running out of time (the caller owns the deadline). Returns the state afterwards.
     */
    public NaaState progress(Duration max) {
        AutoCloseable target;
        lock.lock();
        try {
            NaaState before = progress();
            if (closed || before == NaaState.ERROR || before == NaaState.FINISHED || before == NaaState.MRSP_DONE
                    || before == NaaState.CONNECTED || before == NaaState.DISCONNECTED) {
                return before;
            }
            target = sleepTarget();
        } finally {
            lock.unlock();
        }
        if (target != null) {
            sleep(target, Math.max(1, Math.min(SLICE_NANOS, max.toNanos())));
        }
        return progress();
    }

    // ---------------------------------------------------------------- blocking steps

    /** Connects (INIT → CONNECTED) within {@code timeout}. */
    public void connect(Duration timeout) {
        startConnect();
        await(NaaState.CONNECTED, timeout, "connect to " + naa);
    }

    /** Sets up the regions (CONNECTED → MRSP_DONE) within {@code timeout}. */
    public void setupRegions(Duration timeout) {
        startRegionSetup();
        await(NaaState.MRSP_DONE, timeout, "region setup");
        setupNanos = System.nanoTime() - connectStart;
    }

    /**
     * Runs one RPC of function {@code fn} within {@code timeout} and returns when the NAA's reply
     * has arrived (the outputs are written then).
     *
     * @throws NaaiceException with {@link NaaiceException.Reason#NAA_RETURN_CODE} when the NAA
     *                         reported an error (the connection stays usable), or any other failure
     */
    public void rpc(int fn, Duration timeout) {
        startRpc(fn);
        await(NaaState.FINISHED, timeout, "RPC " + rpcs + " (function " + fn + ")");
    }

    /**
     * Waits until the context reaches {@code target}, progressing it; sleeps on the connection
     * manager's channel or the completion channel, never spins.
     *
     * @throws NaaiceException when the context fails meanwhile, or (then in ERROR) on timeout
     */
    public void await(NaaState target, Duration timeout, String what) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            AutoCloseable sleepOn;
            long left;
            // the lock is held while progressing, not while sleeping: a close() from another thread gets in
            lock.lock();
            try {
                NaaState s = progress();
                if (s == target) {
                    return;
                }
                if (s == NaaState.ERROR) {
                    throw failure;
                }
                if (s == NaaState.DISCONNECTED) {
                    throw new IllegalStateException("the context is closed");
                }
                left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw fail(NaaiceException.Reason.TIMEOUT, 0, what + " did not finish within " + timeout + " (state " + s + ")",
                            null);
                }
                sleepOn = sleepTarget();
            } finally {
                lock.unlock();
            }
            if (sleepOn != null) {
                sleep(sleepOn, Math.min(left, SLICE_NANOS));
            }
        }
    }

    /**
     * Fails the context with {@link NaaiceException.Reason#TIMEOUT}: {@code what} did not finish
     * within {@code timeout} (for a caller that owns the deadline, such as {@link NaaHandle});
     * returns the failure (an earlier one, if the context had already failed).
     */
    NaaiceException timedOut(String what, Duration timeout) {
        lock.lock();
        try {
            return fail(NaaiceException.Reason.TIMEOUT, 0, what + " did not finish within " + timeout + " (state "
                    + machine.state() + ")", null);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Under the lock: what to sleep on for the next step, the connection manager's channel (while
     * connecting) or the completion channel (armed here); null when there is nothing to sleep on
     * (failed, closed) or arming found completions to take first (they are taken).
     */
    private AutoCloseable sleepTarget() {
        NaaState s = machine.state();
        if (closed || s == NaaState.ERROR || s == NaaState.DISCONNECTED) {
            return null;
        }
        try {
            if (cq == null || s == NaaState.INIT || s == NaaState.READY) {
                return events;
            }
            // Waiting for the reply: only its write-with-imm (SE) need wake the context (as the C host
            // arms), and it finds the completions of the context's own writes in the queue; once the
            // reply is in, any completion does. The posted receive's flush on a failure is solicited.
            boolean solicitedOnly = (s == NaaState.DATA_SENDING || s == NaaState.DATA_RECEIVING) && !replySeen;
            cq.requestNotify(solicitedOnly);
            return drain() ? null : completionChannel;
        } catch (NaaiceException e) {
            return null; // in ERROR
        } catch (RuntimeException e) {
            fail(NaaiceException.Reason.LOCAL, 0, "waiting for progress failed", e);
            return null;
        }
    }

    /**
     * Without the lock: sleeps on {@code target} (from {@link #sleepTarget}) for at most {@code
     * nanos}, and handles, under the lock, a connection manager event taken meanwhile. A close
     * from another thread closes the channel, which wakes the sleep; the caller's next progress
     * then sees the context closed.
     */
    private void sleep(AutoCloseable target, long nanos) {
        CmEvent ev = null;
        try {
            if (target instanceof EventChannel ch) {
                ev = ch.getEvent(Duration.ofNanos(nanos));
            } else {
                ((CompletionChannel) target).await(Duration.ofNanos(nanos));
            }
        } catch (IllegalStateException e) {
            return; // closed meanwhile: the next progress says so
        } catch (RuntimeException e) {
            lock.lock();
            try {
                if (!closed) {
                    fail(NaaiceException.Reason.LOCAL, 0, "waiting for progress failed", e);
                }
            } finally {
                lock.unlock();
            }
            return;
        }
        if (ev != null) {
            lock.lock();
            try {
                if (!closed) {
                    handle(ev);
                }
            } catch (NaaiceException e) {
                // in ERROR
            } catch (RuntimeException e) {
                fail(NaaiceException.Reason.LOCAL, 0, "handling " + ev.type() + " failed", e);
            } finally {
                lock.unlock();
            }
        }
    }

    // ---------------------------------------------------------------- event handling

    private void handle(CmEvent ev) {
        CmEventType t = ev.type();
        NaaState s = machine.state();
        switch (t) {
            case ADDR_RESOLVED -> {
                if (s != NaaState.INIT) {
                    return;
                }
                createResources();
                id.resolveRoute(routeTimeout);
                machine.moveTo(NaaState.READY);
            }
            case ROUTE_RESOLVED -> {
                if (s == NaaState.READY) {
                    id.connect(new ConnectionParameters(new byte[0], 1, 1, false, 7, 6, false, 0));
                }
            }
            case ESTABLISHED -> {
                if (s == NaaState.READY) {
                    established = true;
                    machine.moveTo(NaaState.CONNECTED);
                }
            }
            case DISCONNECTED -> {
                peerDisconnected = true;
                try {
                    id.disconnect();
                } catch (RuntimeException e) {
                    // already disconnected
                }
                throw fail(NaaiceException.Reason.CM_EVENT, ev.status(), "the NAA disconnected (" + t + ") in state " + s, null);
            }
            case REJECTED -> {
                String why = new String(ev.privateDataTrimmed(), java.nio.charset.StandardCharsets.ISO_8859_1);
                throw fail(NaaiceException.Reason.CM_EVENT, ev.status(), "the NAA rejected the connection"
                        + (why.isEmpty() ? "" : ": " + why), null);
            }
            case TIMEWAIT_EXIT, CONNECT_RESPONSE, ADDR_CHANGE -> {
            }
            default -> throw fail(NaaiceException.Reason.CM_EVENT, ev.status(), t + " in state " + s, null);
        }
    }

    /**
     * The verbs resources, once the address (and so the device) is known; and the parameter
     * regions registered, so that memory that cannot be registered fails the context before it
     * connects (the NAA never sees a connection without a region setup).
     */
    private void createResources() {
        pd = id.context().allocateProtectionDomain();
        completionChannel = id.context().createCompletionChannel();
        int depth = params.size() + 4;
        cq = id.context().createCompletionQueue(2 * depth + 8, completionChannel, 0);
        qp = id.createQueuePair(pd, QueuePairInit.of(QpType.RC, cq).maxSendWr(depth).maxRecvWr(4).maxSendSge(1).maxRecvSge(1));
        mrspBuffer = pd.allocateRegion(2L * Mrsp.MAX_MESSAGE, MRSP_ACCESS);
        for (Region r : params) {
            try {
                r.mr = pd.register(r.segment, r.access());
            } catch (IllegalArgumentException e) {
                throw fail(NaaiceException.Reason.LOCAL, 0, r.label + ": its memory is not of an open RdmaArena or the global"
                        + " arena, so it could be freed while the NAA can reach it; allocate it from an RdmaArena", e);
            } catch (IllegalStateException e) {
                throw fail(NaaiceException.Reason.LOCAL, 0, r.label + ": its memory is closed (" + e.getMessage() + ")", e);
            } catch (RuntimeException e) {
                throw fail(NaaiceException.Reason.LOCAL, 0, r.label + ": cannot register its " + r.size + " bytes", e);
            }
        }
    }

    /** Drains the completion queue; true when at least one completion was taken. */
    private boolean drain() {
        boolean any = false;
        int n;
        while ((n = cq.poll(completions)) > 0) {
            any = true;
            for (int i = 0; i < n; i++) {
                WorkCompletion wc = completions.get(i);
                complete(wc.wrId(), wc.isSuccess(), wc.statusCode(), wc.status().toString(), wc.opcode(), wc.byteLength(),
                        wc.immediateData());
            }
        }
        advance();
        return any;
    }

    private void complete(long wrId, boolean ok, int status, String statusName, WcOpcode op, int bytes, int imm) {
        if (!ok) {
            if (machine.state() != NaaState.ERROR) {
                fail(NaaiceException.Reason.WORK_COMPLETION, status, "work request " + wrId + " failed with " + statusName
                        + (status == 13 ? " (the NAA was not ready for the RPC)" : ""), null);
            }
            return;
        }
        if (wrId == WR_MRSP_SEND) {
            mrspSendDone = true;
        } else if (wrId == WR_MRSP_RECV) {
            answerArrived = true;
            try {
                mrspAnswer = Mrsp.decode(mrspBuffer.segment(), bytes);
            } catch (MalformedMrspException e) {
                fail(NaaiceException.Reason.PROTOCOL, 0, "the NAA's MRSP answer: " + e.getMessage(), null);
            }
        } else if (wrId == WR_WRITE) {
            writesDone++;
        } else if (wrId == WR_DATA_RECV && op == WcOpcode.RECV_RDMA_WITH_IMM) {
            replySeen = true;
            replyImmediate = imm;
            replyBytes = bytes;
        } else {
            fail(NaaiceException.Reason.PROTOCOL, 0, "unexpected completion " + op + " (work request " + wrId + ") in state "
                    + machine.state(), null);
        }
    }

    /** Moves the state machine as far as the completions seen allow (they may arrive in any order). */
    private void advance() {
        if (machine.state() == NaaState.MRSP_SENDING && mrspSendDone) {
            machine.moveTo(NaaState.MRSP_RECEIVING);
        }
        if (machine.state() == NaaState.MRSP_RECEIVING && mrspAnswer != null) {
            MrspMessage answer = mrspAnswer;
            mrspAnswer = null;
            applyAnswer(answer);
        }
        if (machine.state() == NaaState.DATA_SENDING && writesDone >= writesExpected) {
            machine.moveTo(NaaState.DATA_RECEIVING);
        }
        if (machine.state() == NaaState.DATA_RECEIVING && replySeen) {
            replySeen = false;
            lastRpcNanos = System.nanoTime() - rpcStart;
            machine.moveTo(NaaState.FINISHED);
            int code = Immediate.returnCode(replyImmediate);
            if (code != 0) {
                fail(NaaiceException.Reason.NAA_RETURN_CODE, code, "the NAA finished RPC " + rpcs + " with return code " + code
                        + " (immediate 0x" + Integer.toHexString(replyImmediate) + ")", null);
            }
        }
    }

    private void applyAnswer(MrspMessage answer) {
        switch (answer) {
            case MrspMessage.Error e -> fail(NaaiceException.Reason.MRSP_ERROR, e.code(), "the NAA refused the regions: "
                    + Mrsp.errorName(e.code()), null);
            case MrspMessage.Advertise a -> {
                if (a.entries().size() != params.size()) {
                    fail(NaaiceException.Reason.PROTOCOL, 0, "the NAA advertised " + a.entries().size() + " regions for "
                            + params.size() + " parameters", null);
                    return;
                }
                for (int i = 0; i < params.size(); i++) {
                    MrspMessage.AdvertiseEntry e = a.entries().get(i);
                    Region r = params.get(i);
                    if (e.size() < r.size) {
                        fail(NaaiceException.Reason.PROTOCOL, 0, "the NAA advertised " + e.size() + " bytes for parameter " + i
                                + " of " + r.size + " bytes", null);
                        return;
                    }
                    r.remoteAddress = e.address();
                    r.remoteRkey = e.rkey();
                }
                machine.moveTo(NaaState.MRSP_DONE);
            }
            case MrspMessage.Request r -> fail(NaaiceException.Reason.PROTOCOL, 0, "the NAA answered with an advertise+request", null);
        }
    }

    private NaaiceException fail(NaaiceException.Reason reason, int code, String message, Throwable cause) {
        NaaiceException e = new NaaiceException(reason, code, message, cause);
        if (machine.state() == NaaState.ERROR && failure != null && failure.reason() == NaaiceException.Reason.NAA_RETURN_CODE
                && reason != NaaiceException.Reason.NAA_RETURN_CODE) {
            failure = e; // a real failure replaces the recoverable one
        } else if (machine.state() != NaaState.ERROR && machine.state() != NaaState.DISCONNECTED) {
            failure = e;
            machine.moveTo(NaaState.ERROR);
            LOG.log(reason == NaaiceException.Reason.NAA_RETURN_CODE ? System.Logger.Level.DEBUG : System.Logger.Level.WARNING,
                    "NAAICE client to {0}: {1}", naa, e.getMessage());
        }
        return failure != null ? failure : e;
    }

    private void expect(NaaState s, String what) {
        if (machine.state() != s) {
            throw new IllegalStateException(what + " needs " + s + ", the context is " + machine.state()
                    + (failure != null ? " (" + failure.getMessage() + ")" : ""));
        }
    }

    /**
     * Disconnects (waits at most one second for the NAA's answer: the C NAA sends none) and frees
     * everything the context created; the application's segments stay untouched. Moves to
     * DISCONNECTED; idempotent.
     *
     * <p>The C NAA cannot take a disconnect before the region setup is through (its worker then
     * enters the data phase without regions and the whole NAA process crashes). So a connected
     * context whose region setup never started first sends an MRSP error message ({@link
     * Mrsp#HOST_ABORT}, the code also at offset 3, SE), waits for its completion and leaves the
     * NAA half a second to take it; one whose request is still unanswered first waits up to two
     * seconds for the answer.
     */
    @Override
    public void close() {
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            if (established && !peerDisconnected && qp != null) {
                try {
                    if (!requestPosted) {
                        abortRegionSetup();
                    } else if (!answerArrived) {
                        awaitAnswer();
                    }
                } catch (RuntimeException e) {
                    LOG.log(System.Logger.Level.DEBUG, "NAAICE client to {0}: ending the region setup before closing failed: {1}",
                            naa, e);
                }
            }
            NaaState s = machine.state();
            if (s != NaaState.INIT && s != NaaState.READY && !(s == NaaState.ERROR && !established)) {
                try {
                    id.disconnect();
                    long until = System.nanoTime() + 1_000_000_000L;
                    while (System.nanoTime() < until) {
                        CmEvent ev = events.getEvent(Duration.ofMillis(100));
                        if (ev != null && ev.type() == CmEventType.DISCONNECTED) {
                            break;
                        }
                    }
                } catch (RuntimeException e) {
                    // not connected (any more)
                }
            }
            RuntimeException first = null;
            for (AutoCloseable c : new AutoCloseable[]{id, cq, completionChannel, pd, events, sends, receives, completions}) {
                if (c == null) {
                    continue;
                }
                try {
                    c.close();
                } catch (Exception e) {
                    if (first == null) {
                        first = e instanceof RuntimeException re ? re : new RuntimeException(e);
                    }
                }
            }
            machine.moveTo(NaaState.DISCONNECTED);
            if (first != null) {
                throw first;
            }
        } finally {
            lock.unlock();
        }
    }

    /** Sends the abort message, waits for its completion, then for the grace period (close only). */
    private void abortRegionSetup() {
        long half = mrspBuffer.length() / 2;
        int len = Mrsp.encode(new MrspMessage.Error(Mrsp.HOST_ABORT, true), mrspBuffer.segment().asSlice(half));
        sends.reset(0).wrId(WR_MRSP_ABORT).opcode(Opcode.SEND).flags(SendFlags.SIGNALED | SendFlags.SOLICITED).sge(mrspBuffer, half, len);
        qp.postSend(sends, 1);
        long until = System.nanoTime() + ABORT_SEND_WAIT_NANOS;
        while (System.nanoTime() < until && !peerDisconnected) {
            int n = cq.poll(completions);
            for (int i = 0; i < n; i++) {
                WorkCompletion wc = completions.get(i);
                if (wc.wrId() == WR_MRSP_ABORT) {
                    if (wc.isSuccess()) {
                        pause(ABORT_GRACE_NANOS);
                    }
                    return;
                }
            }
            if (n == 0) {
                pause(1_000_000L);
            }
        }
    }

    /** Progresses until the NAA's MRSP answer arrived, the NAA disconnected or the wait is over (close only). */
    private void awaitAnswer() {
        long until = System.nanoTime() + ANSWER_WAIT_NANOS;
        while (!answerArrived && !peerDisconnected && System.nanoTime() < until
                && !(failure != null && failure.reason() == NaaiceException.Reason.WORK_COMPLETION)) { // a failed queue pair receives nothing
            CmEvent ev;
            while ((ev = events.tryGetEvent()) != null) {
                if (ev.type() == CmEventType.DISCONNECTED) {
                    peerDisconnected = true;
                }
            }
            if (!drain()) {
                pause(1_000_000L);
            }
        }
    }

    private void pause(long nanos) {
        long until = System.nanoTime() + nanos;
        long left;
        while ((left = until - System.nanoTime()) > 0) {
            java.util.concurrent.locks.LockSupport.parkNanos(left);
        }
    }

    @Override
    public String toString() {
        return "NaaClient[" + naa + ", " + machine.state() + ", " + params.size() + " parameters, " + internals.size()
                + " internal, " + rpcs + " RPCs]";
    }

    /** Reads {@code what} under the lock that the RPC path holds while it changes the state. */
    private <T> T underLock(Supplier<T> what) {
        lock.lock();
        try {
            return what.get();
        } finally {
            lock.unlock();
        }
    }
}
