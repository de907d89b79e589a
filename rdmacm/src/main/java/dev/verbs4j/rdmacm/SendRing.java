package dev.verbs4j.rdmacm;

import dev.verbs4j.verbs.Opcode;
import dev.verbs4j.verbs.SendFlags;
import dev.verbs4j.verbs.VerbsException;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;

/**
 * The message send side of an {@link RdmaConnection}: the registered send ring's slots, the
 * credits that let a message go ({@link CreditWindow}), the credit updates this side sends, and
 * the send futures waiting for a slot and a credit. A message is copied into a free slot and
 * posted as a SEND_WITH_IMM carrying the credits owed; its slot is free again when its send
 * completes. Not thread-safe: the connection's lock guards it. Owns no memory (the ring is the
 * {@link ConnectionResources}').
 */
final class SendRing {

    private static final System.Logger LOG = System.getLogger(RdmaConnection.class.getName());
    /** The tag of a message's send; its low 32 bits are the slot. */
    static final long SEND_TAG = 1L << 40;
    /** The tag of a credit update's send. */
    static final long CONTROL_TAG = 1L << 41;

    private final ConnectionResources res;
    private final Lifecycle life;
    private final Waiters waiters;
    final CreditWindow window;
    private final int depth;
    private final ArrayDeque<Integer> freeSlots = new ArrayDeque<>();
    /** The {@link RdmaConnection#sendAsync} futures waiting for a slot and a credit, oldest first. */
    private final ArrayDeque<AsyncOp<Void>> waiting = new ArrayDeque<>();

    SendRing(ConnectionOptions options, ConnectionResources res, Lifecycle life, Waiters waiters, CreditWindow window) {
        this.res = res;
        this.life = life;
        this.waiters = waiters;
        this.window = window;
        this.depth = options.sendDepth();
        for (int i = 0; i < depth; i++) {
            freeSlots.add(i);
        }
    }

    void checkSize(long size) {
        if (size > res.slot) {
            throw new IllegalArgumentException("a message of " + size + " bytes exceeds maxMessageSize " + res.slot);
        }
    }

    /** Whether a message may be posted now: no send future waits before it, a slot is free, a credit is held. */
    private boolean ready() {
        return waiting.isEmpty() && !freeSlots.isEmpty() && window.canSend();
    }

    /** Sends in flight: slots not free. */
    int inFlight() {
        return depth - freeSlots.size();
    }

    void send(MemorySegment message, Duration timeout) throws RdmaConnectionException {
        checkSize(message.byteSize());
        long deadline = waiters.enter(timeout);
        try {
            while (true) {
                waiters.progress();
                life.checkSendable("send");
                if (ready()) {
                    post(message);
                    return;
                }
                if (!waiters.await(deadline)) {
                    throw new RdmaTimeoutException(!window.canSend()
                            ? "send: the peer posted no receive for another message within " + timeout
                            : "send: no send slot free within " + timeout + " (" + depth + " sends in flight)");
                }
            }
        } finally {
            waiters.leave();
        }
    }

    boolean trySend(MemorySegment message) throws RdmaConnectionException {
        checkSize(message.byteSize());
        waiters.enter();
        try {
            waiters.progress();
            life.checkSendable("trySend");
            if (!ready()) {
                return false;
            }
            post(message);
            return true;
        } finally {
            waiters.leave();
        }
    }

    void flush(Duration timeout) throws RdmaConnectionException {
        long deadline = waiters.enter(timeout);
        try {
            while (true) {
                waiters.progress();
                if (inFlight() == 0 && waiting.isEmpty()) {
                    return;
                }
                life.checkSendable("flush");
                if (!waiters.await(deadline)) {
                    throw new RdmaTimeoutException("flush: " + inFlight() + " sends still in flight after " + timeout);
                }
            }
        } finally {
            waiters.leave();
        }
    }

    CompletableFuture<Void> sendAsync(MemorySegment message) {
        checkSize(message.byteSize());
        AsyncOp<Void> op = new AsyncOp<>(waiters);
        waiters.lock.lock();
        try {
            waiters.progress();
            try {
                life.checkSendable("sendAsync");
                if (ready()) {
                    post(message);
                    return op.finishNow(null);
                }
            } catch (RdmaConnectionException e) {
                return op.failNow(e);
            }
            if (waiting.size() >= depth) {
                return op.failNow(new IllegalStateException("sendAsync: " + waiting.size()
                        + " send futures already wait for a slot and a credit (at most sendDepth); wait for one first"));
            }
            op.message = RdmaConnection.bytes(message);
            op.queueIn(waiting);
            waiters.serveAsync();
        } finally {
            waiters.unlockAndDeliver();
        }
        return op;
    }

    /** Posts the waiting send futures' messages while slots and credits allow. */
    void serve() {
        while (!waiting.isEmpty()) {
            AsyncOp<Void> op = waiting.peekFirst();
            try {
                life.checkSendable("sendAsync");
                if (freeSlots.isEmpty() || !window.canSend()) {
                    break;
                }
                waiting.pollFirst();
                op.taken();
                post(MemorySegment.ofArray(op.message));
                op.finishLater(null);
            } catch (RdmaConnectionException e) {
                waiting.remove(op);
                op.failLater(e);
            }
        }
    }

    boolean futuresWait() {
        return !waiting.isEmpty();
    }

    /** Posts {@code message}: needs a free send slot and a credit. */
    private void post(MemorySegment message) throws RdmaConnectionException {
        int s = freeSlots.pollFirst();
        int len = (int) message.byteSize();
        MemorySegment.copy(message, 0, res.sendRing.segment(), (long) s * res.slot, len);
        int imm = window.messageImmediate();
        res.sendRequests.reset(0).wrId(SEND_TAG | s).opcode(Opcode.SEND_WITH_IMM).flags(SendFlags.SIGNALED)
                .immediateData(imm).sge(res.sendRing, (long) s * res.slot, len);
        try {
            res.qp.postSend(res.sendRequests, 1);
        } catch (VerbsException e) {
            freeSlots.addFirst(s);
            waiters.progress();
            life.checkSendable("send");
            throw RdmaConnectionException.of(e, "send to " + life.peer());
        }
        window.messageSent(imm);
    }

    /**
     * Sends a credit update when enough receives wait to be returned and the peer has its
     * reserved receive free for it.
     */
    void returnCredits() {
        if (!window.updateDue() || life.state() != Lifecycle.State.OPEN) {
            return;
        }
        int imm = window.updateImmediate();
        res.sendRequests.reset(0).wrId(CONTROL_TAG).opcode(Opcode.SEND_WITH_IMM).flags(SendFlags.SIGNALED)
                .immediateData(imm);
        try {
            res.qp.postSend(res.sendRequests, 1);
        } catch (VerbsException e) {
            // the queue pair went to the error state: the CM event or the flush tells why
            LOG.log(System.Logger.Level.DEBUG, "credit update not sent: {0}", e.getMessage());
            return;
        }
        window.updateSent(imm);
    }

    /** A send of the ring completed (in any status): its slot, or the update credit's send, is free again. */
    void onCompletion(long wrId) {
        if ((wrId & CONTROL_TAG) != 0) {
            window.updateCompleted();
        } else {
            freeSlots.addLast((int) (wrId & 0xffff_ffffL));
        }
    }

    int freeSlots() {
        return freeSlots.size();
    }
}
