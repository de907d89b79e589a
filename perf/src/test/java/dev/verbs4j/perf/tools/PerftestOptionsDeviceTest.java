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
 * perftest 4.5's options beyond the basic ones on Soft-RoCE, each pair with the option on both
 * sides, three ways (Java/Java, C server with Java client, Java server with C client): both sides
 * exit 0 and the Java output of each role is laid out line for line as the C one (the TOS on the
 * data exchange line, the -H samples and the table head printed again, the MTU messages of an
 * -m that is no MTU, the wait before the resources are freed).
 */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_3)
class PerftestOptionsDeviceTest {

    @BeforeAll
    static void warmUp() throws Exception {
        PerftestDeviceTest.warmUpOnce();
    }

    @Test
    @Timeout(240)
    void typeOfServiceOnTheDataExchangeLine() throws Exception {
        PerftestDeviceTest.threeWays(PerfTool.SEND_LAT, Topology.HOSTS, List.of("-R", "-T", "32", "-n", "10"));
    }

    @Test
    @Timeout(240)
    void histogramInCycles() throws Exception {
        PerftestDeviceTest.threeWays(PerfTool.WRITE_LAT, Topology.LOOPBACK, List.of("-C", "-H", "-n", "20"));
    }

    @Test
    @Timeout(240)
    void everySample() throws Exception {
        PerftestDeviceTest.threeWays(PerfTool.SEND_LAT, Topology.LOOPBACK, List.of("-U", "-n", "10"));
    }

    @Test
    @Timeout(240)
    void trafficClassMtuRoundingAbbreviationsAndWaitDestroy() throws Exception {
        PerftestDeviceTest.threeWays(PerfTool.WRITE_BW, Topology.LOOPBACK, List.of("--tclass=32", "-m", "1000",
                "--conn=RC", "--wait_destroy=1", "--use_old_post_send", "--disable_pcie_relaxed", "--pkey_index=0", "-n", "10"));
    }

    /**
     * Options whose rows the generic checks of {@link PerftestDeviceTest} do not expect (more
     * than one row per size, duration mode): both directions with a C side, both statuses 0, and
     * each Java role laid out as the C one.
     */
    static void layoutBothWays(PerfTool tool, Topology where, List<String> opts) throws Exception {
        Pair jc = PerftestDeviceTest.run(tool, false, true, where, opts, opts);
        Pair cj = PerftestDeviceTest.run(tool, true, false, where, opts, opts);
        for (Pair p : List.of(jc, cj)) {
            assertThat(p.server().status()).as(p.toString()).isZero();
            assertThat(p.client().status()).as(p.toString()).isZero();
        }
        PerftestDeviceTest.sameLayout(cj.server(), jc.server());
        PerftestDeviceTest.sameLayout(jc.client(), cj.client());
    }

    @Test
    @Timeout(240)
    void reportBothWithWarmUp() throws Exception {
        layoutBothWays(PerfTool.WRITE_BW, Topology.LOOPBACK, List.of("-b", "--report-both", "--perform_warm_up", "-n", "10"));
    }

    @Test
    @Timeout(240)
    void latencyGap() throws Exception {
        // with --inline_recv, which perftest 4.5 parses and does not use, --flow_label (raw Ethernet's
        // only) and --force-link=Ethernet (what the port is)
        PerftestDeviceTest.threeWays(PerfTool.SEND_LAT, Topology.LOOPBACK, List.of("--latency_gap=200", "--inline_recv=64",
                "--flow_label=1", "--force-link=Ethernet", "-n", "10"));
    }


    @Test
    @Timeout(240)
    void sharedReceiveQueue() throws Exception {
        layoutBothWays(PerfTool.SEND_BW, Topology.LOOPBACK, List.of("--use-srq", "-q", "2", "-n", "10"));
        layoutBothWays(PerfTool.SEND_LAT, Topology.LOOPBACK, List.of("--use-srq", "-n", "10"));
    }

    @Test
    @Timeout(240)
    void memoryRegionPerQueuePair() throws Exception {
        PerftestDeviceTest.threeWays(PerfTool.WRITE_BW, Topology.LOOPBACK, List.of("--mr_per_qp", "-q", "2", "-n", "10"));
    }

    @Test
    @Timeout(240)
    void receivePostList() throws Exception {
        layoutBothWays(PerfTool.SEND_BW, Topology.LOOPBACK, List.of("--recv_post_list=4", "-n", "12"));
    }
}
