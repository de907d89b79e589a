package dev.verbs4j.rdmacm;

import dev.verbs4j.verbs.TestBed;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static dev.verbs4j.rdmacm.RdmaConnectionDeviceTest.address;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The socket-like layer on virtual threads: a virtual thread parked in each blocking call is
 * woken by a close with the exception a platform thread gets.
 */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_1)
@Timeout(120)
class RdmaVirtualThreadsDeviceTest {

    static final Duration WAIT = Duration.ofSeconds(60);

    /** A call that blocks, and how to close what it waits on. */
    private interface Case {
        Callable<?> call() throws Exception;

        void close() throws Exception;
    }

    @Test
    void closeWakesAVirtualThreadParkedInEachBlockingCallWithThePlatformThreadsException() throws Exception {
        int[] port = {21_310};
        for (String what : List.of("accept", "receive", "send without credits", "connect")) {
            Failure.Kind[] kinds = new Failure.Kind[2];
            for (int v = 0; v < 2; v++) {
                boolean virtual = v == 1;
                Case c = setUp(what, port[0]++);
                CompletableFuture<Throwable> outcome = new CompletableFuture<>();
                Thread.Builder builder = virtual ? Thread.ofVirtual() : Thread.ofPlatform().daemon();
                Thread t = builder.start(() -> {
                    try {
                        c.call().call();
                        outcome.complete(null);
                    } catch (Throwable e) {
                        outcome.complete(e);
                    }
                });
                awaitBlocked(t);
                long t0 = System.nanoTime();
                c.close();
                Throwable e = outcome.get(20, TimeUnit.SECONDS);
                long ms = (System.nanoTime() - t0) / 1_000_000;
                System.out.println(what + " on a " + (virtual ? "virtual" : "platform") + " thread: woken after " + ms
                        + " ms with " + e);
                assertThat(e).as(what).isInstanceOf(RdmaConnectionException.class).isNotInstanceOf(RdmaTimeoutException.class);
                kinds[v] = ((RdmaConnectionException) e).kind();
            }
            assertThat(kinds[1]).as(what).isEqualTo(kinds[0]);
        }
    }

    /** Waits until {@code t} waits (a virtual thread parks; a platform thread sleeps in poll, shown as running). */
    private static void awaitBlocked(Thread t) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        if (t.isVirtual()) {
            while (t.getState() != Thread.State.WAITING && t.getState() != Thread.State.TIMED_WAITING && System.nanoTime() < until) {
                Thread.sleep(20);
            }
        }
        Thread.sleep(500); // past the call's own checks, into its sleep
    }

    private static Case setUp(String what, int port) throws Exception {
        InetSocketAddress b = address(TestBed.hostB(), port);
        InetSocketAddress a = address(TestBed.hostA(), 0);
        ConnectionOptions small = ConnectionOptions.DEFAULT.withMaxMessageSize(64).withDepths(2, 2).withLinger(Duration.ZERO);
        switch (what) {
            case "accept" -> {
                RdmaServer server = RdmaServer.bind(b);
                return new Case() {
                    public Callable<?> call() {
                        return () -> server.accept(WAIT);
                    }

                    public void close() {
                        server.close();
                    }
                };
            }
            case "connect" -> {
                EventChannel channel = EventChannel.create();
                CmId listener = channel.createId(PortSpace.TCP);
                listener.bind(b);
                listener.listen(4); // never accepts
                return new Case() {
                    public Callable<?> call() {
                        return () -> RdmaConnection.connect(b, a, small, WAIT);
                    }

                    public void close() {
                        CmEvent request = channel.getEvent(Duration.ofSeconds(10));
                        assertThat(request).isNotNull();
                        channel.close(); // the listener and the request's id go: the connecting side is rejected
                    }
                };
            }
            default -> {
                RdmaServer server = RdmaServer.bind(b, small, 4, WAIT, null);
                CompletableFuture<RdmaConnection> accepted = CompletableFuture.supplyAsync(() -> {
                    try {
                        return server.accept(WAIT);
                    } catch (RdmaConnectionException e) {
                        throw new RuntimeException(e);
                    }
                });
                RdmaConnection client = RdmaConnection.connect(b, a, small, WAIT);
                RdmaConnection peer = accepted.get(WAIT.toSeconds(), TimeUnit.SECONDS);
                if (what.equals("send without credits")) {
                    client.send(new byte[8], WAIT);
                    client.send(new byte[8], WAIT); // the peer's 2 receives are taken; it does not read
                }
                return new Case() {
                    public Callable<?> call() {
                        return what.equals("receive") ? () -> client.receive(WAIT) : () -> {
                            client.send(new byte[8], WAIT);
                            return null;
                        };
                    }

                    public void close() {
                        client.close();
                        peer.close();
                        server.close();
                    }
                };
            }
        }
    }
}
