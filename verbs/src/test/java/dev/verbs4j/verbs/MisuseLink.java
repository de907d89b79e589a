package dev.verbs4j.verbs;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Two queue pairs of one type on the loopback device for the data-path misuse cases: {@code a}
 * sends (completing on {@code sendCq}) to {@code b} (completing on {@code recvCq}), RC and UC
 * connected to each other, UD through an address handle to {@code b}. One protection domain
 * holds them, a 64 KiB region for each side and the address handle. {@link #reconnect()} brings
 * both back to RTS after an error completion.
 */
final class MisuseLink implements AutoCloseable {

    /** Receive buffers of UD queue pairs start with the 40-byte GRH. */
    static final int GRH = 40;

    /** What a completion said, copied out of the completion array. */
    record Completion(long wrId, WcStatus status, WcOpcode opcode, int byteLength) {
        boolean ok() {
            return status == WcStatus.SUCCESS;
        }
    }

    final QpType type;
    final TestBed.Host host = TestBed.loopback();
    final Context ctx;
    final ProtectionDomain pd;
    final CompletionQueue sendCq;
    final CompletionQueue recvCq;
    final QueuePair a;
    final QueuePair b;
    final MemoryRegion mrA;
    final MemoryRegion mrB;
    final AddressHandle ah;
    /** The shared receive queue {@code b} takes its buffers from, or null. */
    final SharedReceiveQueue srq;
    private final WorkCompletions wcs = new WorkCompletions(16);

    private MisuseLink(QpType type, Consumer<QueuePairInit> tweak, Function<Context, CompletionQueue> sendCq, boolean withSrq) {
        this.type = type;
        this.ctx = Context.open(host.device());
        try {
            this.pd = ctx.allocateProtectionDomain();
            this.sendCq = sendCq.apply(ctx);
            this.recvCq = ctx.createCompletionQueue(256);
            QueuePairInit initA = QueuePairInit.of(type, this.sendCq).maxSendWr(64).maxRecvWr(64).maxSendSge(2).maxRecvSge(2)
                    .maxInlineData(MisuseFixture.INLINE);
            tweak.accept(initA);
            this.a = pd.createQueuePair(initA);
            this.srq = withSrq ? pd.createSharedReceiveQueue(64, 2) : null;
            this.b = pd.createQueuePair(QueuePairInit.of(type, recvCq).maxSendWr(64).maxRecvWr(64).maxSendSge(2).maxRecvSge(2)
                    .maxInlineData(MisuseFixture.INLINE).sharedReceiveQueue(srq));
            this.mrA = pd.allocateRegion(MisuseFixture.REGION, MisuseFixture.ACCESS);
            this.mrB = pd.allocateRegion(MisuseFixture.REGION, MisuseFixture.ACCESS);
            this.ah = type == QpType.UD ? pd.createAddressHandle(destination()) : null;
            connect();
        } catch (RuntimeException | Error e) {
            ctx.close();
            throw e;
        }
    }

    /** A connected link of {@code type}. */
    static MisuseLink open(QpType type) {
        return new MisuseLink(type, init -> { }, c -> c.createCompletionQueue(256), false);
    }

    /** A connected link whose sender was created with {@code tweak} applied (e.g. send operations). */
    static MisuseLink open(QpType type, Consumer<QueuePairInit> tweak) {
        return new MisuseLink(type, tweak, c -> c.createCompletionQueue(256), false);
    }

    /** A connected link whose sender completes on the queue {@code sendCq} makes (e.g. an extended one). */
    static MisuseLink open(QpType type, Consumer<QueuePairInit> tweak, Function<Context, CompletionQueue> sendCq) {
        return new MisuseLink(type, tweak, sendCq, false);
    }

    /** A connected RC link whose receiver {@code b} takes its buffers from a shared receive queue. */
    static MisuseLink openWithSrq() {
        return new MisuseLink(QpType.RC, init -> { }, c -> c.createCompletionQueue(256), true);
    }

    AddressVector destination() {
        return AddressVector.global(1, ctx.queryGid(1, host.gidIndex()), host.gidIndex());
    }

    private void connect() {
        int gid = host.gidIndex();
        if (type == QpType.UD) {
            for (QueuePair qp : new QueuePair[]{a, b}) {
                qp.init(1);
                qp.readyToReceive();
                qp.readyToSend(0);
            }
        } else {
            connectToEachOther(a, b, gid, 0x100, 0x200);
        }
    }

    /**
     * Connects the fresh connected-mode queue pairs {@code a} and {@code b} to each other on port
     * 1 through GID {@code gid}, the two stepping through INIT, RTR and RTS side by side; {@code a}
     * sends from PSN {@code psnA}, {@code b} from {@code psnB}.
     */
    static void connectToEachOther(QueuePair a, QueuePair b, int gid, int psnA, int psnB) {
        QueuePairEndpoint ea = a.localEndpoint(gid, psnA);
        QueuePairEndpoint eb = b.localEndpoint(gid, psnB);
        a.init(1);
        b.init(1);
        a.readyToReceive(eb, gid);
        b.readyToReceive(ea, gid);
        a.readyToSend(psnA);
        b.readyToSend(psnB);
    }

    /** Back to RTS after an error: both queue pairs reset (their requests flushed away) and connected again. */
    void reconnect() {
        a.reset();
        b.reset();
        drain(sendCq);
        drain(recvCq);
        connect();
    }

    /** Makes {@code r} reach {@code b}: the UD destination, or nothing for connected types. */
    SendRequest toB(SendRequest r) {
        return type == QpType.UD ? r.ud(ah, b.qpNum(), QueuePair.DEFAULT_QKEY) : r;
    }

    /** Where a receive of {@code length} payload bytes lands in a receive buffer (after the GRH on UD). */
    int receiveLength(int length) {
        return type == QpType.UD ? GRH + length : length;
    }

    /** Posts one receive of {@code length} payload bytes at {@code offset} of {@code mr} for {@code b}. */
    void postReceive(MemoryRegion mr, long offset, int length, long wrId) {
        try (ReceiveRequests r = new ReceiveRequests(1, 1)) {
            r.get(0).wrId(wrId).sge(mr, offset, receiveLength(length));
            postReceive(r);
        }
    }

    /** Posts the first request of {@code r} for {@code b}: on its shared receive queue, if it has one. */
    void postReceive(ReceiveRequests r) {
        if (srq != null) {
            srq.postReceive(r, 1);
        } else {
            b.postReceive(r, 1);
        }
    }

    /**
     * A post of a request that names the closed {@code closed}: it must be refused (an
     * IllegalStateException naming that type, or another clear refusal), or complete with an
     * error; a successful completion is silent success. Reconnects after an error.
     */
    void sendRefusedOrFailed(String what, Class<?> closed, MisuseExpect.Action post) {
        sendRefusedOrFailed(what, List.of(closed), post);
    }

    /** As {@link #sendRefusedOrFailed(String, Class, MisuseExpect.Action)}, where any of {@code closed} may be named. */
    void sendRefusedOrFailed(String what, List<Class<?>> closed, MisuseExpect.Action post) {
        Throwable t = MisuseExpect.thrownBy(() -> {
            post.run();
            return null;
        });
        if (t != null) {
            checkRefusal(what, closed, t);
            return;
        }
        Completion c = awaitOne(sendCq, what);
        if (c.ok()) {
            throw new AssertionError("silent success: " + what + " was posted and completed successfully although it names a closed "
                    + closed.get(0).getSimpleName());
        }
        MisuseExpect.note(what, "posted, completed with " + c.status());
        reconnect();
    }

    /**
     * A post of a receive that names the closed {@code closed}: it must be refused, or, once a
     * message arrives for it, complete with an error: a successful receive means the device wrote
     * into a closed region's memory. Reconnects afterwards.
     */
    void receiveRefusedOrFailed(String what, Class<?> closed, MisuseExpect.Action post) {
        Throwable t = MisuseExpect.thrownBy(() -> {
            post.run();
            return null;
        });
        if (t != null) {
            checkRefusal(what, List.of(closed), t);
            return;
        }
        messageMustNotLand(what + " and then receiving a message");
    }

    /** Sends a message to {@code b}, whose posted receive names a closed region: it must complete with an error. */
    void messageMustNotLand(String what) {
        send(0, 64, 0x5e4d);
        Completion c = awaitOne(recvCq, what);
        if (c.ok()) {
            throw new AssertionError(what + ": the receive completed successfully: the device wrote into the memory of a closed"
                    + " region");
        }
        MisuseExpect.note(what, "the receive completed with " + c.status());
        reconnect();
    }

    /** Whether {@code t} refuses clearly and, if an IllegalStateException, names {@code closed}. */
    static void checkRefusal(String what, List<Class<?>> closed, Throwable t) {
        if (!MisuseExpect.isClearRefusal(t)) {
            throw new AssertionError(what + " threw " + t + " instead of a clear refusal", t);
        }
        if (t instanceof IllegalStateException && closed.stream().noneMatch(c -> MisuseExpect.names(t.getMessage(), c))) {
            throw new AssertionError(what + ": the IllegalStateException does not name the closed " + closed.get(0).getSimpleName()
                    + ": " + t.getMessage(), t);
        }
        MisuseExpect.note(what, t);
    }

    /** Sends {@code length} bytes from {@code mrA} at {@code offset} to {@code b}, signaled, with {@code wrId}. */
    void send(long offset, int length, long wrId) {
        try (SendRequests s = new SendRequests(1, 1)) {
            toB(s.reset(0).wrId(wrId).opcode(Opcode.SEND).flags(SendFlags.SIGNALED).sge(mrA, offset, length));
            a.postSend(s, 1);
        }
    }

    /** The next completion of {@code cq}, or null when none comes within {@code timeout}. */
    Completion await(CompletionQueue cq, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        try (WorkCompletions one = new WorkCompletions(1)) {
            while (System.nanoTime() < deadline) {
                if (cq.poll(one) == 1) {
                    WorkCompletion wc = one.get(0);
                    return new Completion(wc.wrId(), wc.status(), wc.isSuccess() ? wc.opcode() : null, wc.byteLength());
                }
                Thread.onSpinWait();
            }
        }
        return null;
    }

    /** The next completion of {@code cq}, failing when none comes within 10 s. */
    Completion awaitOne(CompletionQueue cq, String what) {
        Completion c = await(cq, Duration.ofSeconds(10));
        if (c == null) {
            throw new AssertionError("no completion within 10 s: " + what);
        }
        return c;
    }

    /** Takes every completion {@code cq} holds now. */
    List<Completion> drain(CompletionQueue cq) {
        List<Completion> all = new ArrayList<>();
        while (!cq.isClosed()) {
            int n = cq.poll(wcs);
            if (n == 0) {
                break;
            }
            for (int i = 0; i < n; i++) {
                WorkCompletion wc = wcs.get(i);
                all.add(new Completion(wc.wrId(), wc.status(), wc.isSuccess() ? wc.opcode() : null, wc.byteLength()));
            }
        }
        return all;
    }

    /** Fills {@code length} bytes at {@code offset} of {@code segment} with {@code value}. */
    static void fill(MemorySegment segment, long offset, int length, byte value) {
        segment.asSlice(offset, length).fill(value);
    }

    /** How many of the {@code length} bytes at {@code offset} equal {@code value}. */
    static int count(MemorySegment segment, long offset, int length, byte value) {
        int n = 0;
        for (int i = 0; i < length; i++) {
            if (segment.get(java.lang.foreign.ValueLayout.JAVA_BYTE, offset + i) == value) {
                n++;
            }
        }
        return n;
    }

    @Override
    public void close() {
        try {
            wcs.close();
        } finally {
            ctx.close();
        }
    }
}
