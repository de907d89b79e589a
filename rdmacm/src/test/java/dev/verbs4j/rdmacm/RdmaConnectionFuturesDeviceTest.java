package dev.verbs4j.rdmacm;

import dev.verbs4j.verbs.TestBed;
import dev.verbs4j.verbs.WcStatus;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static dev.verbs4j.rdmacm.RdmaConnectionDeviceTest.address;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link RdmaConnection#sendAsync} and {@link RdmaConnection#receiveAsync}: completion in order on
 * a library virtual thread, back-pressure, cancellation and timeouts that take an operation back,
 * and the failures of the blocking calls (peer disconnect, error completion, close).
 */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_1)
@Timeout(150)
class RdmaConnectionFuturesDeviceTest {

    static final Duration WAIT = Duration.ofSeconds(60);
    static final ConnectionOptions SMALL = ConnectionOptions.DEFAULT.withMaxMessageSize(256).withDepths(2, 2)
            .withLinger(Duration.ZERO);

    /** A connected pair: the client's and the server's end. */
    record Pair(RdmaServer server, RdmaConnection client, RdmaConnection peer) implements AutoCloseable {
        @Override
        public void close() {
            client.close();
            peer.close();
            server.close();
        }
    }

    static Pair pair(int port, ConnectionOptions clientOptions, ConnectionOptions serverOptions) throws Exception {
        RdmaServer server = RdmaServer.bind(address(TestBed.hostB(), port), serverOptions, 4, WAIT, null);
        CompletableFuture<RdmaConnection> accepted = CompletableFuture.supplyAsync(() -> {
            try {
                return server.accept(WAIT);
            } catch (RdmaConnectionException e) {
                throw new RuntimeException(e);
            }
        });
        RdmaConnection client = RdmaConnection.connect(server.localAddress(), address(TestBed.hostA(), 0), clientOptions, WAIT);
        return new Pair(server, client, accepted.get(WAIT.toSeconds(), TimeUnit.SECONDS));
    }

    static Failure.Kind kindOf(CompletableFuture<?> f) throws Exception {
        try {
            f.get(30, TimeUnit.SECONDS);
            throw new AssertionError("completed normally");
        } catch (ExecutionException e) {
            assertThat(e.getCause()).isInstanceOf(RdmaConnectionException.class);
            return ((RdmaConnectionException) e.getCause()).kind();
        }
    }

    @Test
    void messagesInOrderCompletedOnALibraryVirtualThread() throws Exception {
        try (Pair p = pair(21_401, SMALL, SMALL)) {
            int n = 200;
            // receive futures are bounded by receiveDepth: chain them, one taking over from the last
            java.util.Set<Thread> callbackThreads = java.util.concurrent.ConcurrentHashMap.newKeySet();
            CompletableFuture<List<byte[]>> all = collect(p.peer(), n, callbackThreads);
            CompletableFuture<Void> last = null;
            for (int i = 0; i < n; i++) {
                byte[] m = VirtualThreadEchoMain.message(7, i);
                CompletableFuture<Void> sent;
                while ((sent = p.client().sendAsync(m)).isCompletedExceptionally()) {
                    assertThatBackPressure(sent);
                    last.get(30, TimeUnit.SECONDS);
                }
                last = sent;
            }
            last.get(30, TimeUnit.SECONDS);
            List<byte[]> got = all.get(60, TimeUnit.SECONDS);
            for (int i = 0; i < n; i++) {
                assertThat(got.get(i)).as("message %d", i).isEqualTo(VirtualThreadEchoMain.message(7, i));
            }
            // receive futures complete later: their callbacks ran on the library's virtual threads
            assertThat(callbackThreads).isNotEmpty().allMatch(Thread::isVirtual).doesNotContain(Thread.currentThread());
            System.out.println("callbacks ran on " + callbackThreads.size() + " virtual threads, e.g. " + callbackThreads.iterator().next());
        }
    }

    private static void assertThatBackPressure(CompletableFuture<?> f) {
        try {
            f.join();
        } catch (Exception e) {
            assertThat(e.getCause()).isInstanceOf(IllegalStateException.class).hasMessageContaining("at most sendDepth");
        }
    }

    /** The next {@code n} messages of {@code c}, each receive future asked for once the last completed. */
    static CompletableFuture<List<byte[]>> collect(RdmaConnection c, int n, java.util.Set<Thread> threads) {
        List<byte[]> got = new ArrayList<>();
        CompletableFuture<List<byte[]>> done = new CompletableFuture<>();
        Runnable[] next = new Runnable[1];
        next[0] = () -> c.receiveAsync().whenComplete((m, e) -> {
            threads.add(Thread.currentThread());
            if (e != null) {
                done.completeExceptionally(e);
            } else if (m == null) {
                done.complete(got);
            } else {
                got.add(m);
                if (got.size() == n) {
                    done.complete(got);
                } else {
                    next[0].run();
                }
            }
        });
        next[0].run();
        return done;
    }

    @Test
    void backPressureCancelAndTimeoutTakeBackWaitingOperations() throws Exception {
        try (Pair p = pair(21_402, SMALL, SMALL)) {
            // the peer does not read: 2 credits, then sends wait; 2 more may wait, then a refusal
            List<CompletableFuture<Void>> sends = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                sends.add(p.client().sendAsync(new byte[]{(byte) i}));
            }
            sends.get(0).get(30, TimeUnit.SECONDS);
            sends.get(1).get(30, TimeUnit.SECONDS);
            assertThat(sends.get(2)).isNotDone();
            assertThat(sends.get(3)).isNotDone();
            assertThat(sends.get(4)).isCompletedExceptionally();
            assertThatBackPressure(sends.get(4));
            assertThat(sends.get(3).cancel(false)).isTrue(); // still waiting: never sent
            CompletableFuture<Void> timed = p.client().sendAsync(new byte[]{9}).orTimeout(200, TimeUnit.MILLISECONDS);
            assertThat(catchCause(timed)).isInstanceOf(TimeoutException.class); // taken back too
            // the peer reads: credits come back, message 2 goes, 3 and 9 never do
            assertThat(p.peer().receive(WAIT)).containsExactly(0);
            assertThat(p.peer().receive(WAIT)).containsExactly(1);
            sends.get(2).get(30, TimeUnit.SECONDS);
            assertThat(p.peer().receive(WAIT)).containsExactly(2);
            assertThatThrownByTimeout(p.peer());
            assertThat(sends.get(2).cancel(false)).isFalse(); // posted: says so

            // a receive that timed out takes no message; the next one gets it
            CompletableFuture<byte[]> early = p.peer().receiveAsync().orTimeout(200, TimeUnit.MILLISECONDS);
            assertThat(catchCause(early)).isInstanceOf(TimeoutException.class);
            CompletableFuture<byte[]> cancelled = p.peer().receiveAsync();
            assertThat(cancelled.cancel(false)).isTrue();
            CompletableFuture<byte[]> next = p.peer().receiveAsync();
            p.client().send(new byte[]{42}, WAIT);
            assertThat(next.get(30, TimeUnit.SECONDS)).containsExactly(42);
        }
    }

    private static void assertThatThrownByTimeout(RdmaConnection c) {
        try {
            c.receive(Duration.ofMillis(300));
            throw new AssertionError("a message arrived that was taken back");
        } catch (RdmaTimeoutException expected) {
            // nothing else came
        } catch (RdmaConnectionException e) {
            throw new AssertionError(e);
        }
    }

    private static Throwable catchCause(CompletableFuture<?> f) throws InterruptedException, TimeoutException {
        try {
            f.get(30, TimeUnit.SECONDS);
            throw new AssertionError("completed normally");
        } catch (ExecutionException e) {
            return e.getCause();
        }
    }

    @Test
    void peerDisconnectEndsReceivesAndFailsSends() throws Exception {
        try (Pair p = pair(21_403, SMALL, SMALL)) {
            CompletableFuture<byte[]> pending = p.client().receiveAsync();
            p.peer().close();
            assertThat(pending.get(30, TimeUnit.SECONDS)).isNull(); // end of stream, as receive(Duration)
            assertThat(kindOf(p.client().sendAsync(new byte[1]))).isEqualTo(Failure.Kind.PEER_DISCONNECTED);
            assertThat(p.client().receiveAsync().get(30, TimeUnit.SECONDS)).isNull();
        }
    }

    @Test
    void closeFailsWaitingAndLaterFutures() throws Exception {
        try (Pair p = pair(21_404, SMALL, SMALL)) {
            CompletableFuture<byte[]> pending = p.client().receiveAsync();
            p.client().sendAsync(new byte[1]).get(30, TimeUnit.SECONDS);
            p.client().sendAsync(new byte[1]).get(30, TimeUnit.SECONDS);
            CompletableFuture<Void> waiting = p.client().sendAsync(new byte[1]); // no credit left
            p.client().close();
            assertThat(kindOf(pending)).isEqualTo(Failure.Kind.CLOSED);
            assertThat(kindOf(waiting)).isEqualTo(Failure.Kind.CLOSED);
            assertThat(kindOf(p.client().sendAsync(new byte[1]))).isEqualTo(Failure.Kind.CLOSED);
            assertThat(kindOf(p.client().receiveAsync())).isEqualTo(Failure.Kind.CLOSED);
        }
    }

    @Test
    void anErrorCompletionFailsAWaitingReceive() throws Exception {
        // the client may send 1024 bytes, the peer's receive slots hold 64: an error completion on the peer
        try (Pair p = pair(21_405, SMALL.withMaxMessageSize(1024), SMALL.withMaxMessageSize(64))) {
            CompletableFuture<byte[]> pending = p.peer().receiveAsync();
            p.client().send(new byte[512], WAIT);
            try {
                pending.get(30, TimeUnit.SECONDS);
                throw new AssertionError("completed normally");
            } catch (ExecutionException e) {
                RdmaConnectionException x = (RdmaConnectionException) e.getCause();
                assertThat(x.kind()).isEqualTo(Failure.Kind.WORK_COMPLETION);
                // a local length error; Soft-RoCE reports it as LOC_QP_OP_ERR
                assertThat(x.wcStatus()).isIn(WcStatus.LOC_LEN_ERR, WcStatus.LOC_QP_OP_ERR);
            }
            assertThat(Arrays.asList(Failure.Kind.WORK_COMPLETION, Failure.Kind.EVENT))
                    .contains(kindOf(p.peer().sendAsync(new byte[1])));
        }
    }
}
