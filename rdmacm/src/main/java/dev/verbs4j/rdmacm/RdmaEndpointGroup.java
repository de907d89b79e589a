package dev.verbs4j.rdmacm;

import dev.verbs4j.verbs.Access;
import dev.verbs4j.verbs.Closeables;
import dev.verbs4j.verbs.CompletionChannel;
import dev.verbs4j.verbs.CompletionQueue;
import dev.verbs4j.verbs.Context;
import dev.verbs4j.verbs.MemoryRegion;
import dev.verbs4j.verbs.ProtectionDomain;
import dev.verbs4j.verbs.ReceiveRequests;
import dev.verbs4j.verbs.SharedReceiveQueue;
import dev.verbs4j.verbs.VerbsException;
import dev.verbs4j.verbs.event.CompletionDispatcher;

import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Many {@link RdmaConnection}s on one device that share one protection domain and one completion
 * queue, and optionally one shared receive queue, served by one {@link CompletionDispatcher}: it
 * watches the group's completion channel, and whenever it is readable one task (on a virtual
 * thread) takes the completions and hands each to the connection whose queue pair it belongs to
 * ({@link GroupDelivery}). No thread waits per connection or per group. Connections of a group, client ends
 * ({@link #connect}) and server ends ({@link #listen}), offer the whole API of a connection
 * (copying and zero-copy messages, one-sided operations, futures, blocking calls) unchanged;
 * buffers {@link #register registered} with the group serve every connection of it.
 *
 * <p>Chosen per group: the completion queue's depth, the {@link ConnectionOptions} of its
 * connections, and whether they share a receive queue ({@link #open(InetAddress, int,
 * ConnectionOptions, int)}). Each connection needs {@code 2 × sendDepth + receiveDepth + 2}
 * completion queue entries (its message ring, its buffer operations, and the flow control's
 * reserved slots); a connection beyond what the queue holds is refused (an {@link
 * IllegalStateException} for {@link #connect}, a rejection naming the reason for a server), so
 * the queue never overruns.
 *
 * <p><b>Receive queues.</b> Without a shared receive queue each connection keeps a receive
 * queue of its own with {@code receiveDepth + 1} registered receive slots: memory grows with the
 * connections. With one ({@code sharedReceiveDepth > 0}), the group posts {@code
 * sharedReceiveDepth} slots of {@code maxMessageSize} bytes, registered once, to one shared
 * receive queue that every connection's queue pair takes its messages from; a connection holds
 * no receive memory of its own, so the memory for receiving is fixed however many connections
 * the group has. Posted receives ({@link ConnectionOptions#postedReceives()}) need a receive
 * queue per connection and are refused for such a group, when it is opened.
 *
 * <p><b>Flow control with a shared receive queue.</b> The per-connection credits of {@link
 * RdmaConnection} stay as they are: a peer may have at most {@code receiveDepth} messages (and
 * one credit update) that this side's application has not taken, so one slow reader holds at
 * most {@code receiveDepth + 1} of the shared slots. A message keeps its shared slot until the
 * application takes it (it is copied out then, as from a connection's own ring); the slot then
 * goes back to the shared queue at once, and the credit to the peer as before. What a credit no
 * longer promises is that a slot waits for that very connection: the shared queue may hold
 * fewer slots than the connections' {@code receiveDepth + 1} together (that is what it saves).
 * When it runs dry, the device answers the next sender with receiver-not-ready; the group's
 * connections retry that without limit ({@code rnr_retry_count} 7), each retry after the
 * receiver's RNR timer ({@link ConnectionOptions#minRnrTimer()}), so the message waits in the
 * sender's queue pair until a reader frees a slot. <em>What the sender sees when the receivers
 * are slow:</em> its sends stay in flight longer; once its {@code sendDepth} send slots are all in
 * flight, {@code send} blocks (and times out with "no send slot free"), {@code trySend} returns
 * false, and send futures wait (beyond {@code sendDepth} waiting ones they are refused at once).
 * Nothing is dropped: the queue pair is reliable-connected, so a message that met
 * receiver-not-ready is sent again, and the messages behind it on the same connection wait
 * behind it; every message arrives once and in the order sent, per connection. The cost is that
 * slow readers on some connections can delay senders on all connections of the group (they share
 * the slots); size the queue for what the readers leave untaken ({@code connections ×
 * (receiveDepth + 1)} slots never run dry). {@link #sharedReceivesLowWater()} tells how close
 * it came. The queue's limit event ({@code IBV_EVENT_SRQ_LIMIT_REACHED}) is not used: a slot goes
 * back to the queue as soon as its message is taken, so a slot missing from a low queue always
 * holds a message no reader has taken yet, and there is no free slot that the event could have
 * it post.
 *
 * <p><b>Queue pair numbers.</b> The dispatcher hands a completion to the connection whose queue
 * pair number it carries; closing a connection retires its queue pair there (destroyed, and the
 * queue drained of its completions, whose shared slots go back to the queue, before the group can
 * create another queue pair), so no completion ever reaches a connection it does not belong to.
 *
 * <p>Ownership: the group owns its protection domain, completion channel, completion queue,
 * shared receive queue and its registered slots, and its connections: {@link #close()} closes
 * the connections first (parents close children), then the shared receive queue, then the
 * completion queue and the domain (which deregisters the group's buffers). A connection closed
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
    private final CompletionDispatcher<RdmaConnection> dispatcher;
    private final int perConnection;
    /** The shared receive queue and its slots, or null. */
    private final SharedReceiveQueue srq;
    private final MemoryRegion sharedSlots;
    private final ReceiveRequests sharedRequests;
    /** Guards posting to the shared receive queue and its closed flag. */
    private final ReentrantLock srqLock = new ReentrantLock();
    private boolean srqClosed;
    private final AtomicInteger sharedPosted = new AtomicInteger();
    private final AtomicInteger sharedLowWater = new AtomicInteger(Integer.MAX_VALUE);
    /** Guards the members and the closed flag; never held while calling into a connection. */
    private final ReentrantLock lock = new ReentrantLock();
    private final Set<RdmaConnection> members = new LinkedHashSet<>();
    private boolean closed;

    private RdmaEndpointGroup(InetAddress device, Context context, int completionQueueDepth, ConnectionOptions options,
                              int sharedReceiveDepth) {
        this.device = device;
        this.context = context;
        this.options = options;
        this.perConnection = 2 * options.sendDepth() + options.receiveDepth() + 2;
        ProtectionDomain pd = null;
        CompletionChannel channel = null;
        CompletionQueue cq = null;
        SharedReceiveQueue srq = null;
        MemoryRegion slots = null;
        ReceiveRequests requests = null;
        try {
            pd = context.allocateProtectionDomain();
            channel = context.createCompletionChannel();
            cq = context.createCompletionQueue(completionQueueDepth, channel, 0);
            if (sharedReceiveDepth > 0) {
                srq = pd.createSharedReceiveQueue(sharedReceiveDepth, 1);
                slots = pd.allocateRegion((long) options.maxMessageSize() * sharedReceiveDepth, Access.LOCAL_WRITE);
                requests = new ReceiveRequests(1, 1);
            }
            this.dispatcher = new CompletionDispatcher<>(cq, channel, 64, RdmaConnection[]::new,
                    completionQueueDepth / perConnection, new GroupDelivery(this));
        } catch (RuntimeException e) {
            throw Closeables.closeAfter(e, requests, slots, srq, cq, channel, pd);
        }
        this.pd = pd;
        this.channel = channel;
        this.cq = cq;
        this.srq = srq;
        this.sharedSlots = slots;
        this.sharedRequests = requests;
        try {
            for (int i = 0; i < sharedReceiveDepth; i++) {
                repostShared(i);
            }
        } catch (RuntimeException e) {
            closeQueues();
            throw e;
        }
        dispatcher.start();
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
        return open(device, completionQueueDepth, options, 0);
    }

    /**
     * A group as {@link #open(InetAddress, int, ConnectionOptions)} whose connections take their
     * messages from one shared receive queue of {@code sharedReceiveDepth} slots (0: each
     * connection has a receive queue of its own). See the class documentation for the flow
     * control.
     *
     * @param sharedReceiveDepth the slots of the shared receive queue, each of {@code
     *                           maxMessageSize} bytes (registered with the group); at least 2, or 0
     * @throws IllegalArgumentException when the queue cannot hold even one connection, for a
     *                                  negative or too small {@code sharedReceiveDepth}, or for
     *                                  options with posted receives and a shared receive queue
     * @throws RdmaConnectionException  of kind VERBS_ERROR when no RDMA device has that address, or
     *                                  the device has no shared receive queue of that depth
     */
    public static RdmaEndpointGroup open(InetAddress device, int completionQueueDepth, ConnectionOptions options,
                                         int sharedReceiveDepth) throws RdmaConnectionException {
        Objects.requireNonNull(device, "device");
        ConnectionOptions o = options == null ? ConnectionOptions.DEFAULT : options;
        int per = 2 * o.sendDepth() + o.receiveDepth() + 2;
        if (completionQueueDepth < per) {
            throw new IllegalArgumentException("completionQueueDepth " + completionQueueDepth + " cannot hold one connection of "
                    + per + " entries (2 x sendDepth + receiveDepth + 2)");
        }
        if (sharedReceiveDepth < 0 || sharedReceiveDepth == 1) {
            throw new IllegalArgumentException("sharedReceiveDepth must be 0 (no shared receive queue) or at least 2, got "
                    + sharedReceiveDepth);
        }
        if (sharedReceiveDepth > 0 && o.postedReceives()) {
            throw new IllegalArgumentException("posted receives (ConnectionOptions.postedReceives) need a receive queue per"
                    + " connection: the messages of a group with a shared receive queue land in the group's slots");
        }
        Context context;
        try (EventChannel probe = EventChannel.create(); CmId id = probe.createId(PortSpace.TCP)) {
            id.bind(new InetSocketAddress(device, 0));
            context = id.context();
        } catch (VerbsException e) {
            throw RdmaConnectionException.of(e, "open an endpoint group on " + device);
        } catch (IllegalStateException e) {
            throw new RdmaConnectionException("open an endpoint group on " + device + ": no RDMA device has that address ("
                    + e.getMessage() + ")", Failure.verbs(0), null, e);
        }
        try {
            return new RdmaEndpointGroup(device, context, completionQueueDepth, o, sharedReceiveDepth);
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
     * (the server takes only their connection manager events until they are established). A
     * request the group has no room for (its completion queue is full, or it is closed) is
     * rejected with that reason. The server belongs to the caller; the connections it accepted
     * close with the group.
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
        return dispatcher.completionsPolled();
    }

    /** The slots of the shared receive queue, or 0 when each connection has a receive queue of its own. */
    public int sharedReceiveDepth() {
        return srq == null ? 0 : (int) (sharedSlots.segment().byteSize() / options.maxMessageSize());
    }

    /**
     * The fewest slots that were posted in the shared receive queue at any time since the group
     * opened (after a completion was taken from it): 0 means the queue ran dry and senders met
     * receiver-not-ready (back-pressure, see the class documentation); -1 without a shared queue.
     */
    public int sharedReceivesLowWater() {
        if (srq == null) {
            return -1;
        }
        int low = sharedLowWater.get();
        return low == Integer.MAX_VALUE ? sharedReceiveDepth() : low;
    }

    /** The shared receive queue of the group, or null. */
    SharedReceiveQueue sharedReceiveQueue() {
        return srq;
    }

    /** The registered slots of the shared receive queue ({@code maxMessageSize} bytes each), or null. */
    MemoryRegion sharedSlots() {
        return sharedSlots;
    }

    /** Posts shared slot {@code s} to the shared receive queue again (nothing once it is closed). */
    void repostShared(int s) {
        srqLock.lock();
        try {
            if (srqClosed) {
                return;
            }
            int slot = options.maxMessageSize();
            sharedRequests.get(0).wrId(s).sge(sharedSlots, (long) s * slot, slot);
            srq.postReceive(sharedRequests, 1);
            sharedPosted.incrementAndGet();
        } finally {
            srqLock.unlock();
        }
    }

    /** Whether a work request id is of a receive (from the shared queue in a group that has one): no tag of a send. */
    private static boolean isReceive(long wrId) {
        return (wrId & RdmaConnection.SEND_TAGS) == 0;
    }

    /** A completion was polled: one slot fewer in the shared receive queue when it is a receive from there. */
    void sharedReceiveTaken(long wrId) {
        if (srq != null && isReceive(wrId)) {
            int now = sharedPosted.decrementAndGet();
            sharedLowWater.accumulateAndGet(now, Math::min);
        }
    }

    /** The lock held while a queue pair of the group is created and attached (see {@link #queuePairGone}). */
    ReentrantLock queuePairLock() {
        return dispatcher.queuePairLock();
    }

    /**
     * Destroys a connection's queue pair ({@code destroy}) and takes every completion left in the
     * group's queue before any other queue pair of the group can be created: those of the
     * destroyed queue pair are dropped (their shared slots posted again), the others' are handed
     * to them in order. Then the connection has left the group.
     */
    void queuePairGone(int qpNum, RdmaConnection connection, Runnable destroy) {
        try {
            dispatcher.retire(qpNum, connection, destroy);
        } finally {
            lock.lock();
            try {
                members.remove(connection);
            } finally {
                lock.unlock();
            }
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
            dispatcher.register(qpNum, connection);
            members.add(connection);
        } finally {
            lock.unlock();
        }
    }

    /** Posts the shared slots of these receive completions again (they belong to no open connection). */
    void recycle(List<Completion> batch) {
        for (Completion c : batch) {
            recycle(c.wrId());
        }
    }

    /** Posts the shared slot of a receive completion of no open connection again. */
    void recycle(long wrId) {
        if (srq != null && isReceive(wrId)) {
            repostShared((int) (wrId & 0xffff_ffffL));
        }
    }

    /**
     * Closes every connection of the group (as {@link RdmaConnection#close()}: what is outstanding
     * on them fails with CLOSED), then the shared receive queue, the completion queue, its channel
     * and the protection domain (deregistering the group's buffers). Idempotent; never throws.
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
            toClose = new ArrayList<>(members);
        } finally {
            lock.unlock();
        }
        for (RdmaConnection c : toClose) {
            if (c != null) {
                c.close();
            }
        }
        closeQueues();
    }

    /**
     * Closes the dispatcher (a poll in progress ends first), then the shared receive queue, the
     * completion queue, its channel and the domain; failures are logged.
     */
    private void closeQueues() {
        srqLock.lock();
        try {
            srqClosed = true;
        } finally {
            srqLock.unlock();
        }
        Closeables.closeLogged(LOG, dispatcher, srq, sharedSlots, sharedRequests, cq, channel, pd);
    }

    @Override
    public String toString() {
        return "RdmaEndpointGroup on " + device + " (" + connections().size() + " connections)";
    }
}
