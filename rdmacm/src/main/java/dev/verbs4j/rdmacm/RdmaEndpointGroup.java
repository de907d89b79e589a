package dev.verbs4j.rdmacm;

import dev.verbs4j.verbs.CompletionChannel;
import dev.verbs4j.verbs.CompletionQueue;
import dev.verbs4j.verbs.Context;
import dev.verbs4j.verbs.ProtectionDomain;
import dev.verbs4j.verbs.VerbsException;
import dev.verbs4j.verbs.WorkCompletions;
import dev.verbs4j.verbs.internal.ReadinessPoller;

import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Many {@link RdmaConnection}s on one device that share one protection domain and one completion
 * queue, served by one poller: the library's readiness poller watches the group's completion
 * channel, and whenever it is readable one task (on a virtual thread) takes the completions and
 * hands each to the connection whose queue pair it belongs to. No thread waits per connection or
 * per group. Connections of a group, client ends ({@link #connect}) and server ends ({@link
 * #listen}),
 * offer the whole API of a connection (copying and zero-copy messages, one-sided operations,
 * futures, blocking calls) unchanged; buffers {@link #register registered} with the group serve
 * every connection of it.
 *
 * <p>Chosen per group: the completion queue's depth and the {@link ConnectionOptions} of its
 * connections. Each connection needs {@code 2 × sendDepth + receiveDepth + 2} completion queue
 * entries (its message ring, its buffer operations, and the flow control's reserved slots); a
 * connection beyond what the queue holds is refused (an {@link IllegalStateException} for {@link
 * #connect}, a rejection naming the reason for a server), so the queue never overruns.
 *
 * <p>Each connection keeps a receive queue of its own: its flow control grants the peer one
 * credit per receive posted for it, which a shared receive queue could not promise.
 *
 * <p>Ownership: the group owns its protection domain, completion channel and completion queue,
 * and its connections: {@link #close()} closes the connections first (parents close children),
 * then the queues and the domain (which deregisters the group's buffers). A connection closed
 * on its own leaves the group. The device context belongs to librdmacm.
 */
public final class RdmaEndpointGroup implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(RdmaEndpointGroup.class.getName());

    private final Context context;
    private final InetAddress device;
    private final ConnectionOptions options;
    private final ProtectionDomain pd;
    private final CompletionChannel channel;
    private final CompletionQueue cq;
    private final WorkCompletions completions;
    private final int perConnection;
    /** Guards the members and the closed flag; never held while calling into a connection. */
    private final ReentrantLock lock = new ReentrantLock();
    private final Map<Integer, RdmaConnection> byQueuePair = new HashMap<>();
    private final Set<RdmaConnection> members = new LinkedHashSet<>();
    /** Held while the completion queue is polled and its completions handed out, and by close before it frees the queue. */
    private final ReentrantLock pollLock = new ReentrantLock();
    private ReadinessPoller.Watch watch;
    private boolean closed;
    private long dispatched;

    private RdmaEndpointGroup(InetAddress device, Context context, int completionQueueDepth, ConnectionOptions options) {
        this.device = device;
        this.context = context;
        this.options = options;
        this.perConnection = 2 * options.sendDepth() + options.receiveDepth() + 2;
        ProtectionDomain pd = null;
        CompletionChannel channel = null;
        CompletionQueue cq = null;
        try {
            pd = context.allocateProtectionDomain();
            channel = context.createCompletionChannel();
            cq = context.createCompletionQueue(completionQueueDepth, channel, 0);
            this.completions = new WorkCompletions(64);
        } catch (RuntimeException e) {
            RdmaConnection.closeQuietly(cq);
            RdmaConnection.closeQuietly(channel);
            RdmaConnection.closeQuietly(pd);
            throw e;
        }
        this.pd = pd;
        this.channel = channel;
        this.cq = cq;
        lock.lock();
        try {
            cq.requestNotify(false);
            arm();
        } finally {
            lock.unlock();
        }
    }

    /**
     * A group on the RDMA device of the local address {@code device} (an address of an RDMA
     * device's network interface; the group's connections connect from it, and servers accepting
     * into the group listen on it).
     *
     * @param completionQueueDepth the entries of the shared completion queue; it bounds how many
     *                             connections the group holds (see the class documentation)
     * @param options              the options of every connection of the group; null for the default
     * @throws IllegalArgumentException when the queue cannot hold even one connection
     * @throws RdmaConnectionException  of kind VERBS_ERROR when no RDMA device has that address
     */
    public static RdmaEndpointGroup open(InetAddress device, int completionQueueDepth, ConnectionOptions options)
            throws RdmaConnectionException {
        Objects.requireNonNull(device, "device");
        ConnectionOptions o = options == null ? ConnectionOptions.DEFAULT : options;
        int per = 2 * o.sendDepth() + o.receiveDepth() + 2;
        if (completionQueueDepth < per) {
            throw new IllegalArgumentException("completionQueueDepth " + completionQueueDepth + " cannot hold one connection of "
                    + per + " entries (2 x sendDepth + receiveDepth + 2)");
        }
        Context context;
        try (EventChannel probe = EventChannel.create(); CmId id = probe.createId(PortSpace.TCP)) {
            id.bind(new InetSocketAddress(device, 0));
            context = id.context();
        } catch (VerbsException e) {
            throw RdmaConnectionException.of(e, "open an endpoint group on " + device);
        } catch (IllegalStateException e) {
            throw new RdmaConnectionException("open an endpoint group on " + device + ": no RDMA device has that address ("
                    + e.getMessage() + ")", RdmaConnectionException.Kind.VERBS_ERROR, null, 0, null, 0, null, e);
        }
        try {
            return new RdmaEndpointGroup(device, context, completionQueueDepth, o);
        } catch (VerbsException e) {
            throw RdmaConnectionException.of(e, "open an endpoint group on " + device);
        }
    }

    /**
     * Connects a new connection of this group to {@code remote}, from the group's address; as
     * {@link RdmaConnection#connect(InetSocketAddress, InetSocketAddress, ConnectionOptions, Duration)}
     * with the group's options.
     *
     * @throws IllegalStateException when the group is closed or its completion queue is full
     */
    public RdmaConnection connect(InetSocketAddress remote, Duration timeout) throws RdmaConnectionException {
        return RdmaConnection.connect(remote, new InetSocketAddress(device, 0), options, timeout, this);
    }

    /**
     * A server listening on {@code local} whose accepted connections join this group: they use
     * its protection domain, completion queue and poller, and its options; otherwise as {@link
     * RdmaServer#bind(InetSocketAddress, ConnectionOptions, int, Duration, RdmaServer.RequestHandler)}
     * (the server's dispatcher thread takes connection requests only). A request the group has no
     * room for (its completion queue is full, or it is closed) is rejected with that reason.
     * The server belongs to the caller; the connections it accepted close with the group.
     */
    public RdmaServer listen(InetSocketAddress local, int backlog, Duration connectTimeout,
                             RdmaServer.RequestHandler handler) throws RdmaConnectionException {
        checkOpen("listen");
        return RdmaServer.bindInGroup(local, this, backlog, connectTimeout, handler);
    }

    /**
     * Registers {@code segment} (of an {@link dev.verbs4j.verbs.RdmaArena} or the global arena) in
     * the group's protection domain, for every connection of the group; as {@link
     * RdmaConnection#register(MemorySegment)}. Closing the group deregisters it.
     */
    public RegisteredBuffer register(MemorySegment segment) {
        Objects.requireNonNull(segment, "segment");
        checkOpen("register");
        return RegisteredBuffer.register(pd, segment, RdmaConnection.BUFFER_ACCESS);
    }

    /** The connections of the group now open. */
    public List<RdmaConnection> connections() {
        lock.lock();
        try {
            return List.copyOf(members);
        } finally {
            lock.unlock();
        }
    }

    /** How many connections the completion queue holds at most. */
    public int capacity() {
        return cq.capacity() / perConnection;
    }

    /** The options of the group's connections. */
    public ConnectionOptions options() {
        return options;
    }

    /** The local address the group's connections use. */
    public InetAddress device() {
        return device;
    }

    /** How many work completions the group's poller has handed to its connections (for tests and monitoring). */
    public long completionsDispatched() {
        pollLock.lock();
        try {
            return dispatched;
        } finally {
            pollLock.unlock();
        }
    }

    ProtectionDomain protectionDomain() {
        return pd;
    }

    CompletionQueue completionQueue() {
        return cq;
    }

    Context context() {
        return context;
    }

    private void checkOpen(String what) {
        lock.lock();
        try {
            if (closed) {
                throw new IllegalStateException(what + ": the endpoint group is closed");
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * A connection's queue pair joined the group: its completions go to it from now on.
     *
     * @throws IllegalStateException when the group is closed or its completion queue is full
     */
    void attach(int qpNum, RdmaConnection connection) {
        lock.lock();
        try {
            if (closed) {
                throw new IllegalStateException("the endpoint group on " + device + " is closed");
            }
            if ((members.size() + 1) * perConnection > cq.capacity()) {
                throw new IllegalStateException("the endpoint group on " + device + " is full: " + members.size()
                        + " connections of " + perConnection + " completion queue entries each, queue of " + cq.capacity());
            }
            byQueuePair.put(qpNum, connection);
            members.add(connection);
        } finally {
            lock.unlock();
        }
    }

    /** A connection left the group (after its queue pair was destroyed). */
    void detach(int qpNum, RdmaConnection connection) {
        lock.lock();
        try {
            byQueuePair.remove(qpNum, connection);
            members.remove(connection);
        } finally {
            lock.unlock();
        }
    }

    /** Arms the queue and has the poller watch the channel (under {@link #lock}). */
    private void arm() {
        if (!closed) {
            watch = ReadinessPoller.whenReadable(new int[]{channel.fd()}, this::onReadable);
        }
    }

    /** The channel is readable: takes the completions, hands them out, arms again. */
    private void onReadable() {
        pollLock.lock();
        try {
            lock.lock();
            try {
                watch = null;
                if (closed) {
                    return;
                }
            } finally {
                lock.unlock();
            }
            while (channel.tryGetEvent() != null) {
                // acknowledged in batches by the queue
            }
            while (true) {
                dispatchAll();
                cq.requestNotify(false);
                // a completion that came between the last poll and the arming raised no event
                if (!dispatchAll()) {
                    break;
                }
            }
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "endpoint group on " + device + ": polling failed", e);
        } finally {
            pollLock.unlock();
        }
        lock.lock();
        try {
            arm();
        } finally {
            lock.unlock();
        }
    }

    /** Polls the queue empty, handing each connection its completions; whether there were any. */
    private boolean dispatchAll() {
        boolean any = false;
        int got;
        while ((got = cq.poll(completions)) > 0) {
            any = true;
            Map<Integer, List<Completion>> byQp = new HashMap<>();
            for (int i = 0; i < got; i++) {
                Completion c = Completion.of(completions.get(i));
                byQp.computeIfAbsent(c.qpNum(), k -> new ArrayList<>()).add(c);
            }
            dispatched += got;
            for (Map.Entry<Integer, List<Completion>> e : byQp.entrySet()) {
                RdmaConnection target;
                lock.lock();
                try {
                    target = byQueuePair.get(e.getKey());
                } finally {
                    lock.unlock();
                }
                if (target != null) {
                    target.deliver(e.getValue());
                }
            }
        }
        return any;
    }

    /**
     * Closes every connection of the group (as {@link RdmaConnection#close()}), then the
     * completion queue, its channel and the protection domain (deregistering the group's
     * buffers). Idempotent; never throws.
     */
    @Override
    public void close() {
        List<RdmaConnection> toClose;
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            if (watch != null) {
                watch.cancel();
                watch = null;
            }
            toClose = new ArrayList<>(members);
        } finally {
            lock.unlock();
        }
        for (RdmaConnection c : toClose) {
            if (c != null) {
                c.close();
            }
        }
        pollLock.lock(); // a poll in progress ends before the queue goes
        try {
            RdmaConnection.closeQuietly(cq);
            RdmaConnection.closeQuietly(channel);
            RdmaConnection.closeQuietly(pd);
            completions.close();
        } finally {
            pollLock.unlock();
        }
    }

    @Override
    public String toString() {
        return "RdmaEndpointGroup on " + device + " (" + connections().size() + " connections)";
    }
}
