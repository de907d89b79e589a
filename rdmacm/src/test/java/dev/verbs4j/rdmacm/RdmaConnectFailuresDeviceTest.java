package dev.verbs4j.rdmacm;

import dev.verbs4j.verbs.TestBed;
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
@Timeout(120)
class RdmaConnectFailuresDeviceTest {

    @Test
    void aServerThatCannotSetTheConnectionUpRejectsItWithTheReason() throws Exception {
        // 200 bytes of accept private data: rdma_accept fails (EINVAL) after the connection's resources were made
        try (RdmaServer server = RdmaServer.bind(address(TestBed.hostB(), 21_501), null, 4, Duration.ofSeconds(30),
                (peer, data) -> RdmaServer.Verdict.accept(new byte[200]))) {
            Duration timeout = Duration.ofSeconds(60);
            long t0 = System.nanoTime();
            RdmaConnectionException e = catchThrowableOfType(RdmaConnectionException.class,
                    () -> RdmaConnection.connect(server.localAddress(), address(TestBed.hostA(), 0), null, timeout));
            long ms = (System.nanoTime() - t0) / 1_000_000;
            System.out.println("rejected after " + ms + " ms: " + e.getMessage());
            assertThat(e).isNotInstanceOf(RdmaTimeoutException.class);
            assertThat(e.event()).isEqualTo(CmEventType.REJECTED);
            assertThat(e.rejectionReason()).contains("rdma_accept").contains("EINVAL");
            assertThat(e.getMessage()).contains("rejected by the peer").contains("rdma_accept").contains(server.localAddress().toString());
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
                    () -> RdmaConnection.connect(b, address(TestBed.hostA(), 0), null, Duration.ofSeconds(3)));
            System.out.println(e.getMessage());
            assertThat(e.getMessage()).contains(b.toString()).contains("phase established").contains("PT3S");
            RdmaTimeoutException zero = catchThrowableOfType(RdmaTimeoutException.class,
                    () -> RdmaConnection.connect(b, address(TestBed.hostA(), 0), null, Duration.ZERO));
            assertThat(zero.getMessage()).contains(b.toString()).contains("phase address resolution");
        }
    }
}
