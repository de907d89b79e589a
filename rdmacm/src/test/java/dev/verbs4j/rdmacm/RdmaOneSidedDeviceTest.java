package dev.verbs4j.rdmacm;

import dev.verbs4j.verbs.RdmaArena;
import dev.verbs4j.verbs.TestBed;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

import static dev.verbs4j.rdmacm.RdmaConnectionFuturesDeviceTest.WAIT;
import static dev.verbs4j.rdmacm.RdmaConnectionFuturesDeviceTest.pair;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Registered buffers on an {@link RdmaConnection}: RDMA WRITE, WRITE with immediate and READ to a
 * peer's buffer described by a {@link RemoteBuffer} sent over the connection, with every byte
 * checked; immediates and messages taken apart in order; zero-copy sends; bounds errors; and
 * closing the connection or the buffer's arena while operations are outstanding.
 */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_1)
@Timeout(150)
class RdmaOneSidedDeviceTest {

    static final Duration T = Duration.ofSeconds(20);
    static final ConnectionOptions OPTIONS = ConnectionOptions.DEFAULT.withMaxMessageSize(4096).withDepths(4, 4)
            .withLinger(Duration.ZERO);

    static void fill(MemorySegment s, long offset, int length, int seed) {
        for (int i = 0; i < length; i++) {
            s.set(ValueLayout.JAVA_BYTE, offset + i, (byte) (seed * 31 + i * 7));
        }
    }

    static void check(MemorySegment s, long offset, int length, int seed) {
        for (int i = 0; i < length; i++) {
            if (s.get(ValueLayout.JAVA_BYTE, offset + i) != (byte) (seed * 31 + i * 7)) {
                throw new AssertionError("byte " + i + " of seed " + seed + " at offset " + offset);
            }
        }
    }

    /** The peer registers a buffer and tells the client about it over the connection. */
    static RemoteBuffer exchange(RdmaConnectionFuturesDeviceTest.Pair p, RegisteredBuffer peerBuffer) throws Exception {
        p.peer().send(peerBuffer.remote().toBytes(), T);
        return RemoteBuffer.fromBytes(p.client().receive(T));
    }

    /** One blocking receive of a connection, for {@link #takeInTurn}. */
    @FunctionalInterface
    interface Receive<R> {
        R take() throws RdmaConnectionException;
    }

    /** {@code n} results of {@code receive}, taken one after the other on a thread of {@code executor}. */
    static <R> CompletableFuture<List<R>> takeInTurn(int n, Receive<R> receive, Executor executor) {
        return CompletableFuture.supplyAsync(() -> {
            List<R> got = new ArrayList<>();
            try {
                for (int i = 0; i < n; i++) {
                    got.add(receive.take());
                }
            } catch (RdmaConnectionException e) {
                throw new RuntimeException(e);
            }
            return got;
        }, executor);
    }

    @Test
    void writeWriteWithImmediateAndReadRoundTrips() throws Exception {
        try (RdmaConnectionFuturesDeviceTest.Pair p = pair(21_601, OPTIONS, OPTIONS); RdmaArena arena = RdmaArena.ofShared()) {
            int size = 1 << 20;
            RegisteredBuffer target = p.peer().register(arena.allocate(size, 4096));
            RegisteredBuffer local = p.client().register(arena.allocate(size, 4096));
            RemoteBuffer remote = exchange(p, target);
            assertThat(remote).isEqualTo(target.remote());

            // blocking WRITE of the first half, then WRITE with immediate of the second half
            fill(local.segment(), 0, size / 2, 1);
            p.client().write(local, 0, size / 2, remote, 0, T);
            fill(local.segment(), size / 2, size / 2, 2);
            p.client().writeWithImmediate(local, size / 2, size / 2, remote, size / 2, 0xCAFE_BABE, T);
            ImmediateData imm = p.peer().receiveImmediate(T);
            assertThat(imm).isEqualTo(new ImmediateData(0xCAFE_BABE, size / 2));
            check(target.segment(), 0, size / 2, 1);
            check(target.segment(), size / 2, size / 2, 2);

            // the peer changes its buffer; the client READs it back into a cleared buffer
            fill(target.segment(), 0, size, 3);
            local.segment().fill((byte) 0);
            p.client().read(local, 0, size, remote, 0, T);
            check(local.segment(), 0, size, 3);

            // futures: 64 writes of 16 KiB slices, at most sendDepth outstanding and sendDepth waiting
            int n = 64;
            int chunk = size / n;
            for (int i = 0; i < n; i++) {
                fill(local.segment(), (long) i * chunk, chunk, 100 + i);
            }
            List<CompletableFuture<Void>> writes = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                CompletableFuture<Void> f;
                while ((f = p.client().writeAsync(local, (long) i * chunk, chunk, remote, (long) i * chunk)).isCompletedExceptionally()) {
                    assertThatThrownBy(f::join).hasCauseInstanceOf(IllegalStateException.class)
                            .hasMessageContaining("at most sendDepth");
                    writes.getLast().get(30, TimeUnit.SECONDS);
                }
                writes.add(f);
            }
            CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
            for (int i = 0; i < n; i++) {
                check(target.segment(), (long) i * chunk, chunk, 100 + i);
            }
            // a read future, and a zero-length write with immediate as a pure notification
            local.segment().fill((byte) 0);
            p.client().readAsync(local, 0, size, remote, 0).get(30, TimeUnit.SECONDS);
            for (int i = 0; i < n; i++) {
                check(local.segment(), (long) i * chunk, chunk, 100 + i);
            }
            CompletableFuture<ImmediateData> next = p.peer().receiveImmediateAsync();
            p.client().writeWithImmediateAsync(local, 0, 0, remote, 0, 7).get(30, TimeUnit.SECONDS);
            assertThat(next.get(30, TimeUnit.SECONDS)).isEqualTo(new ImmediateData(7, 0));
            // the copying message stream still works beside them
            p.client().send(new byte[]{1, 2, 3}, T);
            assertThat(p.peer().receive(T)).containsExactly(1, 2, 3);
        }
    }

    @Test
    void immediatesAndMessagesAreTakenApartInOrder() throws Exception {
        try (RdmaConnectionFuturesDeviceTest.Pair p = pair(21_602, OPTIONS, OPTIONS); RdmaArena arena = RdmaArena.ofShared()) {
            RegisteredBuffer target = p.peer().register(arena.allocate(4096 * 64, 4096));
            RegisteredBuffer local = p.client().register(arena.allocate(4096 * 64, 4096));
            RemoteBuffer remote = exchange(p, target);
            int n = 200;
            // each stream on a thread of its own: taken one after the other, the messages waiting
            // behind the immediates would hold every receive, and the writer would run out of credits
            java.util.concurrent.ExecutorService readers = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor();
            CompletableFuture<List<ImmediateData>> imms = takeInTurn(n, () -> p.peer().receiveImmediate(T), readers);
            CompletableFuture<List<byte[]>> messages = takeInTurn(n, () -> p.peer().receive(T), readers);
            try {
                for (int i = 0; i < n; i++) {
                    int slot = i % 64;
                    fill(local.segment(), slot * 4096L, 100, i);
                    p.client().send(VirtualThreadEchoMain.message(3, i), T);
                    p.client().writeWithImmediate(local, slot * 4096L, 100, remote, slot * 4096L, i, T);
                }
            } catch (RdmaConnectionException e) {
                System.out.println("client: " + p.client().flowState() + "\npeer: " + p.peer().flowState());
                throw e;
            }
            List<ImmediateData> gotImms = imms.get(60, TimeUnit.SECONDS);
            List<byte[]> gotMessages = messages.get(60, TimeUnit.SECONDS);
            readers.close();
            for (int i = 0; i < n; i++) {
                assertThat(gotImms.get(i)).isEqualTo(new ImmediateData(i, 100));
                assertThat(gotMessages.get(i)).isEqualTo(VirtualThreadEchoMain.message(3, i));
            }
            // the last 64 writes are still in the target buffer
            for (int i = n - 64; i < n; i++) {
                check(target.segment(), (i % 64) * 4096L, 100, i);
            }
        }
    }

    @Test
    void zeroCopySendsArriveInOrderAmongCopiedMessages() throws Exception {
        try (RdmaConnectionFuturesDeviceTest.Pair p = pair(21_603, OPTIONS, OPTIONS); RdmaArena arena = RdmaArena.ofShared()) {
            int slots = OPTIONS.sendDepth();
            RegisteredBuffer out = p.client().register(arena.allocate(4096L * slots, 4096));
            int n = 300;
            CompletableFuture<List<byte[]>> all = RdmaConnectionFuturesDeviceTest.collect(p.peer(), n,
                    java.util.concurrent.ConcurrentHashMap.newKeySet());
            List<CompletableFuture<Void>> inFlight = new ArrayList<>();
            for (int i = 0; i < slots; i++) {
                inFlight.add(CompletableFuture.completedFuture(null));
            }
            for (int i = 0; i < n; i++) {
                int length = 1 + (i * 37) % 4096;
                if (i % 10 == 9) {
                    p.client().send(VirtualThreadEchoMain.message(5, i), T); // a copied one among them
                    continue;
                }
                int s = i % slots;
                inFlight.get(s).get(30, TimeUnit.SECONDS); // the slot may be reused once its send completed
                fill(out.segment(), 4096L * s, length, i);
                inFlight.set(s, p.client().sendAsync(out, 4096L * s, length));
            }
            List<byte[]> got = all.get(60, TimeUnit.SECONDS);
            for (int i = 0; i < n; i++) {
                byte[] m = got.get(i);
                if (i % 10 == 9) {
                    assertThat(m).isEqualTo(VirtualThreadEchoMain.message(5, i));
                } else {
                    assertThat(m).hasSize(1 + (i * 37) % 4096);
                    check(MemorySegment.ofArray(m), 0, m.length, i);
                }
            }
            // the blocking form
            fill(out.segment(), 0, 10, 9);
            p.client().send(out, 0, 10, T);
            check(MemorySegment.ofArray(p.peer().receive(T)), 0, 10, 9);
        }
    }

    @Test
    void rangesAndBuffersAreCheckedBeforePosting() throws Exception {
        try (RdmaConnectionFuturesDeviceTest.Pair p = pair(21_604, OPTIONS, OPTIONS); RdmaArena arena = RdmaArena.ofShared()) {
            RegisteredBuffer target = p.peer().register(arena.allocate(4096, 4096));
            RegisteredBuffer local = p.client().register(arena.allocate(8192, 4096));
            RemoteBuffer remote = exchange(p, target);
            assertThatThrownBy(() -> p.client().write(local, 0, 4097, remote, 0, T))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("remote range of 4097 bytes at offset 0")
                    .hasMessageContaining("4096 bytes");
            assertThatThrownBy(() -> p.client().readAsync(local, 0, 100, remote, 4000))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("read: the remote range");
            assertThatThrownBy(() -> p.client().write(local, 8000, 200, remote, 0, T))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("local range of 200 bytes at offset 8000");
            assertThatThrownBy(() -> p.client().write(local, 0, -1, remote, 0, T))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("length");
            assertThatThrownBy(() -> p.client().write(target, 0, 10, remote, 0, T))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("another protection domain");
            assertThatThrownBy(() -> p.client().sendAsync(local, 0, 4097))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxMessageSize");
            assertThatThrownBy(() -> p.client().register(MemorySegment.ofArray(new byte[64])))
                    .isInstanceOf(IllegalArgumentException.class);
            try (Arena confined = Arena.ofConfined()) {
                assertThatThrownBy(() -> p.client().register(confined.allocate(64)))
                        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("RdmaArena");
            }
            // none of that reached the device: the connection still works
            p.client().write(local, 0, 4096, remote, 0, T);
            local.close();
            assertThatThrownBy(() -> p.client().write(local, 0, 10, remote, 0, T))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
            p.client().send(new byte[]{9}, T);
            assertThat(p.peer().receive(T)).containsExactly(9);
        }
    }

    @Test
    void closingTheConnectionFailsOutstandingOperations() throws Exception {
        try (RdmaConnectionFuturesDeviceTest.Pair p = pair(21_605, OPTIONS, OPTIONS); RdmaArena arena = RdmaArena.ofShared()) {
            int size = 4 << 20;
            RegisteredBuffer target = p.peer().register(arena.allocate(size, 4096));
            RegisteredBuffer local = p.client().register(arena.allocate(size, 4096));
            RemoteBuffer remote = exchange(p, target);
            List<CompletableFuture<Void>> ops = new ArrayList<>();
            for (int i = 0; i < 2 * OPTIONS.sendDepth(); i++) {
                ops.add(i % 2 == 0 ? p.client().writeAsync(local, 0, size, remote, 0) : p.client().readAsync(local, 0, size, remote, 0));
            }
            CompletableFuture<ImmediateData> imm = p.client().receiveImmediateAsync();
            p.client().close();
            int failed = 0;
            for (CompletableFuture<Void> f : ops) {
                try {
                    f.get(30, TimeUnit.SECONDS);
                } catch (ExecutionException e) {
                    assertThat(e.getCause()).isInstanceOf(RdmaConnectionException.class);
                    assertThat(((RdmaConnectionException) e.getCause()).kind()).isEqualTo(Failure.Kind.CLOSED);
                    failed++;
                }
            }
            assertThat(RdmaConnectionFuturesDeviceTest.kindOf(imm)).isEqualTo(Failure.Kind.CLOSED);
            assertThat(local.isClosed()).as("the connection's close deregistered its buffers").isTrue();
            System.out.println("close with " + ops.size() + " operations of 4 MiB outstanding or waiting: " + failed + " failed CLOSED");
            assertThat(failed).isPositive();
            assertThatThrownBy(() -> p.client().writeAsync(local, 0, 1, remote, 0).join()).isInstanceOf(IllegalStateException.class);
        }
    }

    @Test
    void closingTheArenaWhileOperationsAreOutstandingIsSafe() throws Exception {
        try (RdmaConnectionFuturesDeviceTest.Pair p = pair(21_606, OPTIONS, OPTIONS); RdmaArena peerArena = RdmaArena.ofShared()) {
            int size = 4 << 20;
            RegisteredBuffer target = p.peer().register(peerArena.allocate(size, 4096));
            RemoteBuffer remote = exchange(p, target);
            RdmaArena arena = RdmaArena.ofShared();
            RegisteredBuffer local = p.client().register(arena.allocate(size, 4096));
            List<CompletableFuture<Void>> ops = new ArrayList<>();
            for (int i = 0; i < OPTIONS.sendDepth(); i++) {
                ops.add(i % 2 == 0 ? p.client().readAsync(local, 0, size, remote, 0) : p.client().writeAsync(local, 0, size, remote, 0));
            }
            arena.close(); // deregisters the local buffer, then frees its memory
            assertThat(local.isClosed()).isTrue();
            int ok = 0;
            int failed = 0;
            for (CompletableFuture<Void> f : ops) {
                try {
                    f.get(30, TimeUnit.SECONDS);
                    ok++;
                } catch (ExecutionException e) {
                    assertThat(e.getCause()).isInstanceOf(RdmaConnectionException.class);
                    failed++;
                }
            }
            System.out.println("arena closed with " + ops.size() + " operations of 4 MiB outstanding: " + ok + " completed, "
                    + failed + " failed; connection open: " + p.client().isOpen());
            // the peer's side and its memory are unharmed; a broken connection is reported, not a crash
            target.segment().fill((byte) 1);
            if (p.client().isOpen()) {
                try (RdmaArena again = RdmaArena.ofShared()) {
                    RegisteredBuffer b = p.client().register(again.allocate(4096, 4096));
                    p.client().read(b, 0, 4096, remote, 0, T);
                    assertThat(b.segment().get(ValueLayout.JAVA_BYTE, 4095)).isEqualTo((byte) 1);
                }
            } else {
                assertThatThrownBy(() -> p.client().send(new byte[1], T)).isInstanceOf(RdmaConnectionException.class);
            }
        }
    }

    @Test
    void messagesArriveInPostedBuffersWithoutACopy() throws Exception {
        ConnectionOptions posted = OPTIONS.withPostedReceives(true);
        try (RdmaConnectionFuturesDeviceTest.Pair p = pair(21_607, OPTIONS, posted); RdmaArena arena = RdmaArena.ofShared();
             java.util.concurrent.ExecutorService vts = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()) {
            RdmaConnection rx = p.peer();
            int slots = OPTIONS.receiveDepth() + 1;
            RegisteredBuffer in = rx.register(arena.allocate(4096L * slots, 4096));
            // receiveDepth buffers, and one more once the peer's first update has taken the connection's own receive
            int postedNow = 0;
            for (int i = 0; i < slots; i++) {
                try {
                    rx.postReceive(in, 4096L * i, 4096);
                    postedNow++;
                } catch (IllegalStateException e) {
                    assertThat(e).hasMessageContaining("posted already");
                }
            }
            assertThat(postedNow).isBetween(OPTIONS.receiveDepth(), slots);
            assertThatThrownBy(() -> rx.postReceive(in, 0, 4096)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("posted already");
            assertThatThrownBy(() -> rx.receive(T)).isInstanceOf(IllegalStateException.class).hasMessageContaining("receiveBuffer");
            assertThatThrownBy(() -> p.client().postReceive(in, 0, 10)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("withPostedReceives");
            RegisteredBuffer out = p.client().register(arena.allocate(4096, 4096));
            int n = 300;
            java.util.concurrent.Future<?> sender = vts.submit(() -> {
                for (int i = 0; i < n; i++) {
                    if (i % 3 == 0) {
                        p.client().send(VirtualThreadEchoMain.message(5, i), T); // copied by the sender, not by the receiver
                    } else {
                        int length = 1 + (i * 37) % 4096;
                        fill(out.segment(), 0, length, i);
                        p.client().send(out, 0, length, T); // returns once sent: the slot may be filled again
                    }
                }
                return null;
            });
            java.util.Set<Long> offsetsUsed = new java.util.HashSet<>();
            for (int i = 0; i < n; i++) {
                ReceivedBuffer b = i % 2 == 0 ? rx.receiveBuffer(T) : rx.receiveBufferAsync().get(30, TimeUnit.SECONDS);
                assertThat(b.buffer()).isSameAs(in);
                offsetsUsed.add(b.offset());
                if (i % 3 == 0) {
                    byte[] expected = VirtualThreadEchoMain.message(5, i);
                    assertThat(b.length()).isEqualTo(expected.length);
                    assertThat(in.segment().asSlice(b.offset(), b.length()).toArray(ValueLayout.JAVA_BYTE)).as("message %d", i)
                            .isEqualTo(expected);
                } else {
                    assertThat(b.length()).isEqualTo(1 + (i * 37) % 4096);
                    check(in.segment(), b.offset(), b.length(), i);
                }
                rx.postReceive(b.buffer(), b.offset(), 4096);
            }
            sender.get(60, TimeUnit.SECONDS);
            assertThat(offsetsUsed).hasSizeGreaterThan(1);

            // a write with immediate uses a posted buffer too, posted again once the immediate is taken
            RegisteredBuffer target = rx.register(arena.allocate(4096, 4096));
            rx.send(target.remote().toBytes(), T);
            RemoteBuffer remote = RemoteBuffer.fromBytes(p.client().receive(T));
            fill(out.segment(), 0, 100, 77);
            p.client().writeWithImmediate(out, 0, 100, remote, 0, 77, T);
            assertThat(rx.receiveImmediate(T)).isEqualTo(new ImmediateData(77, 100));
            check(target.segment(), 0, 100, 77);
            for (int i = 0; i < 2 * slots; i++) {
                fill(out.segment(), 0, 50, 1000 + i);
                p.client().send(out, 0, 50, T);
                ReceivedBuffer b = rx.receiveBuffer(T);
                check(in.segment(), b.offset(), 50, 1000 + i);
                rx.postReceive(b.buffer(), b.offset(), 4096);
            }
            // end of stream
            p.client().close();
            assertThat(rx.receiveBuffer(T)).isNull();
        }
    }
}
