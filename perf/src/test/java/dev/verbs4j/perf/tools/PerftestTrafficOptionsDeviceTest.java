package dev.verbs4j.perf.tools;

import dev.verbs4j.perf.tools.PerftestDeviceTest.Pair;
import dev.verbs4j.perf.tools.PerftestDeviceTest.Topology;
import dev.verbs4j.verbs.TestBed;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * perftest 4.5's options that change the traffic or the control channel, on Soft-RoCE against
 * the C tools: the software rate limiter (and the fallback to it from a HW limit an Ethernet port
 * cannot take), {@code -z} (control messages over RDMA CM, queue pairs connected by hand) and
 * {@code --reversed} (the server sends).
 */
@Tag(TestBed.TAG)
class PerftestTrafficOptionsDeviceTest {

    @BeforeAll
    static void warmUp() throws Exception {
        PerftestDeviceTest.warmUpOnce();
    }

    @Test
    @Timeout(240)
    void softwareRateLimitAndHardwareFallback() throws Exception {
        PerftestDeviceTest.threeWays(PerfTool.WRITE_BW, Topology.LOOPBACK, List.of("--rate_limit=0.1", "--rate_limit_type=SW",
                "-n", "10"));
        // a HW limit the queue pair cannot take (Ethernet): perftest says so and limits in software
        PerftestOptionsDeviceTest.layoutBothWays(PerfTool.SEND_BW, Topology.LOOPBACK, List.of("--rate_limit=10", "-n", "10"));
    }

    @Test
    @Timeout(240)
    void controlMessagesOverRdmaCm() throws Exception {
        PerftestDeviceTest.threeWays(PerfTool.SEND_LAT, Topology.HOSTS, List.of("-z", "-n", "10"));
        PerftestDeviceTest.threeWays(PerfTool.READ_BW, Topology.HOSTS, List.of("-z", "-n", "10"));
    }

    @Test
    @Timeout(240)
    void reversed() throws Exception {
        PerftestOptionsDeviceTest.layoutBothWays(PerfTool.WRITE_BW, Topology.LOOPBACK, List.of("--reversed", "-n", "10"));
        PerftestOptionsDeviceTest.layoutBothWays(PerfTool.SEND_BW, Topology.LOOPBACK, List.of("--reversed", "-n", "10"));
    }
}
