package dev.verbs4j.rdmacm;

import dev.verbs4j.verbs.Access;
import dev.verbs4j.verbs.CompletionQueue;
import dev.verbs4j.verbs.QueuePairAttributes;
import dev.verbs4j.verbs.VerbsException;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
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
    /** The tags of work requests that are not receives from the connection's ring or its group's shared queue. */
    static final long SEND_TAGS = CompletionRouter.SEND_TAGS;
    /** Access of {@link #register(MemorySegment)}: local write, remote read and write. */
    static final int BUFFER_ACCESS = Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE;

    // the parts, all guarded by the one lock of the waiters
    private final ConnectionOptions options;
    private final CmId id;
    private final Lifecycle life;
    private final ConnectionResources res;
    private final Waiters waiters;
    private final SendRing sends;
    private final Receives receives;
    private final OneSidedOperations operations;
    private final Teardown teardown;
    private byte[] peerPrivateData = new byte[0];
    private InetSocketAddress localAddress;

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
        CreditWindow window = new CreditWindow(options.receiveDepth(), options.postedReceives());
        this.life = new Lifecycle(id);
        // held from the queue pair's creation until it is attached: see RdmaEndpointGroup.queuePairGone
        ReentrantLock creating = group == null ? null : group.queuePairLock();
        if (creating != null) {
            creating.lock();
        }
        try {
            this.res = new ConnectionResources(id, options, group, this);
            this.waiters = new Waiters(res, life, events);
            this.sends = new SendRing(options, res, life, waiters, window);
            this.receives = new Receives(options, res, life, waiters, window, sends);
            this.operations = new OneSidedOperations(options, res, life, waiters, window);
            waiters.progressBy(new CompletionRouter(life, sends, receives, operations));
            this.teardown = new Teardown(this, id, options.linger(), life, res, waiters, sends, receives, operations);
            res.attach(id, this); // last: from here on the group may hand completions over
        } finally {
            if (creating != null) {
                creating.unlock();
            }
        }
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
        return ActiveConnect.connect(remote, local, options, timeout, group);
    }

    /** {@link #connect(InetSocketAddress, InetSocketAddress, ConnectionOptions, Duration)} with default options. */
    public static RdmaConnection connect(InetSocketAddress remote, Duration timeout) throws RdmaConnectionException {
        return connect(remote, null, null, timeout);
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
        return life.peer();
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
        waiters.lock.lock();
        try {
            return life.state() == Lifecycle.State.OPEN;
        } finally {
            waiters.lock.unlock();
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
        sends.send(message, timeout);
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
        return sends.trySend(message);
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
        sends.flush(timeout);
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
        return receives.receive(buffer, timeout);
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
        return receives.messages.receive(timeout);
    }

    /**
     * Receives the next message into {@code buffer} if one has arrived, without blocking.
     *
     * @return the message's length, {@link #WOULD_BLOCK} when none is there, or {@link
     *         #END_OF_STREAM}
     */
    public int tryReceive(MemorySegment buffer) throws RdmaConnectionException {
        requirePosted("tryReceive", false);
        return receives.tryReceive(buffer);
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
        return sends.sendAsync(message);
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
        return receives.messages.receiveAsync();
    }

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
        waiters.lock.lock();
        try {
            if (life.closing()) {
                throw new IllegalStateException("register: the connection is closed");
            }
        } finally {
            waiters.lock.unlock();
        }
        return RegisteredBuffer.register(res.pd, segment, access);
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
        return operations.submit(new BufferOperation(BufferOperation.Kind.WRITE, local, offset, length, remote, remoteOffset, 0));
    }

    /**
     * RDMA WRITE with immediate: as {@link #writeAsync}, and the peer's application then takes
     * {@code immediate} and the byte count with {@link #receiveImmediate}. It consumes one of the
     * peer's receives, so it needs a credit, as a message does, and waits for one (see the flow
     * control in the class documentation).
     */
    public CompletableFuture<Void> writeWithImmediateAsync(RegisteredBuffer local, long offset, int length,
                                                           RemoteBuffer remote, long remoteOffset, int immediate) {
        return operations.submit(new BufferOperation(BufferOperation.Kind.WRITE_WITH_IMMEDIATE, local, offset, length,
                remote, remoteOffset, immediate));
    }

    /**
     * RDMA READ of {@code length} bytes of {@code remote} from {@code remoteOffset} into {@code
     * local} from {@code offset}: the future completes once the data is in {@code local}.
     * Otherwise as {@link #writeAsync}.
     */
    public CompletableFuture<Void> readAsync(RegisteredBuffer local, long offset, int length, RemoteBuffer remote,
                                             long remoteOffset) {
        return operations.submit(new BufferOperation(BufferOperation.Kind.READ, local, offset, length, remote, remoteOffset, 0));
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
        sends.checkSize(length);
        return operations.submit(new BufferOperation(BufferOperation.Kind.SEND, buffer, offset, length, null, 0, 0));
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
        OneSidedOperations.await(writeAsync(local, offset, length, remote, remoteOffset), timeout, "write");
    }

    /** {@link #writeWithImmediateAsync}, waiting up to {@code timeout}; see {@link #write}. */
    public void writeWithImmediate(RegisteredBuffer local, long offset, int length, RemoteBuffer remote,
                                   long remoteOffset, int immediate, Duration timeout) throws RdmaConnectionException {
        OneSidedOperations.await(writeWithImmediateAsync(local, offset, length, remote, remoteOffset, immediate), timeout,
                "writeWithImmediate");
    }

    /** {@link #readAsync}, waiting up to {@code timeout}; see {@link #write}. */
    public void read(RegisteredBuffer local, long offset, int length, RemoteBuffer remote, long remoteOffset,
                     Duration timeout) throws RdmaConnectionException {
        OneSidedOperations.await(readAsync(local, offset, length, remote, remoteOffset), timeout, "read");
    }

    /** {@link #sendAsync(RegisteredBuffer, long, int)}, waiting up to {@code timeout}; see {@link #write}. */
    public void send(RegisteredBuffer buffer, long offset, int length, Duration timeout) throws RdmaConnectionException {
        OneSidedOperations.await(sendAsync(buffer, offset, length), timeout, "send");
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
        return receives.immediates.receive(timeout);
    }

    /**
     * {@link #receiveImmediate} without a waiting thread: completes with the next immediate, or
     * null at end of stream; at most {@link ConnectionOptions#receiveDepth()} wait. See the class
     * documentation for futures.
     */
    public CompletableFuture<ImmediateData> receiveImmediateAsync() {
        return receives.immediates.receiveAsync();
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
        receives.postReceive(buffer, offset, length);
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
        return receives.buffers.receive(timeout);
    }

    /**
     * {@link #receiveBuffer} without a waiting thread: completes with the next message's buffer,
     * or null at end of stream; at most {@link ConnectionOptions#receiveDepth()} + 1 wait. See the
     * class documentation for futures.
     */
    public CompletableFuture<ReceivedBuffer> receiveBufferAsync() {
        requirePosted("receiveBufferAsync", true);
        return receives.buffers.receiveAsync();
    }

    /** The connection parameters of both sides of a connect, with {@code privateData}. */
    static ConnectionParameters parameters(byte[] privateData) {
        return ActiveConnect.parameters(privateData);
    }

    /**
     * Called once the connection is established; {@code channel} is the connection's own event
     * channel, {@code requestData} the private data of the connection request (server side) or null.
     */
    void established(CmEvent event, EventChannel channel, byte[] requestData) {
        waiters.lock.lock();
        try {
            waiters.established(channel);
            this.peerPrivateData = requestData != null ? requestData.clone() : event.privateData();
            this.localAddress = id.localAddress();
            life.established(id.peerAddress());
            sends.returnCredits();
        } finally {
            waiters.lock.unlock();
        }
        try {
            res.qp.modify(new QueuePairAttributes().minRnrTimer(options.minRnrTimer()));
        } catch (VerbsException e) {
            LOG.log(System.Logger.Level.DEBUG, "keeping the connection manager's RNR timer: {0}", e.getMessage());
        }
    }

    CmId id() {
        return id;
    }

    private void requirePosted(String what, boolean posted) {
        if (options.postedReceives() != posted) {
            throw new IllegalStateException(what + (posted
                    ? ": the connection receives into its ring (use receive), not into posted buffers"
                    : ": the connection receives into posted buffers (ConnectionOptions.postedReceives); use receiveBuffer"));
        }
    }

    /** Completions the group's poller took for this connection; see {@link Waiters#deliver}. */
    void deliver(List<Completion> batch) {
        waiters.deliver(batch);
    }

    /** The completion queue the connection's queue pair uses (its own, or its group's). */
    CompletionQueue completionQueue() {
        return res.cq;
    }

    /** The flow control's and the queues' state, for diagnostics. */
    String flowState() {
        waiters.lock.lock();
        try {
            return sends.window + "; " + receives + ", free send slots " + sends.freeSlots() + ", " + operations
                    + ", state " + life + waiters;
        } finally {
            waiters.lock.unlock();
        }
    }

    /** The group of the connection, or null. */
    public RdmaEndpointGroup group() {
        return res.group;
    }

    /**
     * Closes the connection: waits up to {@link ConnectionOptions#linger()} for sends in flight,
     * disconnects, wakes every thread blocked on the connection (they get a CLOSED exception),
     * and frees the connection's resources. Idempotent; never throws.
     */
    @Override
    public void close() {
        teardown.close();
    }

    /** Frees everything: the id (and its queue pair), the rings, the queues, the channels. */
    void release() {
        teardown.release();
    }

    @Override
    public String toString() {
        return "RdmaConnection " + localAddress + " -> " + life.peer();
    }

    static byte[] bytes(MemorySegment s) {
        return s.toArray(ValueLayout.JAVA_BYTE);
    }
}
