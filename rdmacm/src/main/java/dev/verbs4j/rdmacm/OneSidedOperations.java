package dev.verbs4j.rdmacm;

import dev.verbs4j.verbs.ProtectionDomain;
import dev.verbs4j.verbs.SendFlags;
import dev.verbs4j.verbs.SendRequest;
import dev.verbs4j.verbs.VerbsException;
import dev.verbs4j.verbs.WcStatus;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.LinkedHashMap;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The operations of an {@link RdmaConnection} on {@link RegisteredBuffer}s: one-sided RDMA
 * WRITE, WRITE with immediate and READ to and from a peer's {@link RemoteBuffer}, and zero-copy
 * sends. Checks their ranges before anything is posted, queues them while the operation budget
 * ({@code sendDepth} outstanding) or the credits do not allow them, posts them, and completes
 * their futures with their work completions. Not thread-safe: the connection's lock guards it.
 * Owns no memory; it keeps the buffers of outstanding operations reachable.
 */
final class OneSidedOperations {

    /** The tag of a buffer operation's work request; its low 40 bits count the operations. */
    static final long OP_TAG = 1L << 42;

    private final ConnectionResources res;
    private final Lifecycle life;
    private final Waiters waiters;
    private final CreditWindow window;
    private final int depth;
    /** Operations not posted yet (no free operation slot, or no credit), oldest first. */
    private final ArrayDeque<AsyncOp<Void>> waiting = new ArrayDeque<>();
    /** Operations posted and not completed, by work request id. */
    private final LinkedHashMap<Long, AsyncOp<Void>> outstanding = new LinkedHashMap<>();
    private long nextOpId;

    OneSidedOperations(ConnectionOptions options, ConnectionResources res, Lifecycle life, Waiters waiters,
                       CreditWindow window) {
        this.res = res;
        this.life = life;
        this.waiters = waiters;
        this.window = window;
        this.depth = options.sendDepth();
    }

    /** Checks {@code operation}'s ranges and queues it; its future completes with its work completion. */
    CompletableFuture<Void> submit(BufferOperation operation) {
        String what = operation.kind().verb;
        checkBuffer(operation.buffer(), operation.offset(), operation.length(), what, res.pd);
        if (operation.kind() != BufferOperation.Kind.SEND) {
            Objects.requireNonNull(operation.remote(), "remote buffer");
            operation.remote().checkRange(operation.remoteOffset(), operation.length(), what);
        }
        AsyncOp<Void> op = new AsyncOp<>(waiters);
        op.operation = operation;
        waiters.lock.lock();
        try {
            waiters.progress();
            try {
                life.checkSendable(what);
            } catch (RdmaConnectionException e) {
                return op.failNow(e);
            }
            if (waiting.size() >= depth) {
                return op.failNow(new IllegalStateException(what + ": " + outstanding.size() + " buffer operations are"
                        + " outstanding and " + waiting.size() + " wait to be posted (at most sendDepth each); wait for one first"));
            }
            op.queueIn(waiting);
            waiters.serveAsync();
        } finally {
            waiters.unlockAndDeliver();
        }
        return op;
    }

    /** Checks a local buffer and range for {@code what}: not null, of domain {@code pd}, inside the buffer, open. */
    static void checkBuffer(RegisteredBuffer buffer, long offset, int length, String what, ProtectionDomain pd) {
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

    /** Waits up to {@code timeout} for an operation's future; a timeout withdraws it when it was not posted yet. */
    static void await(CompletableFuture<Void> f, Duration timeout, String what) throws RdmaConnectionException {
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

    /** Posts the waiting operations while the budget and the credits allow. */
    void serve() {
        while (!waiting.isEmpty()) {
            AsyncOp<Void> op = waiting.peekFirst();
            BufferOperation o = op.operation;
            try {
                life.checkSendable(o.kind().verb);
                if (outstanding.size() >= depth || o.kind().needsCredit() && !window.canSend()) {
                    break;
                }
                waiting.pollFirst();
                op.taken();
                post(op);
            } catch (RdmaConnectionException | RuntimeException e) {
                waiting.remove(op);
                op.failLater(e);
            }
        }
    }

    /** Posts a buffer operation: needs an operation slot, and a credit when it consumes a peer's receive. */
    private void post(AsyncOp<Void> op) throws RdmaConnectionException {
        BufferOperation o = op.operation;
        long wrId = OP_TAG | (nextOpId++ & 0xff_ffff_ffffL);
        SendRequest r = res.sendRequests.reset(0).wrId(wrId).opcode(o.kind().opcode).flags(SendFlags.SIGNALED);
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
            res.qp.postSend(res.sendRequests, 1);
        } catch (VerbsException e) {
            life.checkSendable(o.kind().verb);
            throw RdmaConnectionException.of(e, o.kind().verb + " to " + life.peer());
        }
        outstanding.put(wrId, op);
        if (o.kind() == BufferOperation.Kind.SEND) {
            window.messageSent(imm);
        } else if (o.kind() == BufferOperation.Kind.WRITE_WITH_IMMEDIATE) {
            window.immediateSent();
        }
    }

    /** An operation completed: its future completes, or fails (a flush ends the connection, another error breaks it). */
    void onCompletion(long wrId, WcStatus status) {
        AsyncOp<Void> op = outstanding.remove(wrId);
        String what = op != null ? op.operation.kind().verb : "operation";
        if (status == WcStatus.SUCCESS) {
            if (op != null) {
                op.finishLater(null);
            }
            return;
        }
        RdmaConnectionException e = life.completedInError(status, what + " to");
        if (op != null) {
            op.failLater(e != null ? e : life.failure(what));
        }
    }

    boolean futuresWait() {
        return !waiting.isEmpty() || !outstanding.isEmpty();
    }

    /** On close, once the queue pair is destroyed (the device no longer touches their buffers): the outstanding operations fail CLOSED. */
    void failOutstanding() {
        for (AsyncOp<Void> op : outstanding.values()) {
            op.failLater(RdmaConnectionException.closed(op.operation.kind().verb));
        }
        outstanding.clear();
    }

    @Override
    public String toString() {
        return "operations outstanding " + outstanding.size() + ", waiting " + waiting.size();
    }
}
