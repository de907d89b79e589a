package dev.verbs4j.rdmacm;

import dev.verbs4j.verbs.Access;
import dev.verbs4j.verbs.CompletionChannel;
import dev.verbs4j.verbs.CompletionQueue;
import dev.verbs4j.verbs.Context;
import dev.verbs4j.verbs.MemoryRegion;
import dev.verbs4j.verbs.Opcode;
import dev.verbs4j.verbs.ProtectionDomain;
import dev.verbs4j.verbs.QpType;
import dev.verbs4j.verbs.QueuePair;
import dev.verbs4j.verbs.QueuePairAttributes;
import dev.verbs4j.verbs.QueuePairInit;
import dev.verbs4j.verbs.ReceiveRequests;
import dev.verbs4j.verbs.SendFlags;
import dev.verbs4j.verbs.SendRequest;
import dev.verbs4j.verbs.SendRequests;
import dev.verbs4j.verbs.VerbsException;
import dev.verbs4j.verbs.WcOpcode;
import dev.verbs4j.verbs.WcStatus;
import dev.verbs4j.verbs.WorkCompletion;
import dev.verbs4j.verbs.WorkCompletions;
import dev.verbs4j.verbs.internal.Libc;
import dev.verbs4j.verbs.event.Readiness;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A reliable, message-oriented RDMA connection (an RC queue pair driven by the connection
 * manager): the socket of this library. {@link #connect} opens one to an {@link RdmaServer};
 * the server's {@link RdmaServer#accept} hands out the other end.
 *
 * <p><b>Messages.</b> {@link #send} copies one message (0 to {@link
 * ConnectionOptions#maxMessageSize()} bytes) into a free slot of the connection's registered send
 * ring and posts it; it returns once posted, blocking while all {@link
 * ConnectionOptions#sendDepth()} slots are in flight or while the peer has no receive free for it
 * (see below). {@link #receive} copies the next message out of the registered receive ring and
 * posts that slot again. Message boundaries are kept. {@link #trySend} and {@link #tryReceive}
 * never block; {@link #flush} waits until every posted send has completed.
 *
 * <p><b>Flow control.</b> A sender never gets ahead of its receiver: it posts a message only while
 * it holds a <em>credit</em>, one for each receive the peer has posted for it, so the peer's
 * hardware always finds a receive and never answers receiver-not-ready. Both ends of a connection
 * are this class; the protocol between them:
 * <ul>
 *   <li>Each side posts {@code receiveDepth + 1} receives of {@code maxMessageSize} bytes: {@code
 *       receiveDepth} for messages and one reserved for credit updates.</li>
 *   <li>Every message is a SEND_WITH_IMM. Its 32-bit immediate value carries, in bits 0–15, how
 *       many message receives the sender has posted again since it last said so (credits it
 *       returns), in bits 16–30 how many of the peer's credit updates it has taken since it last
 *       said so, and in bit 31 whether it is a credit update (no payload, never delivered to the
 *       application) rather than a message (of any length, also zero).</li>
 *   <li>A side starts with no credits and one credit-update credit. Once established, each side
 *       sends a credit update returning all {@code receiveDepth} receives: its peer's initial
 *       credits (so each side's {@code receiveDepth} governs what the other may send).</li>
 *   <li>Sending a message uses one credit; each message and credit update carries the credits
 *       and the acknowledgements that have piled up. A receive is posted again before its credit
 *       is counted.</li>
 *   <li>When a side has posted again at least half of its {@code receiveDepth} receives (at least
 *       one) without having returned them, it sends a credit update, provided it holds the
 *       credit-update credit; the update uses it up, and it comes back with the acknowledgement
 *       in the peer's next message or update. A received credit update's receive is posted again
 *       at once. Acknowledgements alone never cause a credit update, so updates cannot
 *       ping-pong.</li>
 *   <li>An RDMA WRITE with immediate ({@link #writeWithImmediate}) consumes a receive too, so it
 *       uses a credit; its immediate value is the application's, so it carries no credits and no
 *       acknowledgement. Instead, a write that uses a credit granted by the peer's last credit
 *       update acknowledges that update implicitly (the update's receive was posted again before
 *       its credits could be used); both sides count the credits granted and used and infer the
 *       same. The receiver tells it apart from a message by its completion's opcode, keeps its
 *       receive until the application takes the immediate, then posts it again and owes it as
 *       any other.</li>
 * </ul>
 * No deadlock: a sender without credits has sent {@code receiveDepth} messages the receiver has
 * not returned. Once the receiver has read them all it owes at least half, and its update credit
 * is free, because the sender's first message after the receiver's previous update carried the
 * acknowledgement (the sender had to send one to use up the credits that update brought). The
 * credit update is sent from whichever call on the connection notices that it is due: the read
 * itself, or any later call that takes completions. The connection manager's receiver-not-ready
 * retries stay unlimited as a backstop; the protocol never relies on them, except in an {@link
 * RdmaEndpointGroup} with a shared receive queue, where a credit no longer reserves a receive for
 * its connection and those retries hold senders back when the shared slots run out (see there).
 *
 * <p><b>Futures.</b> {@link #sendAsync} and {@link #receiveAsync} are the same operations without
 * a waiting thread: they return a {@link CompletableFuture} at once. While futures wait, the
 * connection's descriptors are watched by the library's readiness poller (one epoll thread for the
 * JVM); no thread of any kind is parked per connection. A send future completes once its message
 * is copied and posted within the credit window (as {@link #send} returns), a receive future with
 * the next message (null at end of stream, as {@link #receive(Duration)}). Each kind completes in
 * the order of the calls; mixed with the blocking calls, a blocking send waits behind the queued
 * send futures, and queued receive futures take the messages before a blocking receive.
 * <ul>
 *   <li><em>Back-pressure:</em> up to {@link ConnectionOptions#sendDepth()} messages are in flight
 *       in the send ring and at most {@code sendDepth} more send futures wait (each holding a copy
 *       of its message) for a slot and a credit; at most {@link ConnectionOptions#receiveDepth()}
 *       receive futures wait. Beyond that the call returns a future already failed with an {@link
 *       IllegalStateException} that says so, and queues nothing: wait for an earlier future
 *       first.</li>
 *   <li><em>Failure:</em> futures fail with the {@link RdmaConnectionException} the blocking calls
 *       throw: CLOSED after {@link #close()} (also futures still waiting then),
 *       PEER_DISCONNECTED for a send after the peer disconnected, EVENT or WORK_COMPLETION when
 *       the connection broke.</li>
 *   <li><em>Timeouts:</em> the futures have no timeout of their own; use {@link
 *       CompletableFuture#orTimeout} on the returned future itself. A timeout or a {@link
 *       CompletableFuture#cancel cancel} that comes while the operation still waits takes it back
 *       (a send is then never posted, a receive takes no message); once the message was posted
 *       (or taken), {@code cancel} returns false and the future completes normally. A timeout
 *       or a cancel of a dependent future ({@code thenApply(...)}) does not reach the
 *       operation.</li>
 *   <li><em>Threads:</em> a future completed later is completed on a virtual thread the library
 *       starts, never under the connection's lock and never on a thread of yours that is in a
 *       call; its dependent callbacks (the non-async {@code thenApply}, {@code whenComplete}, ...)
 *       run there, so they may call this connection, blocking calls included. A future that is
 *       already complete when returned runs callbacks on the thread that attaches them, as any
 *       {@link CompletableFuture}.</li>
 * </ul>
 *
 * <p><b>Registered buffers.</b> {@link #register} registers application memory (of an {@link
 * dev.verbs4j.verbs.RdmaArena} or the global arena) once as a {@link RegisteredBuffer}; its {@link
 * RegisteredBuffer#remote()} describes it for the peer ({@link RemoteBuffer#toBytes()}, sent as a
 * message). On such buffers the connection offers one-sided RDMA {@link #write}, {@link
 * #writeWithImmediate} and {@link #read} to and from a peer's {@link RemoteBuffer} (ranges checked
 * against its length before anything is posted), and zero-copy {@link #send(RegisteredBuffer,
 * long, int, Duration) sends}, each blocking or as a future. They share an operation budget of
 * {@link ConnectionOptions#sendDepth()} outstanding (and as many waiting) beside the message ring,
 * so messages and buffer operations do not wait for each other's slots; sends and writes with
 * immediate also need credits. The peer takes writes with immediate with {@link
 * #receiveImmediate}, apart from the message stream. An operation's future completes with its
 * work completion; closing the connection destroys the queue pair first and then fails the
 * outstanding ones (CLOSED), so the device no longer touches their buffers when they fail.
 * Deregistering a buffer (or closing its arena) while an operation on it is outstanding is safe:
 * the device refers to it by key only, so the operation fails with an error completion (which
 * breaks the connection, as any error completion does) and never reaches freed memory.
 *
 * <p><b>Posted receives (zero-copy receiving).</b> A connection opened with {@link
 * ConnectionOptions#withPostedReceives(boolean) postedReceives} receives its messages into
 * buffers the application posts ({@link #postReceive}) instead of its ring: {@link
 * #receiveBuffer} (or {@link #receiveBufferAsync}) returns the buffer, offset and length of the
 * next message, in order, and the buffer is the application's until it posts it again. Each
 * posted buffer is one credit for the peer, returned at once, so the peer sends no more
 * messages than buffers wait; at most {@code receiveDepth + 1} are posted (one serves the peer's
 * credit updates, which land in a posted buffer without writing into it and post it again at
 * once). The copying receive calls are refused on such a connection; the peer is any connection.
 *
 * <p><b>Outcomes.</b> Every blocking call has a timeout and ends with a result or a {@link
 * RdmaConnectionException}: an {@link RdmaTimeoutException} when the time is up (the connection
 * stays usable), {@link Failure.Kind#CLOSED} once {@link #close()} was called
 * (also from another thread, which wakes blocked callers), {@link Failure.Kind#INTERRUPTED} when
 * the waiting thread was interrupted (its interrupt status set again), {@link
 * Failure.Kind#PEER_DISCONNECTED} for a send after the peer disconnected, and
 * {@link Failure.Kind#EVENT} / {@link Failure.Kind#WORK_COMPLETION}
 * when the connection broke (device removal, an error completion). After the peer disconnected,
 * {@link #receive} returns the messages that had arrived, then {@link #END_OF_STREAM}. When the
 * peer disconnects this side disconnects too, so that both see DISCONNECTED promptly.
 *
 * <p><b>Ownership.</b> The connection owns everything it uses: its connection id and event
 * channel, a protection domain, a completion queue with its completion channel, the queue pair,
 * the two registered rings and the work request arrays. {@link #close()} frees them all; the
 * device context belongs to librdmacm and stays open. A connection of an {@link
 * RdmaEndpointGroup} uses the group's protection domain and completion queue instead (its
 * completions reach it through the group's poller) and, in a group with a shared receive queue,
 * receives into the group's slots instead of a ring of its own; it frees the rest on close, and leaves the
 * group; buffers it {@link #register registers} are then the group's, deregistered with the
 * group or when closed.
 *
 * <p><b>Threads.</b> All methods are thread-safe; one thread sending while another receives is
 * the intended use. Blocked callers share the waiting: one of them sleeps on the connection's file
 * descriptors, the others on a condition.
 */
public final class RdmaConnection implements AutoCloseable {

    /** What {@link #receive} returns after the peer disconnected and every message was read. */
    public static final int END_OF_STREAM = -1;
    /** What {@link #tryReceive} returns when no message is there yet. */
    public static final int WOULD_BLOCK = -2;

    private static final System.Logger LOG = System.getLogger(RdmaConnection.class.getName());
    private static final long SEND_TAG = 1L << 40;
    private static final long CONTROL_TAG = 1L << 41;
    private static final long OP_TAG = 1L << 42;
    private static final long POSTED_TAG = 1L << 43;
    /** The tags of work requests that are not receives from the connection's ring or its group's shared queue. */
    static final long SEND_TAGS = SEND_TAG | CONTROL_TAG | OP_TAG | POSTED_TAG;
    /** Access of {@link #register(MemorySegment)}: local write, remote read and write. */
    static final int BUFFER_ACCESS = Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE;
    private static final int CONTROL_SLOTS = CreditWindow.CONTROL_SLOTS;

    private enum State { CONNECTING, OPEN, PEER_CLOSED, FAILED }

    private final ConnectionOptions options;
    private final CmId id;
    private final int slot;
    private final ProtectionDomain pd;
    private final CompletionChannel completionChannel;
    private final CompletionQueue cq;
    private final QueuePair qp;
    private final MemoryRegion sendRing;
    private final MemoryRegion receiveRing;
    private final SendRequests sendRequests = new SendRequests(1, 1);
    private final ReceiveRequests receiveRequests = new ReceiveRequests(1, 1);
    /** The native completion array; null in a group, whose poller takes the completions. */
    private final WorkCompletions completions;
    /** The group whose protection domain and completion queue the connection uses, or null (its own). */
    private final RdmaEndpointGroup group;
    /** Whether the queue pair takes its receives from the group's shared receive queue (the receive ring is the group's slots). */
    private final boolean shared;
    /** Completions the group handed over, not yet taken (guarded by {@link #lock}). */
    private final ArrayDeque<Completion> inbox = new ArrayDeque<>();
    /** The wake-up fd was signalled for a sleeping caller and is still readable (guarded by {@link #lock}). */
    private boolean wakePending;
    private final int wakeFd;

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition progressed = lock.newCondition();
    private final ArrayDeque<Integer> freeSendSlots = new ArrayDeque<>();
    private final ArrayDeque<long[]> arrived = new ArrayDeque<>();
    /** The flow control: credits held and owed (guarded by {@link #lock}). */
    private final CreditWindow window;
    private EventChannel events;
    private int[] fds;
    private State state = State.CONNECTING;
    private RdmaConnectionException failure;
    private CmEventType endEvent;
    private boolean disconnectCalled;
    private boolean closing;
    private boolean released;
    private boolean pollerActive;
    /** A caller sleeps on the connection's fds (Readiness): the others leave the channels and the queue to it. */
    private boolean pollerSleeping;
    private int callers;
    private byte[] peerPrivateData = new byte[0];
    private InetSocketAddress localAddress;
    private InetSocketAddress remoteAddress;
    /** The {@link #sendAsync} futures waiting for a slot and a credit, oldest first (guarded by {@link #lock}). */
    private final ArrayDeque<AsyncOp<Void>> asyncSends = new ArrayDeque<>();
    /** The {@link #receiveAsync} futures waiting for a message, oldest first (guarded by {@link #lock}). */
    private final ArrayDeque<AsyncOp<byte[]>> asyncReceives = new ArrayDeque<>();
    /** Completions of futures decided under the lock, run after it is released (guarded by {@link #lock}). */
    private List<Runnable> deliveries = new ArrayList<>();
    /** The poller's watch on the connection's fds while futures wait and no caller sleeps on them. */
    private Readiness.Watch watch;
    private boolean serving;
    /** Buffer operations not posted yet (no free operation slot, or no credit), oldest first (guarded by {@link #lock}). */
    private final ArrayDeque<AsyncOp<Void>> waitingOps = new ArrayDeque<>();
    /** Buffer operations posted and not completed, by work request id (guarded by {@link #lock}). */
    private final LinkedHashMap<Long, AsyncOp<Void>> outstandingOps = new LinkedHashMap<>();
    private long nextOpId;
    /** The peer's writes with immediate that arrived: {receive slot, immediate, byte length} (guarded by {@link #lock}). */
    private final ArrayDeque<long[]> immediates = new ArrayDeque<>();
    /** The {@link #receiveImmediateAsync} futures waiting, oldest first (guarded by {@link #lock}). */
    private final ArrayDeque<AsyncOp<ImmediateData>> asyncImmediates = new ArrayDeque<>();
    /** Posted receives ({@link #postReceive}): those posted, by id, and those held by an immediate not yet taken (guarded by {@link #lock}). */
    private final java.util.HashMap<Integer, ReceivedBuffer> postedBuffers = new java.util.HashMap<>();
    private final java.util.HashMap<Integer, ReceivedBuffer> heldForImmediates = new java.util.HashMap<>();
    /** Messages that arrived in posted buffers, oldest first (guarded by {@link #lock}). */
    private final ArrayDeque<ReceivedBuffer> arrivedBuffers = new ArrayDeque<>();
    /** The {@link #receiveBufferAsync} futures waiting, oldest first (guarded by {@link #lock}). */
    private final ArrayDeque<AsyncOp<ReceivedBuffer>> asyncBuffers = new ArrayDeque<>();
    private int nextPostedId;
    /** Posted buffers that a message has not used yet. */
    private int postedCount;
    /** With posted receives: whether the ring's one receive (for the peer's first update) is still posted. */
    private boolean ringReservePosted = true;
    /** With posted receives: a peer's update used the reserve, and the next posted buffer replaces it. */
    private boolean reserveMissing;

    /**
     * Creates the resources on {@code id} (bound to a device) and posts every receive. On failure
     * frees what it created and throws; the id stays the caller's.
     */
    RdmaConnection(CmId id, EventChannel events, ConnectionOptions options) {
        this(id, events, options, null);
    }

    /**
     * Creates the resources on {@code id} (bound to a device) and posts every receive; in {@code
     * group} (or null) its queue pair uses the group's protection domain and completion queue.
     * On failure frees what it created and throws; the id stays the caller's.
     */
    RdmaConnection(CmId id, EventChannel events, ConnectionOptions options, RdmaEndpointGroup group) {
        this.options = options;
        this.id = id;
        this.events = events;
        this.group = group;
        this.shared = group != null && group.sharedReceiveQueue() != null;
        this.slot = options.maxMessageSize();
        this.window = new CreditWindow(options.receiveDepth(), options.postedReceives());
        int receives = options.receiveDepth() + CONTROL_SLOTS;
        int sends = options.sendDepth() + CONTROL_SLOTS;
        int ops = options.sendDepth();
        Context context = id.context();
        ProtectionDomain pd = null;
        CompletionChannel channel = null;
        CompletionQueue cq = null;
        MemoryRegion sendRing = null;
        MemoryRegion receiveRing = null;
        int wake = -1;
        WorkCompletions wcs = null;
        ReentrantLock creating = group == null ? null : group.queuePairLock();
        if (creating != null) {
            creating.lock();
        }
        try {
            if (group != null) {
                if (group.context() != context) {
                    throw new IllegalArgumentException("the connection's device " + context.name()
                            + " is not the endpoint group's " + group.context().name());
                }
                pd = group.protectionDomain();
                cq = group.completionQueue();
            } else {
                pd = context.allocateProtectionDomain();
                channel = context.createCompletionChannel();
                cq = context.createCompletionQueue(sends + ops + receives, channel, 0);
            }
            QueuePairInit init = QueuePairInit.of(QpType.RC, cq).maxSendWr(sends + ops).maxRecvWr(receives).maxSendSge(1)
                    .maxRecvSge(1);
            if (shared) {
                init.sharedReceiveQueue(group.sharedReceiveQueue());
            }
            this.qp = id.createQueuePair(pd, init);
            sendRing = pd.allocateRegion((long) slot * options.sendDepth(), Access.LOCAL_WRITE);
            int ringSlots = shared ? 0 : options.postedReceives() ? CONTROL_SLOTS : receives;
            receiveRing = shared ? group.sharedSlots() : pd.allocateRegion((long) slot * ringSlots, Access.LOCAL_WRITE);
            this.sendRing = sendRing;
            this.receiveRing = receiveRing;
            if (group == null) {
                wcs = new WorkCompletions(Math.min(64, sends + receives));
            }
            wake = Libc.eventfd();
            for (int i = 0; i < options.sendDepth(); i++) {
                freeSendSlots.add(i);
            }
            for (int i = 0; i < ringSlots; i++) {
                postReceive(i);
            }
            // the peer's initial credits are owed from the start (CreditWindow), returned by the first update
            if (group != null) {
                group.attach(qp.qpNum(), this);
            }
        } catch (RuntimeException e) {
            if (wake >= 0) {
                Libc.close(wake);
            }
            if (wcs != null) {
                wcs.close();
            }
            sendRequests.close();
            receiveRequests.close();
            QueuePair q = id.queuePair();
            if (group != null && q != null) {
                // as a close: the queue is drained of the queue pair's completions before another is created
                int qpNum = q.qpNum();
                group.queuePairGone(qpNum, this, () -> closeQuietly(q));
            } else {
                closeQuietly(q);
            }
            closeQuietly(sendRing);
            if (!shared) {
                closeQuietly(receiveRing);
            }
            if (group == null) {
                closeQuietly(pd);
                closeQuietly(cq);
                closeQuietly(channel);
            }
            throw e;
        } finally {
            if (creating != null) {
                creating.unlock();
            }
        }
        this.pd = pd;
        this.completionChannel = channel;
        this.cq = cq;
        this.completions = wcs;
        this.wakeFd = wake;
    }

    /**
     * Connects to the {@link RdmaServer} (or any RDMA CM listener) at {@code remote}: resolves
     * the address and the route, creates the connection's resources, connects, and waits for the
     * connection to be established, all within {@code timeout}.
     *
     * @param remote  the server's address (an address of an RDMA device's network interface)
     * @param local   the local address to connect from (port 0: any port), or null to let the
     *                routing table choose
     * @param options sizes and private data; {@link ConnectionOptions#DEFAULT} when null
     * @param timeout the limit for the whole connect
     * @return the established connection; the caller owns it
     * @throws RdmaTimeoutException    when not established within {@code timeout}
     * @throws RdmaConnectionException of kind EVENT for ADDR_ERROR, ROUTE_ERROR, REJECTED (with
     *                                 the rejecter's private data), UNREACHABLE, CONNECT_ERROR,
     *                                 DEVICE_REMOVAL, DISCONNECTED; of kind VERBS_ERROR when a
     *                                 call fails at once
     */
    public static RdmaConnection connect(InetSocketAddress remote, InetSocketAddress local, ConnectionOptions options,
                                         Duration timeout) throws RdmaConnectionException {
        return connect(remote, local, options, timeout, null);
    }

    /** {@link #connect(InetSocketAddress, InetSocketAddress, ConnectionOptions, Duration)} in {@code group} (or null). */
    static RdmaConnection connect(InetSocketAddress remote, InetSocketAddress local, ConnectionOptions options,
                                  Duration timeout, RdmaEndpointGroup group) throws RdmaConnectionException {
        Objects.requireNonNull(remote, "remote");
        ConnectionOptions o = options == null ? ConnectionOptions.DEFAULT : options;
        long deadline = System.nanoTime() + timeout.toNanos();
        String what = "connect to " + remote;
        EventChannel channel;
        try {
            channel = EventChannel.create();
        } catch (VerbsException e) {
            throw RdmaConnectionException.of(e, what);
        }
        RdmaConnection connection = null;
        try {
            CmId id = channel.createId(PortSpace.TCP);
            id.resolveAddress(local, remote, left(deadline, timeout, what, Phase.ADDRESS));
            expect(channel, CmEventType.ADDR_RESOLVED, deadline, timeout, what, Phase.ADDRESS);
            id.resolveRoute(left(deadline, timeout, what, Phase.ROUTE));
            expect(channel, CmEventType.ROUTE_RESOLVED, deadline, timeout, what, Phase.ROUTE);
            left(deadline, timeout, what, Phase.CONNECT);
            connection = new RdmaConnection(id, channel, o, group);
            if (o.ackTimeout() != 0) {
                id.setAckTimeout(o.ackTimeout());
            }
            id.connect(parameters(o.privateData()));
            CmEvent established = expect(channel, CmEventType.ESTABLISHED, deadline, timeout, what, Phase.ESTABLISHED);
            connection.established(established, channel, null);
            return connection;
        } catch (VerbsException e) {
            abandon(connection, channel);
            throw RdmaConnectionException.of(e, what);
        } catch (RdmaConnectionException | RuntimeException | Error e) {
            abandon(connection, channel);
            throw e;
        }
    }

    /** {@link #connect(InetSocketAddress, InetSocketAddress, ConnectionOptions, Duration)} with default options. */
    public static RdmaConnection connect(InetSocketAddress remote, Duration timeout) throws RdmaConnectionException {
        return connect(remote, null, null, timeout);
    }

    private static void abandon(RdmaConnection connection, EventChannel channel) {
        if (connection != null) {
            connection.release();
        }
        closeQuietly(channel);
    }

    static ConnectionParameters parameters(byte[] privateData) {
        return ConnectionParameters.DEFAULT.withRetries(7, 7).withPrivateData(privateData);
    }

    /** The phases of {@link #connect}, named by its timeout messages. */
    enum Phase {
        ADDRESS("address resolution"), ROUTE("route resolution"), CONNECT("connect"),
        ESTABLISHED("established (waiting for the peer's accept)");

        final String text;

        Phase(String text) {
            this.text = text;
        }
    }

    /** The message of a connect that ran out of time in {@code phase}: names the phase, the peer and the limit. */
    static String timedOut(String what, Phase phase, Duration timeout) {
        return what + ": timed out after " + timeout + " in phase " + phase.text;
    }

    private static Duration left(long deadline, Duration timeout, String what, Phase phase) throws RdmaTimeoutException {
        long left = deadline - System.nanoTime();
        if (left < 1_000_000) {
            throw new RdmaTimeoutException(timedOut(what, phase, timeout));
        }
        return Duration.ofNanos(left);
    }

    private static CmEvent expect(EventChannel channel, CmEventType type, long deadline, Duration timeout, String what,
                                  Phase phase) throws RdmaConnectionException {
        while (true) {
            long left = deadline - System.nanoTime();
            CmEvent ev = left <= 0 ? channel.tryGetEvent() : channel.getEvent(Duration.ofNanos(left));
            if (ev == null) {
                throw new RdmaTimeoutException(timedOut(what, phase, timeout) + " (no " + type + " event)");
            }
            if (ev.type() == type) {
                return ev;
            }
            if (ev.type() == CmEventType.ADDR_CHANGE) {
                continue;
            }
            throw RdmaConnectionException.of(ev, what);
        }
    }

    /**
     * Called once the connection is established; {@code channel} is the connection's own event
     * channel, {@code requestData} the private data of the connection request (server side) or null.
     */
    void established(CmEvent event, EventChannel channel, byte[] requestData) {
        lock.lock();
        try {
            this.events = channel;
            this.fds = group == null ? new int[]{completionChannel.fd(), channel.fd(), wakeFd} : new int[]{channel.fd(), wakeFd};
            this.peerPrivateData = requestData != null ? requestData.clone() : event.privateData();
            this.localAddress = id.localAddress();
            this.remoteAddress = id.peerAddress();
            if (state == State.CONNECTING) {
                state = State.OPEN;
            }
            returnCredits();
        } finally {
            lock.unlock();
        }
        try {
            qp.modify(new QueuePairAttributes().minRnrTimer(options.minRnrTimer()));
        } catch (VerbsException e) {
            LOG.log(System.Logger.Level.DEBUG, "keeping the connection manager's RNR timer: {0}", e.getMessage());
        }
    }

    CmId id() {
        return id;
    }

    /** The options the connection was made with. */
    public ConnectionOptions options() {
        return options;
    }

    /** The local address. */
    public InetSocketAddress localAddress() {
        return localAddress;
    }

    /** The peer's address. */
    public InetSocketAddress remoteAddress() {
        return remoteAddress;
    }

    /**
     * The private data the peer sent with its connect (on the server side) or its accept (on the
     * client side), zero-padded by the transport to its fixed size.
     */
    public byte[] peerPrivateData() {
        return peerPrivateData.clone();
    }

    /** Whether the connection can still send: established, not closed, not disconnected, not broken. */
    public boolean isOpen() {
        lock.lock();
        try {
            return !closing && state == State.OPEN;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Sends {@code message} (its whole size, at most {@link ConnectionOptions#maxMessageSize()}),
     * waiting up to {@code timeout} for a free send slot and a credit (a receive the peer has
     * posted). Returns once the message is copied and posted; {@link #flush} waits for its
     * completion.
     *
     * @throws RdmaTimeoutException    when every slot stayed in flight, or the peer's receives
     *                                 stayed full, for {@code timeout}
     * @throws RdmaConnectionException when closed, disconnected or broken
     */
    public void send(MemorySegment message, Duration timeout) throws RdmaConnectionException {
        checkSize(message.byteSize());
        long deadline = deadline(timeout);
        enter();
        try {
            while (true) {
                progress();
                checkSendable("send");
                if (asyncSends.isEmpty() && !freeSendSlots.isEmpty() && window.canSend()) {
                    post(message);
                    return;
                }
                if (!await(deadline)) {
                    throw new RdmaTimeoutException(!window.canSend()
                            ? "send: the peer posted no receive for another message within " + timeout
                            : "send: no send slot free within " + timeout + " (" + options.sendDepth() + " sends in flight)");
                }
            }
        } finally {
            leave();
        }
    }

    /** Sends {@code length} bytes of {@code data} from {@code offset} as one message; see {@link #send(MemorySegment, Duration)}. */
    public void send(byte[] data, int offset, int length, Duration timeout) throws RdmaConnectionException {
        send(MemorySegment.ofArray(data).asSlice(offset, length), timeout);
    }

    /** Sends {@code data} as one message; see {@link #send(MemorySegment, Duration)}. */
    public void send(byte[] data, Duration timeout) throws RdmaConnectionException {
        send(MemorySegment.ofArray(data), timeout);
    }

    /**
     * Sends {@code message} if a send slot and a credit are free, without blocking.
     *
     * @return true when posted, false when every slot is in flight or the peer has no receive
     *         free for it
     * @throws RdmaConnectionException when closed, disconnected or broken
     */
    public boolean trySend(MemorySegment message) throws RdmaConnectionException {
        checkSize(message.byteSize());
        enter();
        try {
            progress();
            checkSendable("trySend");
            if (!asyncSends.isEmpty() || freeSendSlots.isEmpty() || !window.canSend()) {
                return false;
            }
            post(message);
            return true;
        } finally {
            leave();
        }
    }

    /** {@link #trySend(MemorySegment)} for a byte array. */
    public boolean trySend(byte[] data) throws RdmaConnectionException {
        return trySend(MemorySegment.ofArray(data));
    }

    /**
     * Waits up to {@code timeout} until every posted send has completed (the peer has the data).
     *
     * @throws RdmaTimeoutException    when sends are still in flight after {@code timeout}
     * @throws RdmaConnectionException when closed, disconnected or broken before they completed
     */
    public void flush(Duration timeout) throws RdmaConnectionException {
        long deadline = deadline(timeout);
        enter();
        try {
            while (true) {
                progress();
                if (freeSendSlots.size() == options.sendDepth() && asyncSends.isEmpty()) {
                    return;
                }
                checkSendable("flush");
                if (!await(deadline)) {
                    throw new RdmaTimeoutException("flush: " + (options.sendDepth() - freeSendSlots.size())
                            + " sends still in flight after " + timeout);
                }
            }
        } finally {
            leave();
        }
    }

    /**
     * Receives the next message into {@code buffer}, waiting up to {@code timeout}.
     *
     * @return the message's length in bytes, or {@link #END_OF_STREAM} once the peer disconnected
     *         and every earlier message was received
     * @throws IllegalArgumentException when the next message is longer than {@code buffer} (it
     *                                  stays queued)
     * @throws RdmaTimeoutException     when no message arrived within {@code timeout}
     * @throws RdmaConnectionException  when closed or broken
     */
    public int receive(MemorySegment buffer, Duration timeout) throws RdmaConnectionException {
        requirePosted("receive", false);
        long deadline = deadline(timeout);
        enter();
        try {
            while (true) {
                progress();
                int n = take(buffer, "receive");
                if (n != WOULD_BLOCK) {
                    return n;
                }
                if (!await(deadline)) {
                    throw new RdmaTimeoutException("receive: no message within " + timeout);
                }
            }
        } finally {
            leave();
        }
    }

    /** {@link #receive(MemorySegment, Duration)} into {@code length} bytes of {@code buffer} from {@code offset}. */
    public int receive(byte[] buffer, int offset, int length, Duration timeout) throws RdmaConnectionException {
        return receive(MemorySegment.ofArray(buffer).asSlice(offset, length), timeout);
    }

    /**
     * Receives the next message as a new array, waiting up to {@code timeout}; null at end of
     * stream. Otherwise as {@link #receive(MemorySegment, Duration)}.
     */
    public byte[] receive(Duration timeout) throws RdmaConnectionException {
        requirePosted("receive", false);
        long deadline = deadline(timeout);
        enter();
        try {
            while (true) {
                progress();
                checkNotClosed("receive");
                if (!arrived.isEmpty()) {
                    byte[] data = new byte[(int) arrived.peekFirst()[1]];
                    take(MemorySegment.ofArray(data), "receive");
                    return data;
                }
                int n = take(MemorySegment.NULL, "receive");
                if (n == END_OF_STREAM) {
                    return null;
                }
                if (!await(deadline)) {
                    throw new RdmaTimeoutException("receive: no message within " + timeout);
                }
            }
        } finally {
            leave();
        }
    }

    /**
     * Receives the next message into {@code buffer} if one has arrived, without blocking.
     *
     * @return the message's length, {@link #WOULD_BLOCK} when none is there, or {@link
     *         #END_OF_STREAM}
     */
    public int tryReceive(MemorySegment buffer) throws RdmaConnectionException {
        requirePosted("tryReceive", false);
        enter();
        try {
            progress();
            return take(buffer, "tryReceive");
        } finally {
            leave();
        }
    }

    /**
     * Sends {@code message} without waiting: the future completes once the message is copied and
     * posted (as {@link #send(MemorySegment, Duration)} returns), in the order of the calls. The
     * message is copied before this method returns; the segment may be reused at once. See the
     * class documentation for back-pressure, failures, timeouts ({@link CompletableFuture#orTimeout})
     * and threads.
     *
     * @throws IllegalArgumentException when the message exceeds {@link ConnectionOptions#maxMessageSize()}
     */
    public CompletableFuture<Void> sendAsync(MemorySegment message) {
        checkSize(message.byteSize());
        AsyncOp<Void> op = new AsyncOp<>(null);
        lock.lock();
        try {
            progress();
            try {
                checkSendable("sendAsync");
            } catch (RdmaConnectionException e) {
                return op.failNow(e);
            }
            if (asyncSends.isEmpty() && !freeSendSlots.isEmpty() && window.canSend()) {
                try {
                    post(message);
                } catch (RdmaConnectionException e) {
                    return op.failNow(e);
                }
                return op.finishNow(null);
            }
            if (asyncSends.size() >= options.sendDepth()) {
                return op.failNow(new IllegalStateException("sendAsync: " + asyncSends.size()
                        + " send futures already wait for a slot and a credit (at most sendDepth); wait for one first"));
            }
            op.message = bytes(message);
            op.queued = true;
            asyncSends.addLast(op);
            serveAsync();
        } finally {
            unlockAndDeliver();
        }
        return op;
    }

    /** {@link #sendAsync(MemorySegment)} for a byte array (copied before this method returns). */
    public CompletableFuture<Void> sendAsync(byte[] data) {
        return sendAsync(MemorySegment.ofArray(data));
    }

    /**
     * Receives the next message without waiting: the future completes with it as a new array, or
     * with null once the peer disconnected and every earlier message was received (as {@link
     * #receive(Duration)}). Futures take messages in the order of the calls. See the class
     * documentation for back-pressure, failures, timeouts ({@link CompletableFuture#orTimeout})
     * and threads.
     */
    public CompletableFuture<byte[]> receiveAsync() {
        requirePosted("receiveAsync", false);
        AsyncOp<byte[]> op = new AsyncOp<>(null);
        lock.lock();
        try {
            if (closing) {
                return op.failNow(RdmaConnectionException.closed("receiveAsync"));
            }
            if (asyncReceives.size() >= options.receiveDepth()) {
                return op.failNow(new IllegalStateException("receiveAsync: " + asyncReceives.size()
                        + " receive futures already wait for a message (at most receiveDepth); wait for one first"));
            }
            op.queued = true;
            asyncReceives.addLast(op);
            progress();
            serveAsync();
        } finally {
            unlockAndDeliver();
        }
        return op;
    }


    // ---- registered buffers: one-sided operations and zero-copy sends ----

    /**
     * Registers {@code segment} (memory of an {@link dev.verbs4j.verbs.RdmaArena} or the global
     * arena) in this connection's protection domain for local write and remote read and write:
     * the source and target of {@link #write}, {@link #read}, {@link #writeWithImmediate} and
     * {@link #send(RegisteredBuffer, long, int, Duration)}, and of the peer's one-sided operations
     * once it knows {@link RegisteredBuffer#remote()}. Register once, use many times; closing the
     * connection deregisters it.
     *
     * @throws IllegalArgumentException for heap memory or memory of another arena (it could be
     *                                  freed while registered), or an empty segment
     * @throws IllegalStateException    when the connection (or the arena) is closed
     */
    public RegisteredBuffer register(MemorySegment segment) {
        return register(segment, BUFFER_ACCESS);
    }

    /** {@link #register(MemorySegment)} with these {@link Access} flags. */
    public RegisteredBuffer register(MemorySegment segment, int access) {
        Objects.requireNonNull(segment, "segment");
        lock.lock();
        try {
            if (closing) {
                throw new IllegalStateException("register: the connection is closed");
            }
        } finally {
            lock.unlock();
        }
        return RegisteredBuffer.register(pd, segment, access);
    }

    /**
     * RDMA WRITE of {@code length} bytes of {@code local} from {@code offset} to {@code remote}
     * from {@code remoteOffset}, without a waiting thread: the future completes once the write
     * completed (the data is in the peer's memory; {@code local} may be reused). The peer's
     * application is not told; see {@link #writeWithImmediateAsync}. At most {@link
     * ConnectionOptions#sendDepth()} buffer operations (writes, reads, zero-copy sends) are
     * outstanding and as many more wait to be posted; beyond that the future fails at once with
     * an {@link IllegalStateException}. Futures fail as those of {@link #sendAsync(MemorySegment)};
     * closing the connection fails those outstanding (CLOSED) once the queue pair is destroyed,
     * so the device no longer touches the buffers when they fail.
     *
     * @throws IllegalArgumentException when a range lies outside {@code local} or {@code remote}
     *                                  (the message names which), or {@code local} belongs to
     *                                  another protection domain
     * @throws IllegalStateException    when {@code local} is closed
     */
    public CompletableFuture<Void> writeAsync(RegisteredBuffer local, long offset, int length, RemoteBuffer remote,
                                              long remoteOffset) {
        return submit(new BufferOperation(BufferOperation.Kind.WRITE, local, offset, length, remote, remoteOffset, 0));
    }

    /**
     * RDMA WRITE with immediate: as {@link #writeAsync}, and the peer's application then takes
     * {@code immediate} and the byte count with {@link #receiveImmediate}. It consumes one of the
     * peer's receives, so it needs a credit, as a message does, and waits for one (see the flow
     * control in the class documentation).
     */
    public CompletableFuture<Void> writeWithImmediateAsync(RegisteredBuffer local, long offset, int length,
                                                           RemoteBuffer remote, long remoteOffset, int immediate) {
        return submit(new BufferOperation(BufferOperation.Kind.WRITE_WITH_IMMEDIATE, local, offset, length, remote,
                remoteOffset, immediate));
    }

    /**
     * RDMA READ of {@code length} bytes of {@code remote} from {@code remoteOffset} into {@code
     * local} from {@code offset}: the future completes once the data is in {@code local}.
     * Otherwise as {@link #writeAsync}.
     */
    public CompletableFuture<Void> readAsync(RegisteredBuffer local, long offset, int length, RemoteBuffer remote,
                                             long remoteOffset) {
        return submit(new BufferOperation(BufferOperation.Kind.READ, local, offset, length, remote, remoteOffset, 0));
    }

    /**
     * Sends {@code length} bytes of {@code buffer} from {@code offset} as one message without
     * copying: the device reads them from {@code buffer}, and the future completes once the send
     * completed, after which the bytes may be changed. The peer receives it as any message (in
     * order with the copied ones it was posted among); it needs a credit, as they do. Otherwise
     * as {@link #writeAsync}.
     *
     * @throws IllegalArgumentException when the range lies outside {@code buffer} or exceeds
     *                                  {@link ConnectionOptions#maxMessageSize()}
     */
    public CompletableFuture<Void> sendAsync(RegisteredBuffer buffer, long offset, int length) {
        checkSize(length);
        return submit(new BufferOperation(BufferOperation.Kind.SEND, buffer, offset, length, null, 0, 0));
    }

    /**
     * {@link #writeAsync}, waiting up to {@code timeout} for its completion.
     *
     * @throws RdmaTimeoutException    when not completed within {@code timeout}: withdrawn when it
     *                                 was not posted yet; otherwise it stays posted (the message
     *                                 says which)
     * @throws RdmaConnectionException when closed, disconnected or broken (also by an error
     *                                 completion, e.g. a remote access error)
     */
    public void write(RegisteredBuffer local, long offset, int length, RemoteBuffer remote, long remoteOffset,
                      Duration timeout) throws RdmaConnectionException {
        awaitOperation(writeAsync(local, offset, length, remote, remoteOffset), timeout, "write");
    }

    /** {@link #writeWithImmediateAsync}, waiting up to {@code timeout}; see {@link #write}. */
    public void writeWithImmediate(RegisteredBuffer local, long offset, int length, RemoteBuffer remote,
                                   long remoteOffset, int immediate, Duration timeout) throws RdmaConnectionException {
        awaitOperation(writeWithImmediateAsync(local, offset, length, remote, remoteOffset, immediate), timeout,
                "writeWithImmediate");
    }

    /** {@link #readAsync}, waiting up to {@code timeout}; see {@link #write}. */
    public void read(RegisteredBuffer local, long offset, int length, RemoteBuffer remote, long remoteOffset,
                     Duration timeout) throws RdmaConnectionException {
        awaitOperation(readAsync(local, offset, length, remote, remoteOffset), timeout, "read");
    }

    /** {@link #sendAsync(RegisteredBuffer, long, int)}, waiting up to {@code timeout}; see {@link #write}. */
    public void send(RegisteredBuffer buffer, long offset, int length, Duration timeout) throws RdmaConnectionException {
        awaitOperation(sendAsync(buffer, offset, length), timeout, "send");
    }

    /**
     * Takes the next write with immediate of the peer, waiting up to {@code timeout}: its
     * immediate value and byte count; null once the peer disconnected and every earlier one was
     * taken. Immediates and messages share this side's receives but are taken apart, each in the
     * order they arrived: an immediate holds its receive until it is taken here (then the
     * receive is posted again and its credit returned), so a peer whose immediates are not taken
     * runs out of credits, for messages too.
     *
     * @throws RdmaTimeoutException    when none arrived within {@code timeout}
     * @throws RdmaConnectionException when closed or broken
     */
    public ImmediateData receiveImmediate(Duration timeout) throws RdmaConnectionException {
        long deadline = deadline(timeout);
        enter();
        try {
            while (true) {
                progress();
                ImmediateData d = takeImmediate("receiveImmediate");
                if (d != null) {
                    return d == NO_MORE ? null : d;
                }
                if (!await(deadline)) {
                    throw new RdmaTimeoutException("receiveImmediate: no write with immediate within " + timeout);
                }
            }
        } finally {
            leave();
        }
    }

    /**
     * {@link #receiveImmediate} without a waiting thread: completes with the next immediate, or
     * null at end of stream; at most {@link ConnectionOptions#receiveDepth()} wait. See the class
     * documentation for futures.
     */
    public CompletableFuture<ImmediateData> receiveImmediateAsync() {
        AsyncOp<ImmediateData> op = new AsyncOp<>(null);
        lock.lock();
        try {
            if (closing) {
                return op.failNow(RdmaConnectionException.closed("receiveImmediateAsync"));
            }
            if (asyncImmediates.size() >= options.receiveDepth()) {
                return op.failNow(new IllegalStateException("receiveImmediateAsync: " + asyncImmediates.size()
                        + " futures already wait (at most receiveDepth); wait for one first"));
            }
            op.queued = true;
            asyncImmediates.addLast(op);
            progress();
            serveAsync();
        } finally {
            unlockAndDeliver();
        }
        return op;
    }

    /**
     * Posts {@code length} bytes of {@code buffer} from {@code offset} as a receive, on a
     * connection with {@link ConnectionOptions#postedReceives()}: a message of the peer then
     * arrives there without a copy, and {@link #receiveBuffer} returns where. Each posted buffer
     * is a credit for the peer (returned at once), so posting is the flow control: the peer
     * sends at most as many messages as buffers wait. Messages take the buffers in the order
     * they were posted, except that the peer's credit updates and writes with immediate also
     * use a posted receive (without writing into it), which is then posted again at the end
     * (for an immediate: once it is taken). Buffers must be as large as the peer's messages: a
     * longer message breaks the connection. At most {@code receiveDepth + 1} buffers are posted
     * at once (one is kept for the peer's credit updates).
     *
     * @throws IllegalStateException    without posted receives, when {@code receiveDepth + 1}
     *                                  buffers are posted already, or when {@code buffer} is closed
     * @throws IllegalArgumentException when the range is outside {@code buffer}, or the buffer
     *                                  belongs to another protection domain
     * @throws RdmaConnectionException  when closed, disconnected or broken
     */
    public void postReceive(RegisteredBuffer buffer, long offset, int length) throws RdmaConnectionException {
        if (!options.postedReceives()) {
            throw new IllegalStateException("postReceive: the connection receives into its ring; open it with"
                    + " ConnectionOptions.withPostedReceives(true) to receive into posted buffers");
        }
        checkBuffer(buffer, offset, length, "postReceive");
        if (length < 1) {
            throw new IllegalArgumentException("postReceive: length must be positive, got " + length);
        }
        lock.lock();
        try {
            checkSendable("postReceive");
            int max = options.receiveDepth() + CONTROL_SLOTS - (ringReservePosted ? 1 : 0);
            if (postedCount >= max) {
                throw new IllegalStateException("postReceive: " + postedCount + " buffers are posted already (at most "
                        + max + ": receiveDepth and one for the peer's credit updates)");
            }
            int id = nextPostedId++;
            if (!postBuffer(id, new ReceivedBuffer(buffer, offset, length))) {
                checkSendable("postReceive");
                throw new IllegalStateException("postReceive: the queue pair takes no receives");
            }
            postedCount++;
            if (reserveMissing) {
                reserveMissing = false;
                window.updateReceiveReposted();
            } else {
                window.receiveReposted();
            }
            returnCredits();
        } finally {
            unlockAndDeliver();
        }
    }

    /**
     * The next message that arrived in a posted buffer (see {@link #postReceive}), waiting up to
     * {@code timeout}: the buffer, where the message starts and its length; null once the peer
     * disconnected and every earlier message was taken. The buffer is the application's again.
     *
     * @throws IllegalStateException   without posted receives
     * @throws RdmaTimeoutException    when none arrived within {@code timeout}
     * @throws RdmaConnectionException when closed or broken
     */
    public ReceivedBuffer receiveBuffer(Duration timeout) throws RdmaConnectionException {
        requirePosted("receiveBuffer", true);
        long deadline = deadline(timeout);
        enter();
        try {
            while (true) {
                progress();
                checkNotClosed("receiveBuffer");
                ReceivedBuffer b = arrivedBuffers.pollFirst();
                if (b != null) {
                    return b;
                }
                if (state == State.PEER_CLOSED) {
                    return null;
                }
                if (state == State.FAILED) {
                    throw failure.rethrown("receiveBuffer");
                }
                if (!await(deadline)) {
                    throw new RdmaTimeoutException("receiveBuffer: no message within " + timeout);
                }
            }
        } finally {
            leave();
        }
    }

    /**
     * {@link #receiveBuffer} without a waiting thread: completes with the next message's buffer,
     * or null at end of stream; at most {@link ConnectionOptions#receiveDepth()} + 1 wait. See the
     * class documentation for futures.
     */
    public CompletableFuture<ReceivedBuffer> receiveBufferAsync() {
        requirePosted("receiveBufferAsync", true);
        AsyncOp<ReceivedBuffer> op = new AsyncOp<>(null);
        lock.lock();
        try {
            if (closing) {
                return op.failNow(RdmaConnectionException.closed("receiveBufferAsync"));
            }
            if (asyncBuffers.size() > options.receiveDepth()) {
                return op.failNow(new IllegalStateException("receiveBufferAsync: " + asyncBuffers.size()
                        + " futures already wait (at most receiveDepth + 1); wait for one first"));
            }
            op.queued = true;
            asyncBuffers.addLast(op);
            progress();
            serveAsync();
        } finally {
            unlockAndDeliver();
        }
        return op;
    }

    private void requirePosted(String what, boolean posted) {
        if (options.postedReceives() != posted) {
            throw new IllegalStateException(what + (posted
                    ? ": the connection receives into its ring (use receive), not into posted buffers"
                    : ": the connection receives into posted buffers (ConnectionOptions.postedReceives); use receiveBuffer"));
        }
    }

    /** Posts the receive of a posted buffer; false when the queue pair no longer takes receives or the buffer is closed. */
    private boolean postBuffer(int id, ReceivedBuffer entry) {
        try {
            receiveRequests.get(0).wrId(POSTED_TAG | (id & 0xffff_ffffL)).sge(entry.buffer().region(), entry.offset(), entry.length());
            qp.postReceive(receiveRequests, 1);
        } catch (VerbsException | IllegalStateException e) {
            LOG.log(System.Logger.Level.DEBUG, "posted receive not posted: {0}", e.getMessage());
            return false;
        }
        postedBuffers.put(id, entry);
        return true;
    }

    private CompletableFuture<Void> submit(BufferOperation operation) {
        checkOperation(operation);
        AsyncOp<Void> op = new AsyncOp<>(null);
        op.operation = operation;
        String what = operation.kind().verb;
        lock.lock();
        try {
            progress();
            try {
                checkSendable(what);
            } catch (RdmaConnectionException e) {
                return op.failNow(e);
            }
            if (waitingOps.size() >= options.sendDepth()) {
                return op.failNow(new IllegalStateException(what + ": " + outstandingOps.size() + " buffer operations are"
                        + " outstanding and " + waitingOps.size() + " wait to be posted (at most sendDepth each); wait for one first"));
            }
            op.queued = true;
            waitingOps.addLast(op);
            serveAsync();
        } finally {
            unlockAndDeliver();
        }
        return op;
    }

    private void checkOperation(BufferOperation op) {
        String what = op.kind().verb;
        checkBuffer(op.buffer(), op.offset(), op.length(), what);
        if (op.kind() != BufferOperation.Kind.SEND) {
            Objects.requireNonNull(op.remote(), "remote buffer");
            op.remote().checkRange(op.remoteOffset(), op.length(), what);
        }
    }

    /** Checks a local buffer and range for {@code what}: not null, this connection's domain, inside the buffer, open. */
    private void checkBuffer(RegisteredBuffer buffer, long offset, int length, String what) {
        Objects.requireNonNull(buffer, "local buffer");
        if (length < 0) {
            throw new IllegalArgumentException(what + ": length must not be negative, got " + length);
        }
        if (buffer.region().protectionDomain() != pd) {
            throw new IllegalArgumentException(what + ": the buffer was registered for another connection or group"
                    + " (another protection domain); register it with this connection");
        }
        buffer.checkRange(offset, length, what);
    }

    private static void awaitOperation(CompletableFuture<Void> f, Duration timeout, String what) throws RdmaConnectionException {
        try {
            f.get(Math.max(0, timeout.toNanos()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            if (f.cancel(false)) {
                throw new RdmaTimeoutException(what + ": not posted within " + timeout
                        + " (every operation slot in use, or no credit); withdrawn");
            }
            throw new RdmaTimeoutException(what + ": posted but not completed within " + timeout
                    + "; it stays posted, so its buffer may still be read or written until it completes or the connection closes");
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RdmaConnectionException r) {
                throw r.rethrown(what);
            }
            if (cause instanceof RuntimeException r) {
                throw r;
            }
            throw new IllegalStateException(what + " failed", cause);
        } catch (InterruptedException e) {
            f.cancel(false);
            throw RdmaConnectionException.interrupted(what);
        }
    }

    /**
     * A future of {@link #sendAsync} or {@link #receiveAsync}. While it waits in its queue ({@code
     * queued}, under the connection's lock), a cancel, a timeout or an outside completion takes it
     * out; once the connection took it, they return false and the connection completes it.
     */
    private final class AsyncOp<T> extends CompletableFuture<T> {
        /** A waiting send's copy of its message. */
        byte[] message;
        /** A buffer operation's request. */
        BufferOperation operation;
        boolean queued;

        AsyncOp(byte[] message) {
            this.message = message;
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            return withdraw() && super.cancel(mayInterruptIfRunning);
        }

        @Override
        public boolean completeExceptionally(Throwable ex) {
            return withdraw() && super.completeExceptionally(ex);
        }

        @Override
        public boolean complete(T value) {
            return withdraw() && super.complete(value);
        }

        @Override
        public <U> CompletableFuture<U> newIncompleteFuture() {
            return new CompletableFuture<>();
        }

        /** Takes this operation out of its queue; false when the connection took it already. */
        private boolean withdraw() {
            lock.lock();
            try {
                if (!queued) {
                    return false;
                }
                queued = false;
                message = null;
                asyncSends.remove(this);
                asyncReceives.remove(this);
                waitingOps.remove(this);
                asyncImmediates.remove(this);
                asyncBuffers.remove(this);
                return true;
            } finally {
                lock.unlock();
            }
        }

        /** Completes a future nobody has seen yet (no callbacks to run); returns it. */
        AsyncOp<T> finishNow(T value) {
            super.complete(value);
            return this;
        }

        AsyncOp<T> failNow(Throwable failure) {
            super.completeExceptionally(failure);
            return this;
        }

        /** Taken by the connection (under the lock): completed with {@code value} once the lock is released. */
        void finishLater(T value) {
            queued = false;
            message = null;
            deliveries.add(() -> super.complete(value));
        }

        void failLater(Throwable failure) {
            queued = false;
            message = null;
            deliveries.add(() -> super.completeExceptionally(failure));
        }
    }

    // ---- internals: all under the lock ----

    private void checkSize(long size) {
        if (size > slot) {
            throw new IllegalArgumentException("a message of " + size + " bytes exceeds maxMessageSize " + slot);
        }
    }

    private static long deadline(Duration timeout) {
        long nanos = Math.max(0, timeout.toNanos());
        long now = System.nanoTime();
        return now + nanos < now ? Long.MAX_VALUE : now + nanos;
    }

    private void enter() throws RdmaConnectionException {
        lock.lock();
        if (closing) {
            lock.unlock();
            throw RdmaConnectionException.closed("connection");
        }
        callers++;
    }

    private void leave() {
        callers--;
        progressed.signalAll();
        serveAsync();
        unlockAndDeliver();
    }

    private void checkNotClosed(String what) throws RdmaConnectionException {
        if (closing) {
            throw RdmaConnectionException.closed(what);
        }
    }

    private void checkSendable(String what) throws RdmaConnectionException {
        checkNotClosed(what);
        switch (state) {
            case FAILED -> throw failure.rethrown(what);
            case PEER_CLOSED -> throw RdmaConnectionException.peerDisconnected(what + " to " + remoteAddress, endEvent);
            case CONNECTING -> throw new IllegalStateException(what + ": the connection is not established yet");
            default -> { }
        }
    }

    /** The next message into {@code buffer}, END_OF_STREAM, or WOULD_BLOCK; throws when closed or failed. */
    private int take(MemorySegment buffer, String what) throws RdmaConnectionException {
        checkNotClosed(what);
        long[] head = arrived.peekFirst();
        if (head != null) {
            int s = (int) head[0];
            int len = (int) head[1];
            if (len > buffer.byteSize()) {
                throw new IllegalArgumentException("the next message has " + len + " bytes, the buffer only " + buffer.byteSize());
            }
            MemorySegment.copy(receiveRing.segment(), (long) s * slot, buffer, 0, len);
            arrived.pollFirst();
            if (giveBack(s, state == State.OPEN)) {
                window.receiveReposted();
                returnCredits();
            }
            return len;
        }
        return switch (state) {
            case PEER_CLOSED -> END_OF_STREAM;
            case FAILED -> throw failure.rethrown(what);
            default -> WOULD_BLOCK;
        };
    }

    /** Posts {@code message}: needs a free send slot and a credit. */
    private void post(MemorySegment message) throws RdmaConnectionException {
        int s = freeSendSlots.pollFirst();
        int len = (int) message.byteSize();
        MemorySegment.copy(message, 0, sendRing.segment(), (long) s * slot, len);
        int imm = window.messageImmediate();
        sendRequests.reset(0).wrId(SEND_TAG | s).opcode(Opcode.SEND_WITH_IMM).flags(SendFlags.SIGNALED)
                .immediateData(imm).sge(sendRing, (long) s * slot, len);
        try {
            qp.postSend(sendRequests, 1);
        } catch (VerbsException e) {
            freeSendSlots.addFirst(s);
            progress();
            checkSendable("send");
            throw RdmaConnectionException.of(e, "send to " + remoteAddress);
        }
        window.messageSent(imm);
    }

    /** What {@link #takeImmediate} returns at end of stream. */
    private static final ImmediateData NO_MORE = new ImmediateData(0, -1);

    /** The next immediate (its receive posted again), {@link #NO_MORE} at end of stream, or null when none arrived yet. */
    private ImmediateData takeImmediate(String what) throws RdmaConnectionException {
        checkNotClosed(what);
        long[] head = immediates.pollFirst();
        if (head != null) {
            if (head[0] < 0) {
                int id = (int) (-1 - head[0]);
                ReceivedBuffer entry = heldForImmediates.remove(id);
                if (state == State.OPEN && postBuffer(id, entry)) {
                    window.receiveReposted();
                    returnCredits();
                } else {
                    postedCount--;
                }
            } else if (giveBack((int) head[0], state == State.OPEN)) {
                window.receiveReposted();
                returnCredits();
            }
            return new ImmediateData((int) head[1], (int) head[2]);
        }
        return switch (state) {
            case PEER_CLOSED -> NO_MORE;
            case FAILED -> throw failure.rethrown(what);
            default -> null;
        };
    }

    /** Posts a buffer operation: needs an operation slot, and a credit when it consumes a peer's receive. */
    private void postOperation(AsyncOp<Void> op) throws RdmaConnectionException {
        BufferOperation o = op.operation;
        long wrId = OP_TAG | (nextOpId++ & 0xff_ffff_ffffL);
        SendRequest r = sendRequests.reset(0).wrId(wrId).opcode(o.kind().opcode).flags(SendFlags.SIGNALED);
        if (o.length() > 0) {
            r.sge(o.buffer().region(), o.offset(), o.length());
        }
        int imm = 0;
        if (o.kind() == BufferOperation.Kind.SEND) {
            imm = window.messageImmediate();
            r.immediateData(imm);
        } else if (o.kind() == BufferOperation.Kind.WRITE_WITH_IMMEDIATE) {
            r.immediateData(o.immediate());
        }
        if (o.remote() != null) {
            r.rdma(o.remote().address() + o.remoteOffset(), o.remote().rkey());
        }
        try {
            qp.postSend(sendRequests, 1);
        } catch (VerbsException e) {
            checkSendable(o.kind().verb);
            throw RdmaConnectionException.of(e, o.kind().verb + " to " + remoteAddress);
        }
        outstandingOps.put(wrId, op);
        if (o.kind() == BufferOperation.Kind.SEND) {
            window.messageSent(imm);
        } else if (o.kind() == BufferOperation.Kind.WRITE_WITH_IMMEDIATE) {
            window.immediateSent();
        }
    }

    /** The exception for an operation that cannot complete because of the connection's state. */
    private RdmaConnectionException stateFailure(String what) {
        if (closing) {
            return RdmaConnectionException.closed(what);
        }
        return switch (state) {
            case FAILED -> failure.rethrown(what);
            case PEER_CLOSED -> RdmaConnectionException.peerDisconnected(what + " to " + remoteAddress, endEvent);
            default -> RdmaConnectionException.closed(what);
        };
    }

    /** Whether any future waits for the connection. */
    private boolean futuresWait() {
        return !asyncSends.isEmpty() || !asyncReceives.isEmpty() || !waitingOps.isEmpty() || !outstandingOps.isEmpty()
                || !asyncImmediates.isEmpty() || !asyncBuffers.isEmpty();
    }

    /**
     * Sends a credit update when enough receives wait to be returned and the peer has its
     * reserved receive free for it.
     */
    private void returnCredits() {
        if (!window.updateDue() || state != State.OPEN || closing || released) {
            return;
        }
        int imm = window.updateImmediate();
        sendRequests.reset(0).wrId(CONTROL_TAG).opcode(Opcode.SEND_WITH_IMM).flags(SendFlags.SIGNALED)
                .immediateData(imm);
        try {
            qp.postSend(sendRequests, 1);
        } catch (VerbsException e) {
            // the queue pair went to the error state: the CM event or the flush tells why
            LOG.log(System.Logger.Level.DEBUG, "credit update not sent: {0}", e.getMessage());
            return;
        }
        window.updateSent(imm);
    }

    private void postReceive(int s) {
        receiveRequests.get(0).wrId(s).sge(receiveRing, (long) s * slot, slot);
        qp.postReceive(receiveRequests, 1);
    }

    /**
     * Gives receive slot {@code s} back after its message (or update, or immediate) was taken:
     * posted again for this connection when {@code counts} (true: it is owed to the peer as a
     * credit). A shared slot always goes back to the group's shared receive queue, whatever the
     * state, since other connections use it; it is owed as a credit only when {@code counts}.
     */
    private boolean giveBack(int s, boolean counts) {
        if (shared) {
            group.repostShared(s);
            return counts;
        }
        return counts && repost(s);
    }

    /** On release: the shared slots the connection still holds (messages and immediates not taken, completions not yet seen) go back. */
    private void returnSharedSlots() {
        for (long[] a : arrived) {
            group.repostShared((int) a[0]);
        }
        arrived.clear();
        for (long[] i : immediates) {
            if (i[0] >= 0) {
                group.repostShared((int) i[0]);
            }
        }
        immediates.clear();
        group.recycle(new ArrayList<>(inbox));
        inbox.clear();
    }

    /** Posts receive slot {@code s} again; false when the queue pair no longer takes receives. */
    private boolean repost(int s) {
        try {
            postReceive(s);
            return true;
        } catch (VerbsException e) {
            // the queue pair went to the error state: the CM event or the flush tells why
            LOG.log(System.Logger.Level.DEBUG, "receive not reposted: {0}", e.getMessage());
            return false;
        }
    }

    /**
     * Takes pending CM events, completion events and completions; returns how many there were.
     * Does nothing while another caller sleeps in poll(): taking the event or the completions it
     * waits for would leave it asleep with the news already taken (a lost wake-up); it wakes on
     * them and signals the others.
     */
    private int takeNews() {
        if (released || pollerSleeping) {
            return 0;
        }
        int n = 0;
        EventChannel ch = events;
        if (ch != null) {
            CmEvent ev;
            while ((ev = ch.tryGetEvent()) != null) {
                onEvent(ev);
                n++;
            }
        }
        if (group != null) {
            if (wakePending) {
                Libc.drain(wakeFd);
                wakePending = false;
            }
            Completion c;
            while ((c = inbox.pollFirst()) != null) {
                n++;
                onCompletion(c.wrId(), c.status(), c.opcode(), c.byteLength(), c.immediate(), c.flags());
            }
        } else {
            while (completionChannel.tryGetEvent() != null) {
                n++;
            }
            int got;
            while ((got = cq.poll(completions)) > 0) {
                n += got;
                for (int i = 0; i < got; i++) {
                    WorkCompletion wc = completions.get(i);
                    onCompletion(wc.wrId(), wc.status(), wc.opcode(), wc.byteLength(), wc.immediateData(), wc.flags());
                }
            }
        }
        if (n > 0) {
            returnCredits();
        }
        return n;
    }

    /** {@link #takeNews}, then serves the waiting futures when there was news. */
    private int progress() {
        int n = takeNews();
        if (n > 0) {
            serveAsync();
        }
        return n;
    }

    /**
     * Serves the waiting futures as far as the connection allows (messages that arrived, free
     * slots and credits, the end of the stream, a failure or close); while some still wait and no
     * caller sleeps on the connection's fds, arms the completion queue and has the readiness
     * poller watch the fds ({@link #onReadable}): no thread waits for them.
     */
    private void serveAsync() {
        if (serving || released || fds == null) {
            return;
        }
        serving = true;
        try {
            while (true) {
                drainAsync();
                if (!futuresWait() || pollerSleeping || closing) {
                    return;
                }
                // armed again even while a watch is registered: a caller may have taken the
                // completion event the watch waits for, and with it the queue's arming
                if (group == null) {
                    cq.requestNotify(false);
                }
                if (takeNews() == 0) {
                    if (watch == null) {
                        watch = Readiness.whenReadable(fds, this::onReadable);
                    }
                    return;
                }
            }
        } finally {
            serving = false;
        }
    }

    private void drainAsync() {
        while (!asyncReceives.isEmpty()) {
            if (closing) {
                asyncReceives.pollFirst().failLater(RdmaConnectionException.closed("receiveAsync"));
            } else if (!arrived.isEmpty()) {
                byte[] data = new byte[(int) arrived.peekFirst()[1]];
                try {
                    take(MemorySegment.ofArray(data), "receiveAsync");
                    asyncReceives.pollFirst().finishLater(data);
                } catch (RdmaConnectionException e) {
                    asyncReceives.pollFirst().failLater(e);
                }
            } else if (state == State.PEER_CLOSED) {
                asyncReceives.pollFirst().finishLater(null);
            } else if (state == State.FAILED) {
                asyncReceives.pollFirst().failLater(failure.rethrown("receiveAsync"));
            } else {
                break;
            }
        }
        while (!asyncBuffers.isEmpty()) {
            if (closing) {
                asyncBuffers.pollFirst().failLater(RdmaConnectionException.closed("receiveBufferAsync"));
            } else if (!arrivedBuffers.isEmpty()) {
                asyncBuffers.pollFirst().finishLater(arrivedBuffers.pollFirst());
            } else if (state == State.PEER_CLOSED) {
                asyncBuffers.pollFirst().finishLater(null);
            } else if (state == State.FAILED) {
                asyncBuffers.pollFirst().failLater(failure.rethrown("receiveBufferAsync"));
            } else {
                break;
            }
        }
        while (!asyncImmediates.isEmpty()) {
            try {
                ImmediateData d = takeImmediate("receiveImmediateAsync");
                if (d == null) {
                    break;
                }
                asyncImmediates.pollFirst().finishLater(d == NO_MORE ? null : d);
            } catch (RdmaConnectionException e) {
                asyncImmediates.pollFirst().failLater(e);
            }
        }
        while (!waitingOps.isEmpty()) {
            AsyncOp<Void> op = waitingOps.peekFirst();
            BufferOperation o = op.operation;
            try {
                checkSendable(o.kind().verb);
                if (outstandingOps.size() >= options.sendDepth() || o.kind().needsCredit() && !window.canSend()) {
                    break;
                }
                waitingOps.pollFirst();
                op.queued = false;
                postOperation(op);
            } catch (RdmaConnectionException | RuntimeException e) {
                waitingOps.remove(op);
                op.failLater(e);
            }
        }
        while (!asyncSends.isEmpty()) {
            AsyncOp<Void> op = asyncSends.peekFirst();
            try {
                checkSendable("sendAsync");
                if (freeSendSlots.isEmpty() || !window.canSend()) {
                    break;
                }
                asyncSends.pollFirst();
                byte[] m = op.message;
                post(MemorySegment.ofArray(m));
                op.finishLater(null);
            } catch (RdmaConnectionException e) {
                asyncSends.remove(op);
                op.failLater(e);
            }
        }
    }

    /** The poller saw one of the fds readable: takes the news and serves the futures (on a new virtual thread). */
    private void onReadable() {
        List<Runnable> batch;
        lock.lock();
        try {
            watch = null;
            if (!released) {
                if (!closing) {
                    progress();
                }
                serveAsync();
            }
            batch = takeDeliveries();
        } finally {
            lock.unlock();
        }
        runAll(batch);
    }

    private List<Runnable> takeDeliveries() {
        if (deliveries.isEmpty()) {
            return null;
        }
        List<Runnable> batch = deliveries;
        deliveries = new ArrayList<>();
        return batch;
    }

    /** Releases the lock and completes the futures decided under it on a new virtual thread. */
    private void unlockAndDeliver() {
        List<Runnable> batch = takeDeliveries();
        lock.unlock();
        if (batch != null) {
            Thread.ofVirtual().name("verbs4j-rdma-futures").start(() -> runAll(batch));
        }
    }

    private static void runAll(List<Runnable> batch) {
        if (batch != null) {
            for (Runnable r : batch) {
                try {
                    r.run();
                } catch (RuntimeException | Error e) {
                    LOG.log(System.Logger.Level.WARNING, "a future's callback failed", e);
                }
            }
        }
    }

    /**
     * Completions the group's poller took for this connection: taken at once, or by the caller
     * sleeping on the connection's fds, which is woken for them.
     */
    void deliver(List<Completion> batch) {
        lock.lock();
        try {
            if (released) {
                group.recycle(batch);
                return;
            }
            inbox.addAll(batch);
            if (pollerSleeping) {
                if (!wakePending) {
                    wakePending = true;
                    Libc.signal(wakeFd);
                }
            } else {
                progress();
            }
            progressed.signalAll();
        } finally {
            unlockAndDeliver();
        }
    }

    /** The completion queue the connection's queue pair uses (its own, or its group's). */
    CompletionQueue completionQueue() {
        return cq;
    }

    /** The flow control's and the queues' state, for diagnostics. */
    String flowState() {
        lock.lock();
        try {
            return window + "; arrived " + arrived.size() + ", immediates " + immediates.size() + ", free send slots "
                    + freeSendSlots.size() + ", operations outstanding " + outstandingOps.size() + ", waiting " + waitingOps.size()
                    + ", state " + state + (pollerSleeping ? ", a caller sleeps" : "") + (watch != null ? ", watched" : "");
        } finally {
            lock.unlock();
        }
    }

    /** The group of the connection, or null. */
    public RdmaEndpointGroup group() {
        return group;
    }

    private void onCompletion(long wrId, WcStatus wcStatus, WcOpcode opcode, int byteLength, int immediate, int flags) {
        boolean success = wcStatus == WcStatus.SUCCESS;
        if ((wrId & OP_TAG) != 0) {
            AsyncOp<Void> op = outstandingOps.remove(wrId);
            String what = op != null ? op.operation.kind().verb : "operation";
            if (success) {
                if (op != null) {
                    op.finishLater(null);
                }
            } else if (wcStatus == WcStatus.WR_FLUSH_ERR) {
                if (state == State.OPEN || state == State.CONNECTING) {
                    ended(CmEventType.DISCONNECTED);
                }
                if (op != null) {
                    op.failLater(stateFailure(what));
                }
            } else {
                RdmaConnectionException e = RdmaConnectionException.of(wcStatus, what + " to " + remoteAddress);
                fail(e);
                if (op != null) {
                    op.failLater(e);
                }
            }
            return;
        }
        if ((wrId & POSTED_TAG) != 0) {
            onPostedCompletion((int) (wrId & 0xffff_ffffL), success, wcStatus, opcode, byteLength, immediate, flags);
            return;
        }
        boolean control = (wrId & CONTROL_TAG) != 0;
        boolean send = control || (wrId & SEND_TAG) != 0;
        int s = (int) (wrId & 0xffff_ffffL);
        if (control) {
            window.updateCompleted();
        } else if (send) {
            freeSendSlots.addLast(s);
        }
        if (success) {
            if (!send && opcode == WcOpcode.RECV_RDMA_WITH_IMM) {
                // the peer's write with immediate: its receive is held until the application takes it
                immediates.addLast(new long[]{s, immediate & 0xffff_ffffL, byteLength});
                window.immediateReceived();
            } else if (!send) {
                int imm = (flags & WorkCompletion.FLAG_WITH_IMM) != 0 ? immediate : 0;
                if (window.received(imm)) {
                    if (options.postedReceives()) {
                        // the ring's one receive took the peer's first update: the next posted buffer replaces it
                        ringReservePosted = false;
                        reserveMissing = true;
                    } else if (giveBack(s, state == State.OPEN || state == State.CONNECTING)) {
                        // the peer's update may arrive before this side saw ESTABLISHED
                        window.updateReceiveReposted();
                    }
                } else {
                    arrived.addLast(new long[]{s, byteLength});
                }
            }
            return;
        }
        if (shared && !send) {
            // the failed receive used a shared slot: it goes back to the group's queue
            group.repostShared(s);
        }
        WcStatus status = wcStatus;
        if (status == WcStatus.WR_FLUSH_ERR) {
            // the queue pair is in the error state: a disconnect, or the error reported by an earlier completion
            if (state == State.OPEN || state == State.CONNECTING) {
                ended(CmEventType.DISCONNECTED);
            }
        } else {
            fail(RdmaConnectionException.of(status, send ? "send to " + remoteAddress : "receive from " + remoteAddress));
        }
    }

    /** A completion of a posted buffer's receive: a message, a write with immediate, or a credit update. */
    private void onPostedCompletion(int id, boolean success, WcStatus status, WcOpcode opcode, int byteLength, int immediate,
                                    int flags) {
        ReceivedBuffer entry = postedBuffers.remove(id);
        if (!success) {
            postedCount--;
            if (status == WcStatus.WR_FLUSH_ERR) {
                if (state == State.OPEN || state == State.CONNECTING) {
                    ended(CmEventType.DISCONNECTED);
                }
            } else {
                fail(RdmaConnectionException.of(status, "receive from " + remoteAddress));
            }
            return;
        }
        if (opcode == WcOpcode.RECV_RDMA_WITH_IMM) {
            heldForImmediates.put(id, entry);
            immediates.addLast(new long[]{-1L - id, immediate & 0xffff_ffffL, byteLength});
            window.immediateReceived();
            return;
        }
        int imm = (flags & WorkCompletion.FLAG_WITH_IMM) != 0 ? immediate : 0;
        if (window.received(imm)) {
            // a credit update used the buffer without writing into it: posted again at once
            if ((state == State.OPEN || state == State.CONNECTING) && postBuffer(id, entry)) {
                window.updateReceiveReposted();
            } else {
                postedCount--;
            }
            return;
        }
        postedCount--;
        arrivedBuffers.addLast(new ReceivedBuffer(entry.buffer(), entry.offset(), byteLength));
    }

    private void onEvent(CmEvent ev) {
        switch (ev.type()) {
            case DISCONNECTED, TIMEWAIT_EXIT -> ended(ev.type());
            case ESTABLISHED, ADDR_CHANGE, CONNECT_RESPONSE, ROUTE_RESOLVED, ADDR_RESOLVED -> { }
            default -> fail(RdmaConnectionException.of(ev, "connection to " + remoteAddress));
        }
    }

    private void ended(CmEventType why) {
        if (state == State.OPEN || state == State.CONNECTING) {
            state = State.PEER_CLOSED;
            endEvent = why;
        }
        disconnect();
    }

    private void fail(RdmaConnectionException e) {
        if (state != State.FAILED) {
            state = State.FAILED;
            failure = e;
        }
        disconnect();
    }

    private void disconnect() {
        if (!disconnectCalled && !released) {
            disconnectCalled = true;
            try {
                id.disconnect();
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.DEBUG, "rdma_disconnect: {0}", e.getMessage());
            }
        }
    }

    /**
     * Waits until something may have changed or {@code deadline} passes (false). One caller
     * arms the completion queue, takes what is already there, and sleeps (Readiness: poll, or a parked virtual thread) on the
     * completion channel, the event channel and the wake-up fd; the others wait on the condition
     * until it is done (and meanwhile do not take events or completions, see {@link #progress}).
     */
    private boolean await(long deadline) throws RdmaConnectionException {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
            return false;
        }
        try {
            if (pollerActive) {
                progressed.awaitNanos(left);
                return true;
            }
            pollerActive = true;
            try {
                if (group == null) {
                    cq.requestNotify(false);
                }
                if (progress() > 0) {
                    return true;
                }
                int[] watched = fds;
                pollerSleeping = true;
                unlockAndDeliver();
                try {
                    Readiness.awaitReadable(watched, (int) Math.min(Integer.MAX_VALUE, (left + 999_999) / 1_000_000));
                } finally {
                    lock.lock();
                    pollerSleeping = false;
                }
            } finally {
                pollerActive = false;
                progressed.signalAll();
            }
            return true;
        } catch (InterruptedException e) {
            throw RdmaConnectionException.interrupted("wait on " + this);
        }
    }

    /**
     * Closes the connection: waits up to {@link ConnectionOptions#linger()} for sends in flight,
     * disconnects, wakes every thread blocked on the connection (they get a CLOSED exception),
     * and frees the connection's resources. Idempotent; never throws.
     */
    @Override
    public void close() {
        lock.lock();
        try {
            if (closing) {
                return;
            }
            if (state == State.OPEN && !options.linger().isZero() && freeSendSlots.size() < options.sendDepth()) {
                long deadline = deadline(options.linger());
                callers++;
                try {
                    while (state == State.OPEN && freeSendSlots.size() < options.sendDepth()) {
                        progress();
                        if (freeSendSlots.size() == options.sendDepth() || !await(deadline)) {
                            break;
                        }
                    }
                } catch (RuntimeException | RdmaConnectionException e) {
                    LOG.log(System.Logger.Level.DEBUG, "linger ended: {0}", e.getMessage());
                } finally {
                    callers--;
                }
            }
            closing = true;
            disconnect();
            Libc.signal(wakeFd);
            progressed.signalAll();
            drainAsync(); // every waiting future fails CLOSED
            if (watch != null) {
                watch.cancel(); // false when its task has started: it finds the connection released
                watch = null;
            }
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (callers > 0 && System.nanoTime() < until) {
                try {
                    progressed.awaitNanos(until - System.nanoTime());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
            release();
            // the queue pair is destroyed: the device no longer touches the buffers of these
            for (AsyncOp<Void> op : outstandingOps.values()) {
                op.failLater(RdmaConnectionException.closed(op.operation.kind().verb));
            }
            outstandingOps.clear();
        } finally {
            unlockAndDeliver();
        }
    }

    /** Frees everything: the id (and its queue pair), the rings, the queues, the channels. */
    void release() {
        lock.lock();
        try {
            if (released) {
                return;
            }
            released = true;
            closing = true;
            if (group != null) {
                // destroys the queue pair and drains the group's queue of its completions before
                // another queue pair of the group can be created (and so take its number)
                group.queuePairGone(qp.qpNum(), this, () -> closeQuietly(id));
                closeQuietly(sendRing);
                if (shared) {
                    returnSharedSlots();
                } else {
                    closeQuietly(receiveRing);
                }
            } else {
                closeQuietly(id);
                closeQuietly(pd);
                closeQuietly(cq);
                closeQuietly(completionChannel);
                completions.close();
            }
            closeQuietly(events);
            sendRequests.close();
            receiveRequests.close();
            Libc.close(wakeFd);
        } finally {
            lock.unlock();
        }
    }

    /** Closes {@code c} (if any), logging rather than throwing what its close throws. */
    static void closeQuietly(AutoCloseable c) {
        if (c == null) {
            return;
        }
        try {
            c.close();
        } catch (Exception e) {
            LOG.log(System.Logger.Level.DEBUG, "closing {0}: {1}", c, e.getMessage());
        }
    }

    @Override
    public String toString() {
        return "RdmaConnection " + localAddress + " -> " + remoteAddress;
    }

    static byte[] bytes(MemorySegment s) {
        return s.toArray(ValueLayout.JAVA_BYTE);
    }
}
