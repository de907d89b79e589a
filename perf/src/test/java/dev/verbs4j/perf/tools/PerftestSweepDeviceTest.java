package dev.verbs4j.perf.tools;

import dev.verbs4j.perf.tools.PerftestDeviceTest.Topology;
import dev.verbs4j.verbs.TestBed;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.List;

/**
 * {@code -a}, every size from 2 B to 8 MiB (UD: to the MTU), for each tool that allows it (the
 * atomics have one size), three ways as {@link PerftestDeviceTest} runs its option sets and with
 * the same checks: rows for every size on the sides that print them, Java's numbers sane, the
 * Java layout equal to C's. A class of its own so that these long sweeps can run in another VM.
 */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_2)
class PerftestSweepDeviceTest {

    @BeforeAll
    static void warmUp() throws Exception {
        PerftestDeviceTest.warmUp();
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = PerfTool.class, names = {"SEND_LAT", "SEND_BW", "WRITE_LAT", "WRITE_BW", "READ_LAT", "READ_BW"})
    @Timeout(600)
    void allSizes(PerfTool tool) throws Exception {
        PerftestDeviceTest.threeWays(tool, Topology.LOOPBACK, List.of("-a", "-n", "5"));
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = PerfTool.class, names = {"SEND_LAT", "SEND_BW"})
    @Timeout(300)
    void datagramsOfAllSizesAcrossHosts(PerfTool tool) throws Exception {
        // -a on UD stops at the MTU (4096 B across the veth pair): both sides say so and agree
        PerftestDeviceTest.threeWays(tool, Topology.HOSTS, List.of("-c", "UD", "-a", "-n", "5"));
    }
}
