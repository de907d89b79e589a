package dev.verbs4j.rdmacm;

import dev.verbs4j.verbs.VerbsException;
import dev.verbs4j.verbs.WcOpcode;
import dev.verbs4j.verbs.WcStatus;
import dev.verbs4j.verbs.WorkCompletion;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.HashMap;

/**
 * The receive side of an {@link RdmaConnection}: its receives (slots of the receive ring, of its
 * group's shared queue, or buffers the application posted), what their completions bring (a
 * message, the peer's write with immediate, a credit update), the three {@link InboundQueue}s
 * they feed, and the posting again of each receive once what it holds was taken, which returns
 * it to the peer as a credit. Not thread-safe: the connection's lock guards it. Owns no memory;
 * posted buffers stay the application's.
 */
final class Receives {

    private static final System.Logger LOG = System.getLogger(RdmaConnection.class.getName());
    /** The tag of a posted buffer's receive; its low 32 bits are the buffer's id. */
    static final long POSTED_TAG = 1L << 43;

    /** A message in receive slot {@code slot} of the ring (or the group's shared slots). */
    record RingMessage(int slot, int length) {
    }

    /**
     * A write with immediate of the peer, holding its receive until taken: ring (or shared) slot
     * {@code slot} when {@code posted} is null, else the posted buffer {@code posted} of id {@code postedId}.
     */
    record ArrivedImmediate(ImmediateData data, int slot, ReceivedBuffer posted, int postedId) {
    }

    /** With posted receives, the ring's one receive (for the peer's first credit update): posted, used and not yet replaced by a posted buffer, or replaced. */
    private enum Reserve { POSTED, MISSING, REPLACED }

    private final ConnectionOptions options;
    private final ConnectionResources res;
    private final Lifecycle life;
    private final Waiters waiters;
    private final CreditWindow window;
    private final SendRing sends;
    final InboundQueue<RingMessage, byte[]> messages;
    final InboundQueue<ArrivedImmediate, ImmediateData> immediates;
    final InboundQueue<ReceivedBuffer, ReceivedBuffer> buffers;
    /** Posted buffers whose receive is posted, by id. */
    private final HashMap<Integer, ReceivedBuffer> postedBuffers = new HashMap<>();
    private int nextPostedId;
    /** Posted buffers that a message has not used yet. */
    private int postedCount;
    private Reserve reserve = Reserve.POSTED;

    Receives(ConnectionOptions options, ConnectionResources res, Lifecycle life, Waiters waiters, CreditWindow window,
             SendRing sends) {
        this.options = options;
        this.sends = sends;
        int depth = options.receiveDepth();
        this.messages = new InboundQueue<>(life, waiters, this::copyOut, new InboundQueue.Texts("receive", "message",
                "receive futures already wait for a message (at most receiveDepth)"), depth);
        this.immediates = new InboundQueue<>(life, waiters, this::takeImmediate, new InboundQueue.Texts(
                "receiveImmediate", "write with immediate", "futures already wait (at most receiveDepth)"), depth);
        this.buffers = new InboundQueue<>(life, waiters, b -> b, new InboundQueue.Texts("receiveBuffer", "message",
                "futures already wait (at most receiveDepth + 1)"), depth + 1);
        this.res = res;
        this.life = life;
        this.waiters = waiters;
        this.window = window;
    }

    /** Waits up to {@code timeout} for the next message and copies it into {@code buffer}: its length, or END_OF_STREAM. */
    int receive(MemorySegment buffer, Duration timeout) throws RdmaConnectionException {
        long deadline = waiters.enter(timeout);
        try {
            while (true) {
                waiters.progress();
                int n = take(buffer, "receive");
                if (n != RdmaConnection.WOULD_BLOCK) {
                    return n;
                }
                if (!waiters.await(deadline)) {
                    throw new RdmaTimeoutException("receive: no message within " + timeout);
                }
            }
        } finally {
            waiters.leave();
        }
    }

    int tryReceive(MemorySegment buffer) throws RdmaConnectionException {
        waiters.enter();
        try {
            waiters.progress();
            return take(buffer, "tryReceive");
        } finally {
            waiters.leave();
        }
    }

    /** The next message into {@code buffer}, END_OF_STREAM, or WOULD_BLOCK; throws when closed or failed. */
    private int take(MemorySegment buffer, String what) throws RdmaConnectionException {
        life.checkNotClosed(what);
        RingMessage head = messages.peek();
        if (head != null) {
            int len = head.length();
            if (len > buffer.byteSize()) {
                throw new IllegalArgumentException("the next message has " + len + " bytes, the buffer only " + buffer.byteSize());
            }
            MemorySegment.copy(res.receiveRing.segment(), (long) head.slot() * res.slot, buffer, 0, len);
            messages.poll();
            repostTaken(head.slot());
            return len;
        }
        return life.endOfStream(what) ? RdmaConnection.END_OF_STREAM : RdmaConnection.WOULD_BLOCK;
    }

    private byte[] copyOut(RingMessage m) {
        byte[] data = new byte[m.length()];
        MemorySegment.copy(res.receiveRing.segment(), (long) m.slot() * res.slot, MemorySegment.ofArray(data), 0, m.length());
        repostTaken(m.slot());
        return data;
    }

    private ImmediateData takeImmediate(ArrivedImmediate i) {
        if (i.posted() == null) {
            repostTaken(i.slot());
        } else if (life.state() == Lifecycle.State.OPEN && postBuffer(i.postedId(), i.posted())) {
            window.receiveReposted();
            sends.returnCredits();
        } else {
            postedCount--;
        }
        return i.data();
    }

    /** A ring slot's message or immediate was taken: the slot is posted again and owed as a credit. */
    private void repostTaken(int s) {
        if (res.giveBack(s, life.state() == Lifecycle.State.OPEN)) {
            window.receiveReposted();
            sends.returnCredits();
        }
    }

    /** See {@link RdmaConnection#postReceive}. */
    void postReceive(RegisteredBuffer buffer, long offset, int length) throws RdmaConnectionException {
        if (!options.postedReceives()) {
            throw new IllegalStateException("postReceive: the connection receives into its ring; open it with"
                    + " ConnectionOptions.withPostedReceives(true) to receive into posted buffers");
        }
        OneSidedOperations.checkBuffer(buffer, offset, length, "postReceive", res.pd);
        if (length < 1) {
            throw new IllegalArgumentException("postReceive: length must be positive, got " + length);
        }
        waiters.lock.lock();
        try {
            life.checkSendable("postReceive");
            int max = options.receiveDepth() + CreditWindow.CONTROL_SLOTS - (reserve == Reserve.POSTED ? 1 : 0);
            if (postedCount >= max) {
                throw new IllegalStateException("postReceive: " + postedCount + " buffers are posted already (at most "
                        + max + ": receiveDepth and one for the peer's credit updates)");
            }
            int id = nextPostedId++;
            if (!postBuffer(id, new ReceivedBuffer(buffer, offset, length))) {
                life.checkSendable("postReceive");
                throw new IllegalStateException("postReceive: the queue pair takes no receives");
            }
            postedCount++;
            if (reserve == Reserve.MISSING) {
                reserve = Reserve.REPLACED;
                window.updateReceiveReposted();
            } else {
                window.receiveReposted();
            }
            sends.returnCredits();
        } finally {
            waiters.unlockAndDeliver();
        }
    }

    /** Posts the receive of a posted buffer; false when the queue pair no longer takes receives or the buffer is closed. */
    private boolean postBuffer(int id, ReceivedBuffer entry) {
        try {
            res.receiveRequests.get(0).wrId(POSTED_TAG | (id & 0xffff_ffffL)).sge(entry.buffer().region(), entry.offset(),
                    entry.length());
            res.qp.postReceive(res.receiveRequests, 1);
        } catch (VerbsException | IllegalStateException e) {
            LOG.log(System.Logger.Level.DEBUG, "posted receive not posted: {0}", e.getMessage());
            return false;
        }
        postedBuffers.put(id, entry);
        return true;
    }

    /** A completion of receive slot {@code s}: a message, a write with immediate, or a credit update. */
    void onRingCompletion(int s, WcStatus status, WcOpcode opcode, int byteLength, int immediate, int flags) {
        if (status != WcStatus.SUCCESS) {
            if (res.shared) {
                // the failed receive used a shared slot: it goes back to the group's queue
                res.group.repostShared(s);
            }
            life.completedInError(status, "receive from");
            return;
        }
        if (opcode == WcOpcode.RECV_RDMA_WITH_IMM) {
            // the peer's write with immediate: its receive is held until the application takes it
            immediates.add(new ArrivedImmediate(new ImmediateData(immediate, byteLength), s, null, 0));
            window.immediateReceived();
            return;
        }
        int imm = (flags & WorkCompletion.FLAG_WITH_IMM) != 0 ? immediate : 0;
        if (window.received(imm)) {
            if (options.postedReceives()) {
                // the ring's one receive took the peer's first update: the next posted buffer replaces it
                reserve = Reserve.MISSING;
            } else if (res.giveBack(s, life.live())) {
                // the peer's update may arrive before this side saw ESTABLISHED
                window.updateReceiveReposted();
            }
        } else {
            messages.add(new RingMessage(s, byteLength));
        }
    }

    /** A completion of a posted buffer's receive: a message, a write with immediate, or a credit update. */
    void onPostedCompletion(int id, WcStatus status, WcOpcode opcode, int byteLength, int immediate, int flags) {
        ReceivedBuffer entry = postedBuffers.remove(id);
        if (status != WcStatus.SUCCESS) {
            postedCount--;
            life.completedInError(status, "receive from");
            return;
        }
        if (opcode == WcOpcode.RECV_RDMA_WITH_IMM) {
            immediates.add(new ArrivedImmediate(new ImmediateData(immediate, byteLength), 0, entry, id));
            window.immediateReceived();
            return;
        }
        int imm = (flags & WorkCompletion.FLAG_WITH_IMM) != 0 ? immediate : 0;
        if (window.received(imm)) {
            // a credit update used the buffer without writing into it: posted again at once
            if (life.live() && postBuffer(id, entry)) {
                window.updateReceiveReposted();
            } else {
                postedCount--;
            }
            return;
        }
        postedCount--;
        buffers.add(new ReceivedBuffer(entry.buffer(), entry.offset(), byteLength));
    }

    /** Serves the futures of the three queues, in this order: messages, posted buffers, immediates. */
    void serve() {
        messages.serve();
        buffers.serve();
        immediates.serve();
    }

    boolean futuresWait() {
        return messages.futuresWait() || buffers.futuresWait() || immediates.futuresWait();
    }

    /** On release in a group with a shared receive queue: the shared slots still held (messages and immediates not taken) go back. */
    void returnSharedSlots() {
        messages.clear(m -> res.group.repostShared(m.slot()));
        immediates.clear(i -> {
            if (i.posted() == null) {
                res.group.repostShared(i.slot());
            }
        });
    }

    @Override
    public String toString() {
        return "arrived " + messages.size() + ", immediates " + immediates.size();
    }
}
