package dev.verbs4j.naaice;

import dev.verbs4j.verbs.Closeables;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
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
 * only while it progresses, never while it sleeps: it sleeps on the connection manager's and the
 * completion channel at once without it (a virtual thread parks there, its carrier free; see
 * {@link dev.verbs4j.verbs.event.Readiness}), so a {@link #close()} from another thread gets the
 * lock at once, wakes the sleeper, and the blocking call ends with an {@link
 * IllegalStateException} (the context is closed). A sleep lasts until a completion or event
 * arrives or the caller's time is up, so an idle context costs no wake-ups.
 */
public final class NaaClient implements AutoCloseable {

    /** The NAAICE default port. */
    public static final int DEFAULT_PORT = 12345;

    /** How long {@link #close()} waits for the NAA's answer to its disconnect. */
    private static final long DISCONNECT_WAIT_NANOS = 1_000_000_000L;
    private static final long PAGE = 4096;

    /** What a context is made with; see {@link NaaClient#builder}. A mutable builder on the heap. */
    public static final class Builder {
        private final InetSocketAddress naa;
        private InetSocketAddress local;
        private final List<ClientRegion> regions = new ArrayList<>();
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
            regions.add(new ClientRegion(segment, segment.byteSize(), flags, label));
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
            regions.add(new ClientRegion(null, size, RegionFlags.INTERNAL, "internal region"));
            return this;
        }

        /**
         * The most entries (parameters + internal) one request may carry: default {@value
         * Mrsp#C_MAX_REQUEST_ENTRIES}, all a C NAA can receive; up to 255 for a Java NAA.
         */
        public Builder maxRequestEntries(int n) {
            Bounds.inRange("maxRequestEntries", n, 1, 255);
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
    private final List<ClientRegion> params = new ArrayList<>();
    private final List<ClientRegion> internals = new ArrayList<>();
    private final ClientState state;
    private final ClientConnector connector;
    private final ClientResources resources;
    private final RegionSetup regionSetup;
    private final RpcExchange rpcs;
    /** Holds the lock that every method takes: one thread at a time drives the context, and close() may come from any. */
    private final ClientProgress engine;
    private long connectStart;
    private long setupNanos;

    private NaaClient(Builder b) {
        this.naa = b.naa;
        for (ClientRegion r : b.regions) {
            (r.internal() ? internals : params).add(r);
        }
        // Requested NAA addresses, as the C host makes them: internal regions first, page-aligned steps.
        long next = b.requestedAddressOffset;
        List<ClientRegion> order = new ArrayList<>(internals);
        order.addAll(params);
        for (ClientRegion r : order) {
            r.requestedAddress = next;
            next += (r.size + PAGE - 1) / PAGE * PAGE;
        }
        this.state = new ClientState(naa);
        this.resources = new ClientResources(params.size());
        ClientConnector c = null;
        try {
            c = new ClientConnector(naa, b.local, b.addressTimeout, b.routeTimeout, state);
            resources.watch(c.fd());
        } catch (RuntimeException e) {
            throw Closeables.closeAfter(e, c, resources);
        }
        this.connector = c;
        this.regionSetup = new RegionSetup(state, resources, params, internals);
        this.rpcs = new RpcExchange(state, resources, params);
        this.engine = new ClientProgress(state, connector, resources, regionSetup, rpcs, params);
    }

    /** The current state. */
    public NaaState state() {
        return underLock(state::state);
    }

    /** Why the context is in {@link NaaState#ERROR}, or null. */
    public NaaiceException failure() {
        return underLock(state::failure);
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
        return underLock(rpcs::count);
    }

    /** The raw 32-bit immediate of the last reply (host order). */
    public int lastReplyImmediate() {
        return underLock(() -> rpcs.lastReply().immediate());
    }

    /** The return code of the last reply (0 = success), decoded as {@link Immediate#returnCode}. */
    public int lastReturnCode() {
        return underLock(() -> Immediate.returnCode(rpcs.lastReply().immediate()));
    }

    /** The byte count of the last reply's completion: the length of the NAA's final write only. */
    public long bytesReceived() {
        return underLock(() -> Integer.toUnsignedLong(rpcs.lastReply().bytes()));
    }

    /** Nanoseconds from {@link #startConnect} to the end of the region setup. */
    public long setupNanos() {
        return underLock(() -> setupNanos);
    }

    /** Nanoseconds of the last finished RPC, from its start to the NAA's reply. */
    public long lastRpcNanos() {
        return underLock(rpcs::lastRpcNanos);
    }

    /** Sets the three user bytes U0, U1, U2 of the next RPCs' immediates (default 0). */
    public void setUserBytes(int u0, int u1, int u2) {
        underLock(() -> {
            rpcs.userBytes(u0, u1, u2);
            return null;
        });
    }

    /**
     * Sends only the first {@code bytes} of parameter {@code index} in the next RPCs; a negative
     * value restores the full size. The NAA still writes outputs back at their full size.
     */
    public void setBytesToSend(int index, long bytes) {
        underLock(() -> {
            ClientRegion r = params.get(index);
            if (bytes > r.size) {
                throw new IllegalArgumentException("parameter " + index + " has " + r.size + " bytes, cannot send " + bytes);
            }
            r.bytesToSend = bytes < 0 ? r.size : bytes;
            return null;
        });
    }

    // ---------------------------------------------------------------- non-blocking steps

    /** INIT: starts resolving the NAA's address; {@link #progress()} then moves to READY and CONNECTED. */
    public void startConnect() {
        underLock(() -> {
            state.expect(NaaState.INIT, "startConnect");
            connectStart = System.nanoTime();
            connector.start();
            return null;
        });
    }

    /**
     * CONNECTED: posts the receive for the answer and sends the advertise+request with the
     * parameter regions (registered in place when the address was resolved); {@link #progress()}
     * then moves to MRSP_RECEIVING and MRSP_DONE.
     */
    public void startRegionSetup() {
        underLock(() -> {
            state.expect(NaaState.CONNECTED, "startRegionSetup");
            try {
                regionSetup.start();
            } catch (NaaiceException e) {
                throw e;
            } catch (RuntimeException e) {
                throw state.fail(NaaiceException.Reason.LOCAL, 0, "cannot start the region setup: " + e.getMessage(), e);
            }
            return null;
        });
    }

    /**
     * MRSP_DONE, FINISHED (or ERROR after a non-zero NAA return code): starts an RPC of function
     * {@code fn} (1..127): posts the receive for the reply, then writes the inputs (single-send
     * ones only in the first RPC) with the last write carrying the immediate; {@link #progress()}
     * then moves to DATA_RECEIVING and FINISHED.
     */
    public void startRpc(int fn) {
        underLock(() -> {
            NaaState s = state.state();
            if (state.failedByReturnCode()) {
                state.clearReturnCode();
            } else if (s != NaaState.MRSP_DONE && s != NaaState.FINISHED) {
                throw new IllegalStateException("startRpc needs MRSP_DONE or FINISHED, the context is " + s
                        + (state.failure() != null ? " (" + state.failure().getMessage() + ")" : ""));
            }
            Immediate.request(fn); // checks 1..127
            try {
                rpcs.start(fn);
            } catch (RuntimeException e) {
                throw state.fail(NaaiceException.Reason.LOCAL, 0, "cannot start RPC " + (rpcs.count() + 1) + ": " + e.getMessage(), e);
            }
            return null;
        });
    }

    /**
     * One non-blocking progress round: takes the pending connection manager events and drains the
     * completion queue, moving the state machine. Returns the state afterwards.
     */
    public NaaState progress() {
        return engine.progress();
    }

    /**
     * One progress round that may wait: progresses, and if that moved nothing and the context is
     * still working towards a state, sleeps on its channels for at most {@code max} (the lock is
     * not held meanwhile) and progresses again. Never fails for running out of time (the caller
     * owns the deadline). Returns the state afterwards.
     */
    public NaaState progress(Duration max) {
        return engine.progress(max);
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
        underLock(() -> setupNanos = System.nanoTime() - connectStart);
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
        await(NaaState.FINISHED, timeout, "RPC " + rpcCount() + " (function " + fn + ")");
    }

    /**
     * Waits until the context reaches {@code target}, progressing it; sleeps on the connection
     * manager's channel and the completion channel at once, never spins.
     *
     * @throws NaaiceException when the context fails meanwhile, or (then in ERROR) on timeout
     */
    public void await(NaaState target, Duration timeout, String what) {
        engine.await(target, timeout, what);
    }

    /**
     * Fails the context with {@link NaaiceException.Reason#TIMEOUT}: {@code what} did not finish
     * within {@code timeout} (for a caller that owns the deadline, such as {@link NaaHandle});
     * returns the failure (an earlier one, if the context had already failed).
     */
    NaaiceException timedOut(String what, Duration timeout) {
        return underLock(() -> state.fail(NaaiceException.Reason.TIMEOUT, 0, what + " did not finish within " + timeout
                + " (state " + state.state() + ")", null));
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
        engine.lock.lock();
        try {
            if (!engine.close()) {
                return;
            }
            engine.endRegionSetup();
            NaaState s = state.state();
            if (s != NaaState.INIT && s != NaaState.READY && !(s == NaaState.ERROR && !connector.wasEstablished())) {
                connector.disconnect(System.nanoTime() + DISCONNECT_WAIT_NANOS);
            }
            try {
                // the sleepers leave before the channels they sleep on close
                Closeables.closeAll(resources::closeWaiters, connector.id(), resources, connector);
            } finally {
                state.moveTo(NaaState.DISCONNECTED);
            }
        } finally {
            engine.lock.unlock();
        }
    }

    @Override
    public String toString() {
        return "NaaClient[" + naa + ", " + state.state() + ", " + params.size() + " parameters, " + internals.size()
                + " internal, " + rpcs.count() + " RPCs]";
    }

    /** Reads {@code what} under the lock that the RPC path holds while it changes the state. */
    private <T> T underLock(Supplier<T> what) {
        engine.lock.lock();
        try {
            return what.get();
        } finally {
            engine.lock.unlock();
        }
    }
}
