package dev.verbs4j.naaice;

import dev.verbs4j.rdmacm.CmEvent;
import dev.verbs4j.rdmacm.CmId;
import dev.verbs4j.rdmacm.EventChannel;
import dev.verbs4j.rdmacm.PortSpace;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The software NAA: listens for NAAICE clients (C or Java) through RDMA CM, answers their memory
 * region setup, runs the {@link Kernel} their function code selects and writes the results back,
 * for any number of RPCs per connection and several connections at once.
 *
 * <p>Threads: one listener thread takes the connection manager events of all connections; each
 * established connection has a worker thread that waits on its own completion channel. Memory: the
 * server owns everything it creates; each connection's regions are allocated (zero-filled,
 * registered) when its request arrives and freed when it disconnects. {@link #close()} stops the
 * listener, disconnects every client and frees everything.
 */
public final class NaaServer implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(NaaServer.class.getName());

    /** Limits and kernels of a server; see {@link NaaServer#builder()}. A mutable builder on the heap. */
    public static final class Builder {
        private InetSocketAddress bind = new InetSocketAddress(NaaClient.DEFAULT_PORT);
        private final Map<Integer, Kernel> kernels = new HashMap<>(ReferenceKernels.all());
        private int maxConnections = 16;
        private int maxRegions = 32;
        private long maxBytes = 1L << 30;
        private int backlog = 10;
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
            if (fn < 1 || fn > 127) {
                throw new IllegalArgumentException("a function code is 1..127, got " + fn);
            }
            kernels.put(fn, kernel);
            return this;
        }

        /** Connections served at once (default 16); more are rejected. */
        public Builder maxConnections(int n) {
            this.maxConnections = n;
            return this;
        }

        /** Regions (parameters + internal) one connection may request (default 32); more → MRSP error 0x03. */
        public Builder maxRegions(int n) {
            if (n < 1 || n > 255) {
                throw new IllegalArgumentException("maxRegions is 1..255, got " + n);
            }
            this.maxRegions = n;
            return this;
        }

        /** Bytes one connection may request in all (default 1 GiB); more → MRSP error 0x01. */
        public Builder maxBytes(long n) {
            this.maxBytes = n;
            return this;
        }

        /** Whether each RPC is logged at INFO with its timings (default: at DEBUG). */
        public Builder logEachRpc(boolean on) {
            this.logEachRpc = on;
            return this;
        }

        /** Starts the server: binds, listens and starts its listener thread. */
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
    private final EventChannel events;
    private final CmId listener;
    private final Thread thread;
    private final Map<CmId, ServerConnection> connections = new ConcurrentHashMap<>();
    private final AtomicLong accepted = new AtomicLong();
    final AtomicLong rpcs = new AtomicLong();
    private volatile boolean stopping;
    private final Object closeLock = new Object();
    private boolean closed;

    private NaaServer(Builder b) {
        this.kernels = Map.copyOf(b.kernels);
        this.maxRegions = b.maxRegions;
        this.maxBytes = b.maxBytes;
        this.logEachRpc = b.logEachRpc;
        this.maxConnections = b.maxConnections;
        this.events = EventChannel.create();
        try {
            this.listener = events.createId(PortSpace.TCP);
            listener.bind(b.bind);
            listener.listen(b.backlog);
        } catch (RuntimeException e) {
            events.close();
            throw e;
        }
        this.thread = new Thread(this::listen, "naaice-server-" + listener.localPort());
        thread.setDaemon(true);
        thread.start();
        LOG.log(System.Logger.Level.INFO, "NAAICE server listening on {0}, kernels {1}", b.bind, kernels.keySet());
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

    /** RPCs served since the start. */
    public long rpcCount() {
        return rpcs.get();
    }

    private void listen() {
        while (!stopping) {
            CmEvent ev;
            try {
                ev = events.getEvent(Duration.ofMillis(200));
            } catch (IllegalStateException e) {
                return; // closed
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "NAAICE server: connection manager event failed", e);
                continue;
            }
            if (ev == null) {
                continue;
            }
            try {
                dispatch(ev);
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "NAAICE server: handling " + ev + " failed", e);
            }
        }
    }

    private void dispatch(CmEvent ev) {
        switch (ev.type()) {
            case CONNECT_REQUEST -> {
                CmId id = ev.id();
                if (stopping || connections.size() >= maxConnections) {
                    LOG.log(System.Logger.Level.INFO, "NAAICE server: rejecting {0}: {1} connections open",
                            id.peerAddress(), connections.size());
                    id.reject("Server overloaded\0".getBytes(StandardCharsets.US_ASCII));
                    id.close();
                    return;
                }
                ServerConnection c;
                try {
                    c = new ServerConnection(this, id, accepted.incrementAndGet());
                } catch (RuntimeException e) {
                    LOG.log(System.Logger.Level.WARNING, "NAAICE server: cannot accept " + id.peerAddress(), e);
                    try {
                        id.reject(new byte[0]);
                    } finally {
                        id.close();
                    }
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

    void removed(ServerConnection c) {
        connections.remove(c.id(), c);
    }

    /**
     * Stops listening, disconnects every client, waits for the workers and frees everything;
     * idempotent, and concurrent calls return once it is done. The event channel (and with it every
     * connection's id) is closed only after the listener thread and every worker have exited: a
     * worker still finishing an RPC is waited for (its connection is disconnected, so it stops at
     * once after), never freed under it.
     */
    @Override
    public void close() {
        synchronized (closeLock) {
            if (closed) {
                return;
            }
            stopping = true;
            boolean interrupted = false;
            if (thread != Thread.currentThread()) {
                // the listener ends within one event wait (200 ms) and the event it is handling
                while (thread.isAlive()) {
                    try {
                        thread.join();
                    } catch (InterruptedException e) {
                        interrupted = true;
                    }
                }
            }
            // no connection is added from now on: the listener is gone
            List<ServerConnection> live = new ArrayList<>(connections.values());
            for (ServerConnection c : live) {
                c.shutdown("server closing");
            }
            for (ServerConnection c : live) {
                c.join();
            }
            events.close();
            closed = true;
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        LOG.log(System.Logger.Level.INFO, "NAAICE server stopped after {0} connections, {1} RPCs", accepted.get(), rpcs.get());
    }
}
