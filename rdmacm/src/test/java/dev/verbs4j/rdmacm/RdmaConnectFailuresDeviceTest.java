package dev.verbs4j.rdmacm;

import dev.verbs4j.verbs.TestBed;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.InetSocketAddress;
import java.time.Duration;

import static dev.verbs4j.rdmacm.RdmaConnectionDeviceTest.address;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/** A server that cannot set a connection up rejects it with the reason; a connect that runs out of time names the phase. */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_1)
@Timeout(120)
class RdmaConnectFailuresDeviceTest {

    /** The first connection of a JVM loads and compiles the library (many seconds in the test VM): done before the timed cases. */
    @BeforeAll
    static void warmUp() throws Exception {
        try (RdmaServer server = RdmaServer.bind(address(TestBed.hostB(), 21_500))) {
            java.util.concurrent.CompletableFuture<RdmaConnection> accepted = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                try {
                    return server.accept(Duration.ofSeconds(90));
                } catch (RdmaConnectionException e) {
                    throw new RuntimeException(e);
                }
            });
            try (RdmaConnection c = RdmaConnection.connect(server.localAddress(), address(TestBed.hostA(), 0), null,
                    Duration.ofSeconds(90)); RdmaConnection peer = accepted.get(90, java.util.concurrent.TimeUnit.SECONDS)) {
                c.send(new byte[1], Duration.ofSeconds(30));
                assertThat(peer.receive(Duration.ofSeconds(30))).hasSize(1);
            }
        }
    }

    @Test
    void aServerThatCannotSetTheConnectionUpRejectsItWithTheReason() throws Exception {
        // the server's send ring would be 4096 x 1 GiB: its allocation fails (ENOMEM) while the
        // connection's resources are made, after the queue pair, before the accept
        ConnectionOptions huge = ConnectionOptions.DEFAULT.withMaxMessageSize(1 << 30).withDepths(4096, 1);
        try (RdmaServer server = RdmaServer.bind(address(TestBed.hostB(), 21_501), huge, 4, Duration.ofSeconds(30), null)) {
            Duration timeout = Duration.ofSeconds(60);
            long t0 = System.nanoTime();
            RdmaConnectionException e = catchThrowableOfType(RdmaConnectionException.class,
                    () -> RdmaConnection.connect(server.localAddress(), address(TestBed.hostA(), 0), null, timeout));
            long ms = (System.nanoTime() - t0) / 1_000_000;
            System.out.println("rejected after " + ms + " ms: " + e.getMessage());
            assertThat(e).isNotInstanceOf(RdmaTimeoutException.class);
            assertThat(e.event()).isEqualTo(CmEventType.REJECTED);
            assertThat(e.rejectionReason()).contains("could not set up the connection").contains("ENOMEM");
            assertThat(e.getMessage()).contains("rejected by the peer").contains("ENOMEM").contains(server.localAddress().toString());
            assertThat(Duration.ofMillis(ms)).isLessThan(Duration.ofSeconds(20));
        }
    }

    @Test
    void timeoutsNameThePhaseAndThePeer() throws Exception {
        InetSocketAddress b = address(TestBed.hostB(), 21_502);
        try (EventChannel channel = EventChannel.create()) {
            CmId listener = channel.createId(PortSpace.TCP);
            listener.bind(b);
            listener.listen(4); // never accepts
            RdmaTimeoutException e = catchThrowableOfType(RdmaTimeoutException.class,
                    () -> RdmaConnection.connect(b, address(TestBed.hostA(), 0), null, Duration.ofSeconds(5)));
            System.out.println(e.getMessage());
            assertThat(e.getMessage()).contains(b.toString()).contains("timed out in phase connection")
                    // address and route resolution took some of the 5 s
                    .containsPattern("ESTABLISHED within (5000 ms|\\d+ ms, what was left of the whole 5000 ms)\\)");
            RdmaTimeoutException zero = catchThrowableOfType(RdmaTimeoutException.class,
                    () -> RdmaConnection.connect(b, address(TestBed.hostA(), 0), null, Duration.ZERO));
            assertThat(zero.getMessage()).contains(b.toString()).contains("timed out in phase address resolution");
        }
    }
}
