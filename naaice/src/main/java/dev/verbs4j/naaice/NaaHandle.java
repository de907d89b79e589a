package dev.verbs4j.naaice;

import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * The NAAICE middleware (the C library's AP2, {@code naa_handle}): one remote function on one NAA,
 * over input and output parameters. {@link #create} finds the NAA in the {@link NaaSpec} ({@code
 * NAA_SPEC}), connects and sets the regions up; then {@link #invoke()} starts an invocation,
 * {@link #test()} progresses it without blocking, {@link #await} blocks until it is over, or
 * {@link #invokeAsync} starts one and returns a future of its status; {@link #close()} disconnects.
 *
 * <pre>{@code
 * try (NaaHandle h = NaaHandle.create(1, List.of(NaaParam.of(a), NaaParam.of(b)), List.of(NaaParam.of(c)))) {
 *     h.invoke();
 *     NaaStatus s = h.await(Duration.ofSeconds(10));
 * }
 * }</pre>
 *
 * <p>Regions as the C library makes them: the inputs in order, each INPUT (plus SINGLE_SEND when
 * {@link NaaParam#singleSend()}); then the outputs, each OUTPUT, except that an output whose
 * segment starts at the same address as an input is merged into that input (one region, INPUT and
 * OUTPUT). Kept for parity with C: a single-send <em>output</em> is also sent once as an input
 * (SINGLE_SEND | INPUT | OUTPUT). The NAA spec item's parameter count must equal the number of
 * inputs.
 *
 * <p>Threads: every method may be called from any thread; one lock serialises them, so the state
 * is never corrupted. {@link #invoke()} while an invocation is running fails with {@link
 * IllegalStateException} and changes nothing; {@link #await} holds the lock only while it
 * progresses, not while it sleeps on the connection (a virtual thread parks there, its carrier
 * free), so {@link #test()} and {@link #close()} from other threads keep answering, and a close
 * wakes it.
 *
 * <p>Futures: {@link #invokeAsync} completes its future from whichever thread sees the invocation
 * end: the invocation's own virtual thread (parked on the connection's completion channel, no OS
 * thread held; it leaves once the invocation is over, failed or timed out, or the handle closed),
 * or a thread in {@link #test()} or {@link #await}. Callbacks attached without an executor run on
 * that thread (or on the caller, when the future is already complete): keep them short, or use
 * the {@code *Async} variants. Back-pressure: a handle runs one invocation at a time (a NAAICE
 * connection has one RPC in flight), so {@code invokeAsync} while one runs fails at once with
 * {@link IllegalStateException}; to have N invocations in flight, use N handles (the NAA's own
 * limits bound them). Memory: the
 * parameters are the application's native segments, registered in place; they must come from an
 * open {@link dev.verbs4j.verbs.RdmaArena} (or the global arena), whose close deregisters them
 * before freeing the memory (the handle then fails at its next invocation, and the NAA can never
 * write into freed memory). Memory of another arena fails {@link #create} with a {@link
 * NaaiceException} naming the parameter ("input 0", "output 1"), before anything is connected.
 * Only outputs are registered for the NAA to write. The handle owns its low-level {@link
 * NaaClient} and frees it on close.
 */
public final class NaaHandle implements AutoCloseable {

    /** The default timeout of {@link #create} (connection and region setup). */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(60);

    private final ReentrantLock lock = new ReentrantLock(true);
    private final NaaSpec spec;
    private final NaaSpec.Item item;
    private final int functionCode;
    private final NaaClient client;
    private final Object owner;
    private boolean invoked;
    private boolean closed;
    /** The future of the running invocation, if it came from {@link #invokeAsync}. */
    private CompletableFuture<NaaStatus> pending;

    private NaaHandle(NaaSpec spec, NaaSpec.Item item, Object owner, int functionCode, NaaClient client) {
        this.spec = spec;
        this.owner = owner;
        this.item = item;
        this.functionCode = functionCode;
        this.client = client;
    }

    /**
     * {@code naa_create} with the NAAs of {@code NAA_SPEC} and the source address of {@code
     * NAA_LOCAL_IP} (if set), within {@link #DEFAULT_TIMEOUT}.
     */
    public static NaaHandle create(int functionCode, List<NaaParam> inputs, List<NaaParam> outputs) {
        return create(NaaSpec.environment(), NaaSpec.localAddressFromEnvironment(), functionCode, inputs, outputs,
                DEFAULT_TIMEOUT);
    }

    /**
     * {@code naa_create}: takes the first free item of {@code spec} serving {@code functionCode},
     * connects to it (from {@code localAddress}, or null for any), registers the parameters in
     * place and runs the region setup, within {@code timeout}.
     *
     * @param functionCode 1..127
     * @throws NaaiceException with {@link NaaiceException.Reason#CONFIGURATION} when no free item
     *                         serves the function or its parameter count is not the number of
     *                         inputs; with {@link NaaiceException.Reason#LOCAL} naming the
     *                         parameter when its memory is not of an open RdmaArena or the global
     *                         arena; with the failure's reason when connecting or the region
     *                         setup failed (the item is free again then)
     * @throws IllegalArgumentException for a parameter that is not native memory, is empty or
     *                                  larger than 2^32-1 bytes, or whose arena is closed
     */
    public static NaaHandle create(NaaSpec spec, String localAddress, int functionCode, List<NaaParam> inputs,
                                   List<NaaParam> outputs, Duration timeout) {
        Immediate.request(functionCode); // checks 1..127
        Object owner = new Object();
        NaaSpec.Item item = spec.bind(functionCode, owner);
        if (item == null) {
            throw new NaaiceException(NaaiceException.Reason.CONFIGURATION, 0, "no free NAA for function code " + functionCode
                    + " in " + spec);
        }
        NaaClient client = null;
        try {
            if (item.paramCount() != inputs.size()) {
                throw new NaaiceException(NaaiceException.Reason.CONFIGURATION, 0, "the NAA at " + item.address()
                        + " (function " + functionCode + ") takes " + item.paramCount() + " parameters, the application gave "
                        + inputs.size());
            }
            InetSocketAddress naa = new InetSocketAddress(InetAddress.getByName(item.address()), item.port());
            NaaClient.Builder b = NaaClient.builder(naa);
            if (localAddress != null) {
                b.localAddress(new InetSocketAddress(InetAddress.getByName(localAddress), 0));
            }
            List<MemorySegment> segments = new ArrayList<>();
            List<Integer> flags = new ArrayList<>();
            List<String> labels = new ArrayList<>();
            for (int i = 0; i < inputs.size(); i++) {
                NaaParam p = inputs.get(i);
                segments.add(p.segment());
                flags.add(RegionFlags.INPUT | (p.singleSend() ? RegionFlags.SINGLE_SEND : 0));
                labels.add("input " + i);
            }
            for (int k = 0; k < outputs.size(); k++) {
                NaaParam p = outputs.get(k);
                int f = RegionFlags.OUTPUT | (p.singleSend() ? RegionFlags.SINGLE_SEND | RegionFlags.INPUT : 0);
                int alias = -1;
                for (int j = 0; j < inputs.size(); j++) {
                    if (inputs.get(j).segment().address() == p.segment().address()) {
                        alias = j;
                        break;
                    }
                }
                if (alias >= 0) {
                    flags.set(alias, flags.get(alias) | f);
                    labels.set(alias, labels.get(alias) + " (also output " + k + ")");
                } else {
                    segments.add(p.segment());
                    flags.add(f);
                    labels.add("output " + k);
                }
            }
            for (int i = 0; i < segments.size(); i++) {
                b.parameter(segments.get(i), flags.get(i), labels.get(i));
            }
            client = b.build();
            long deadline = System.nanoTime() + timeout.toNanos();
            client.connect(timeout);
            client.setupRegions(Duration.ofNanos(Math.max(1, deadline - System.nanoTime())));
            return new NaaHandle(spec, item, owner, functionCode, client);
        } catch (UnknownHostException e) {
            spec.release(item, owner);
            throw new NaaiceException(NaaiceException.Reason.CONFIGURATION, 0, "unknown NAA address " + item.address(), e);
        } catch (RuntimeException e) {
            spec.release(item, owner);
            if (client != null) {
                client.close();
            }
            throw e;
        }
    }

    /** The function code. */
    public int functionCode() {
        return functionCode;
    }

    /** The NAA spec item this handle uses. */
    public NaaSpec.Item naa() {
        return item;
    }

    /** The number of invocations started. */
    public int invocations() {
        return underLock(() -> client.rpcCount());
    }

    /** Why the handle failed, or null. */
    public NaaiceException failure() {
        return underLock(() -> client.failure());
    }

    /**
     * {@code naa_invoke}: starts an invocation (writes the inputs, the last with the function
     * code) and returns without waiting.
     *
     * @throws IllegalStateException when an invocation is still running, or the handle failed or is closed
     */
    public void invoke() {
        lock.lock();
        try {
            if (closed) {
                throw new IllegalStateException("the handle is closed");
            }
            NaaState s = client.state();
            if (pending != null) {
                settle(); // the last invocation ended while its future's thread slept
                if (pending != null) {
                    throw new IllegalStateException("an invocation is running (" + s + ")");
                }
            }
            if (s != NaaState.MRSP_DONE && s != NaaState.FINISHED
                    && !(s == NaaState.ERROR && client.failure() != null
                    && client.failure().reason() == NaaiceException.Reason.NAA_RETURN_CODE)) {
                throw new IllegalStateException(s == NaaState.ERROR ? "the handle failed: " + client.failure().getMessage()
                        : "an invocation is running (" + s + ")");
            }
            client.startRpc(functionCode);
            invoked = true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Starts an invocation like {@link #invoke()} and returns a future of its status, completed
     * without a thread of the caller's waiting (see the class comment for the thread that
     * completes it and runs its callbacks). It fails with the {@link NaaiceException} {@link
     * #await} would throw (a connection failure; a {@link NaaiceException.Reason#TIMEOUT} when
     * the invocation did not end within {@code timeout}, the handle then failed), or with an
     * {@link IllegalStateException} when the handle is closed meanwhile. A non-zero NAA return
     * code completes it normally ({@link NaaStatus#naaError()}). Cancelling the future only stops
     * waiting for it: NAAICE cannot call an RPC back, so the invocation runs to its end, and the
     * handle takes the next one once it is over.
     *
     * @throws IllegalStateException when an invocation is still running, or the handle failed or is closed
     */
    public CompletableFuture<NaaStatus> invokeAsync(Duration timeout) {
        CompletableFuture<NaaStatus> f = new CompletableFuture<>();
        int number;
        lock.lock();
        try {
            invoke();
            pending = f;
            number = client.rpcCount();
        } finally {
            lock.unlock();
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        Thread.ofVirtual().name("naaice-invocation-" + number).start(() -> follow(f, deadline, timeout));
        return f;
    }

    /** The thread of an {@link #invokeAsync} future: progresses until the invocation is over, then settles the future. */
    private void follow(CompletableFuture<NaaStatus> f, long deadline, Duration timeout) {
        while (true) {
            long left;
            lock.lock();
            try {
                if (pending != f) {
                    return; // settled by another thread (test, await, invoke, close)
                }
                client.progress();
                if (settle()) {
                    return;
                }
                left = deadline - System.nanoTime();
                if (left <= 0) {
                    pending = null;
                    f.completeExceptionally(client.timedOut("invocation " + client.rpcCount(), timeout));
                    return;
                }
            } catch (RuntimeException | Error e) {
                pending = null;
                f.completeExceptionally(e);
                return;
            } finally {
                lock.unlock();
            }
            // one sleep on the client's channels until something arrives, the deadline or a close
            client.progress(Duration.ofNanos(left));
        }
    }

    /**
     * Under the lock: completes the pending future when its invocation is over (with its status,
     * or the connection's failure) or the handle is closed; true when it did (or there was none).
     */
    private boolean settle() {
        CompletableFuture<NaaStatus> f = pending;
        if (f == null) {
            return true;
        }
        if (closed) {
            pending = null;
            f.completeExceptionally(new IllegalStateException("the handle is closed"));
            return true;
        }
        NaaState s = client.state();
        if (s != NaaState.FINISHED && s != NaaState.ERROR && s != NaaState.DISCONNECTED) {
            return false;
        }
        pending = null;
        try {
            f.complete(status());
        } catch (RuntimeException e) {
            f.completeExceptionally(e);
        }
        return true;
    }

    /**
     * {@code naa_test}: one non-blocking progress round; the status tells whether the invocation
     * is over and the NAA's return code.
     *
     * @throws NaaiceException when the connection failed (not for a non-zero NAA return code)
     */
    public NaaStatus test() {
        lock.lock();
        try {
            checkOpen();
            client.progress();
            settle();
            return status();
        } finally {
            lock.unlock();
        }
    }

    /**
     * {@code naa_wait}: blocks until the running invocation is over (unlike the C call, which
     * returns after one completion event) or {@code timeout} passes, and returns its status.
     * Returns at once when the last invocation is already over.
     *
     * @throws NaaiceException       when the connection failed, or on timeout (the handle is then failed)
     * @throws IllegalStateException when nothing was invoked yet, or the handle is closed
     */
    public NaaStatus await(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            long left;
            lock.lock();
            try {
                checkOpen();
                if (!invoked) {
                    throw new IllegalStateException("nothing was invoked");
                }
                NaaState s = client.progress();
                if (s == NaaState.FINISHED || s == NaaState.ERROR) {
                    settle();
                    return status();
                }
                left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw client.timedOut("invocation " + client.rpcCount(), timeout);
                }
            } finally {
                lock.unlock();
            }
            // sleeps without the handle's lock (nor the client's) until the deadline: test() and close() get in, a close wakes it
            client.progress(Duration.ofNanos(left));
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("the handle is closed");
        }
    }

    private NaaStatus status() {
        NaaState s = client.state();
        NaaiceException f = client.failure();
        if (s == NaaState.ERROR && f != null && f.reason() != NaaiceException.Reason.NAA_RETURN_CODE) {
            throw f;
        }
        return new NaaStatus(s, s == NaaState.FINISHED || s == NaaState.ERROR, client.lastReturnCode(),
                client.lastReplyImmediate(), client.bytesReceived());
    }

    /** {@code naa_finalize}: disconnects, frees the context and frees the NAA spec item; idempotent. */
    @Override
    public void close() {
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            try {
                client.close();
            } finally {
                spec.release(item, owner);
                settle();
            }
        } finally {
            lock.unlock();
        }
    }

    @Override
    public String toString() {
        return "NaaHandle[function " + functionCode + ", " + item + "]";
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
