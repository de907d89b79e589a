package dev.verbs4j.naaice;

import dev.verbs4j.rdmacm.CmEvent;
import dev.verbs4j.rdmacm.CmId;
import dev.verbs4j.rdmacm.EventChannel;
import dev.verbs4j.rdmacm.PortSpace;
import dev.verbs4j.verbs.Closeables;
import dev.verbs4j.verbs.event.Readiness;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The software NAA: listens for NAAICE clients (C or Java) through RDMA CM, answers their memory
 * region setup, runs the {@link Kernel} their function code selects and writes the results back,
 * for any number of RPCs per connection and many connections at once.
 *
 * <p>Threads: no thread waits for the connection manager events of all connections: once the
 * event channel is readable, a virtual thread of the readiness poller of verbs takes them in order
 * (the listener), then watches the channel again; {@link #close()} cancels the watch, or waits
 * for the listener that runs. The connections' queue pairs share a few completion queues (one
 * per few hundred connections on a device), each with one virtual thread that sleeps on its
 * completion channel, hands each completion to its connection and serves it right there (region
 * setup, RPCs, writes back); before a kernel runs it hands the polling on to a new virtual
 * thread, so a long kernel holds up no other connection. No thread waits per connection, and a
 * waiting virtual thread holds no OS thread, so the server's OS threads do not grow with its
 * connections: they are the JVM's virtual-thread carriers and the one readiness poller thread of
 * verbs. A kernel that computes for long occupies a carrier meanwhile.
 *
 * <p>Limits: connections at once ({@link Builder#maxConnections}; beyond, the request is rejected
 * with the reason in the private data, which the client reports), regions and bytes per
 * connection and in total over all connections ({@link Builder#maxRegions}, {@link
 * Builder#maxBytes}, {@link Builder#maxTotalRegions}, {@link Builder#maxTotalBytes}; beyond, the
 * region setup is answered with the MRSP error the client reports: too many regions, not enough
 * memory). The defaults serve 1,024 connections.
 *
 * <p>Memory: the server owns everything it creates; each connection's regions are allocated
 * (zero-filled, registered) when its request arrives and freed when it disconnects. {@link
 * #close()} stops the listener, disconnects every client and frees everything.
 */
public final class NaaServer implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(NaaServer.class.getName());
    /** Rejection private data: the CM carries at most 148 bytes in a REJ. */
    private static final int MAX_REASON = 140;

    /** Limits and kernels of a server; see {@link NaaServer#builder()}. A mutable builder on the heap. */
    public static final class Builder {
        private InetSocketAddress bind = new InetSocketAddress(NaaClient.DEFAULT_PORT);
        private final Map<Integer, Kernel> kernels = new HashMap<>(ReferenceKernels.all());
        private int maxConnections = 1024;
        private int maxRegions = 32;
        private long maxBytes = 1L << 30;
        private long maxTotalRegions = 1L << 16;
        private long maxTotalBytes = 4L << 30;
        private int backlog = 1024;
        private boolean logEachRpc;

        private Builder() {
        }

        /** The address to listen on (default: every address, port {@value NaaClient#DEFAULT_PORT}). */
        public Builder bind(InetSocketAddress address) {
            this.bind = address;
            return this;
        }

        /** Adds (or replaces) the kernel of function code {@code fn} (1..127); the reference kernels 1..3 are built in. */
        public Builder kernel(int fn, Kernel kernel) {
            Immediate.checkFunctionCode(fn);
            kernels.put(fn, kernel);
            return this;
        }

        /** Connections served at once (default 1024); more are rejected with the reason in the private data. */
        public Builder maxConnections(int n) {
            Bounds.atLeast("maxConnections", n, 1);
            this.maxConnections = n;
            return this;
        }

        /** Regions (parameters + internal) one connection may request (default 32); more → MRSP error 0x03. */
        public Builder maxRegions(int n) {
            Bounds.inRange("maxRegions", n, 1, 255);
            this.maxRegions = n;
            return this;
        }

        /** Bytes one connection may request in all (default 1 GiB); more → MRSP error 0x01. */
        public Builder maxBytes(long n) {
            Bounds.atLeast("maxBytes", n, 0);
            this.maxBytes = n;
            return this;
        }

        /** Regions of all connections together (default 65536); a setup beyond → MRSP error 0x03. */
        public Builder maxTotalRegions(long n) {
            Bounds.atLeast("maxTotalRegions", n, 1);
            this.maxTotalRegions = n;
            return this;
        }

        /** Bytes of all connections' regions together (default 4 GiB); a setup beyond → MRSP error 0x01. */
        public Builder maxTotalBytes(long n) {
            Bounds.atLeast("maxTotalBytes", n, 0);
            this.maxTotalBytes = n;
            return this;
        }

        /** Connection requests the connection manager queues before the listener takes them (default 1024, the kernel's cap). */
        public Builder backlog(int n) {
            Bounds.atLeast("backlog", n, 1);
            this.backlog = n;
            return this;
        }

        /** Whether each RPC is logged at INFO with its timings (default: at DEBUG). */
        public Builder logEachRpc(boolean on) {
            this.logEachRpc = on;
            return this;
        }

        /** Starts the server: binds, listens and watches for connection requests. */
        public NaaServer start() {
            return new NaaServer(this);
        }
    }

    /** A builder with the defaults. */
    public static Builder builder() {
        return new Builder();
    }

    final Map<Integer, Kernel> kernels;
    final int maxRegions;
    final long maxBytes;
    final boolean logEachRpc;
    private final int maxConnections;
    private final long maxTotalRegions;
    private final long maxTotalBytes;
    private final EventChannel events;
    private final CmId listener;
    /** Guards {@link #watch} and {@link #listenerThread}. */
    private final ReentrantLock listenLock = new ReentrantLock();
    /** Signalled when the listener stops ({@link #watch} becomes null). */
    private final Condition listenerStopped = listenLock.newCondition();
    /** The pending watch on the event channel, or the one whose listener runs; null once stopped. */
    private Readiness.Watch watch;
    /** The thread that takes the events now, or null. */
    private Thread listenerThread;
    private final Map<CmId, ServerConnection> connections = new ConcurrentHashMap<>();
    /** The completion queues the connections share. */
    final SharedCompletions completions;
    private final AtomicLong accepted = new AtomicLong();
    private final AtomicLong rejected = new AtomicLong();
    final AtomicLong rpcs = new AtomicLong();
    /** Regions and bytes the connections hold; guarded by {@link #budgetLock}. */
    private long totalRegions;
    private long totalBytes;
    private final ReentrantLock budgetLock = new ReentrantLock();
    private volatile boolean stopping;
    private final ReentrantLock closeLock = new ReentrantLock();
    private boolean closed;

    private NaaServer(Builder b) {
        this.kernels = Map.copyOf(b.kernels);
        this.maxRegions = b.maxRegions;
        this.maxBytes = b.maxBytes;
        this.logEachRpc = b.logEachRpc;
        this.maxConnections = b.maxConnections;
        this.maxTotalRegions = b.maxTotalRegions;
        this.maxTotalBytes = b.maxTotalBytes;
        this.completions = new SharedCompletions(b.maxRegions + ServerConnection.ENTRIES_BEYOND_REGIONS);
        this.events = EventChannel.create();
        try {
            this.listener = events.createId(PortSpace.TCP);
            listener.bind(b.bind);
            listener.listen(b.backlog);
        } catch (RuntimeException e) {
            events.close();
            throw e;
        }
        listenLock.lock();
        try {
            watch = Readiness.whenReadable(new int[]{events.fd()}, this::listen);
        } catch (RuntimeException e) {
            throw Closeables.closeAfter(e, events);
        } finally {
            listenLock.unlock();
        }
        LOG.log(System.Logger.Level.INFO, "NAAICE server listening on {0}, kernels {1}, at most {2} connections",
                b.bind, kernels.keySet(), maxConnections);
    }

    /** The port the server listens on. */
    public int port() {
        return listener.localPort();
    }

    /** Connections currently open. */
    public int connectionCount() {
        return connections.size();
    }

    /** Connections accepted since the start. */
    public long acceptedCount() {
        return accepted.get();
    }

    /** Connection requests rejected since the start (over the connection limit, or their resources could not be made). */
    public long rejectedCount() {
        return rejected.get();
    }

    /** The completion queues the connections share so far (each serves a few hundred connections). */
    public int completionQueueCount() {
        return completions.queueCount();
    }

    /** RPCs served since the start. */
    public long rpcCount() {
        return rpcs.get();
    }

    /** Bytes the open connections' regions hold (what their region setups asked for). */
    public long bytesInUse() {
        budgetLock.lock();
        try {
            return totalBytes;
        } finally {
            budgetLock.unlock();
        }
    }

    /**
     * Takes {@code regions} regions and {@code bytes} bytes of the server's totals for a
     * connection's region setup; null when they fit (and are now taken), else why not and the MRSP
     * error code to answer with.
     */
    Refusal reserve(int regions, long bytes) {
        budgetLock.lock();
        try {
            if (totalRegions + regions > maxTotalRegions) {
                return new Refusal(Mrsp.TOO_MANY_REGIONS, regions + " regions requested, the server holds " + totalRegions
                        + " of at most " + maxTotalRegions + " in all");
            }
            if (totalBytes + bytes > maxTotalBytes) {
                return new Refusal(Mrsp.NOT_ENOUGH_MEMORY, bytes + " bytes requested, the server holds " + totalBytes
                        + " of at most " + maxTotalBytes + " in all");
            }
            totalRegions += regions;
            totalBytes += bytes;
            return null;
        } finally {
            budgetLock.unlock();
        }
    }

    /** Gives back what {@link #reserve} took. */
    void release(int regions, long bytes) {
        budgetLock.lock();
        try {
            totalRegions -= regions;
            totalBytes -= bytes;
        } finally {
            budgetLock.unlock();
        }
    }

    /** Why a region setup is refused: the MRSP error code and a message for the log. */
    record Refusal(int code, String why) {
    }

    /**
     * The listener, once the event channel is readable: takes the pending events in order, then
     * watches the channel again (unless the server is stopping).
     */
    private void listen() {
        listenLock.lock();
        try {
            listenerThread = Thread.currentThread();
        } finally {
            listenLock.unlock();
        }
        try {
            while (!stopping) {
                CmEvent ev;
                try {
                    ev = events.tryGetEvent();
                } catch (RuntimeException e) {
                    LOG.log(System.Logger.Level.WARNING, "NAAICE server: connection manager event failed", e);
                    break;
                }
                if (ev == null) {
                    break;
                }
                try {
                    dispatch(ev);
                } catch (RuntimeException e) {
                    LOG.log(System.Logger.Level.WARNING, "NAAICE server: handling " + ev + " failed", e);
                }
            }
        } finally {
            listenLock.lock();
            try {
                listenerThread = null;
                watch = null;
                if (!stopping) {
                    try {
                        watch = Readiness.whenReadable(new int[]{events.fd()}, this::listen);
                    } catch (RuntimeException e) {
                        LOG.log(System.Logger.Level.ERROR, "NAAICE server: cannot watch for connection manager events any more", e);
                    }
                }
                if (watch == null) {
                    listenerStopped.signalAll();
                }
            } finally {
                listenLock.unlock();
            }
        }
    }

    /** Stops the listener: cancels its watch, or waits until the one that runs has returned (unless it is the caller). */
    private void stopListening() {
        listenLock.lock();
        try {
            if (watch != null && watch.cancel()) {
                watch = null;
            }
            while (watch != null && listenerThread != Thread.currentThread()) {
                listenerStopped.awaitUninterruptibly();
            }
        } finally {
            listenLock.unlock();
        }
    }

    private void dispatch(CmEvent ev) {
        switch (ev.type()) {
            case CONNECT_REQUEST -> {
                CmId id = ev.id();
                if (stopping) {
                    reject(id, "Server closing");
                    return;
                }
                if (connections.size() >= maxConnections) {
                    reject(id, "Server overloaded: " + connections.size() + " connections open, at most " + maxConnections);
                    return;
                }
                ServerConnection c;
                try {
                    c = new ServerConnection(this, id, accepted.incrementAndGet());
                } catch (RuntimeException e) {
                    LOG.log(System.Logger.Level.WARNING, "NAAICE server: cannot accept " + id.peerAddress(), e);
                    reject(id, "Server cannot create the connection: " + e.getMessage());
                    return;
                }
                connections.put(id, c);
                c.accept();
            }
            case ESTABLISHED -> {
                ServerConnection c = connections.get(ev.id());
                if (c != null) {
                    c.established();
                }
            }
            case DISCONNECTED, CONNECT_ERROR, UNREACHABLE, REJECTED, DEVICE_REMOVAL -> {
                ServerConnection c = connections.get(ev.id());
                if (c != null) {
                    c.peerGone(ev);
                }
            }
            default -> {
            }
        }
    }

    /** Rejects a connection request with {@code reason} (NUL-terminated, as the C NAA's) and frees its id. */
    private void reject(CmId id, String reason) {
        rejected.incrementAndGet();
        LOG.log(System.Logger.Level.INFO, "NAAICE server: rejecting {0}: {1}", id.peerAddress(), reason);
        byte[] text = reason.getBytes(StandardCharsets.US_ASCII);
        byte[] data = Arrays.copyOf(text, Math.min(text.length, MAX_REASON - 1) + 1);
        data[data.length - 1] = 0;
        try {
            id.reject(data);
        } finally {
            id.close();
        }
    }

    void removed(ServerConnection c) {
        connections.remove(c.id(), c);
    }

    /**
     * Stops listening, disconnects every client, waits for the connections' threads and frees
     * everything; idempotent, and concurrent calls return once it is done. The event channel (and
     * with it every connection's id) is closed only after the listener and every connection's
     * thread have exited: one still finishing an RPC is waited for (its connection is
     * disconnected, so it stops at once after), never freed under it.
     */
    @Override
    public void close() {
        closeLock.lock();
        try {
            if (closed) {
                return;
            }
            stopping = true;
            // the listener ends after the event it is handling
            stopListening();
            // no connection is added from now on: the listener is gone
            List<ServerConnection> live = new ArrayList<>(connections.values());
            for (ServerConnection c : live) {
                c.shutdown("server closing");
            }
            for (ServerConnection c : live) {
                c.join();
            }
            completions.close();
            events.close();
            closed = true;
        } finally {
            closeLock.unlock();
        }
        LOG.log(System.Logger.Level.INFO, "NAAICE server stopped after {0} connections, {1} RPCs", accepted.get(), rpcs.get());
    }
}
