package dev.verbs4j.perf.tools;

import dev.verbs4j.perf.tools.PerftestDeviceTest.Pair;
import dev.verbs4j.perf.tools.PerftestDeviceTest.Topology;
import dev.verbs4j.verbs.HugePages;
import dev.verbs4j.verbs.TestBed;
import dev.verbs4j.verbs.ToolRunner.Run;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code --use_hugepages} on a machine with free huge pages (reserved for the test, released after):
 * the buffers of both sides are in huge pages, and each Java side runs, prints and ends as the C
 * side of its role in a C/C pair with the same options. (Without huge pages: {@link
 * PerftestCapabilityOptionsDeviceTest}.)
 */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_3)
class PerftestHugePagesDeviceTest {

    @BeforeAll
    static void warmUp() throws Exception {
        PerftestDeviceTest.warmUpOnce();
    }

    private static List<String> errors(Run r) {
        return r.err().stream().filter(l -> !l.startsWith("Correlation coefficient")
                && !l.equals("Failed: couldn't acquire cpu frequency for rate limiter.")).toList();
    }

    private static void sameAsC(PerfTool tool, List<String> opts) throws Exception {
        Pair cc = PerftestDeviceTest.run(tool, false, false, Topology.LOOPBACK, opts, opts);
        Pair jc = PerftestDeviceTest.run(tool, false, true, Topology.LOOPBACK, opts, opts);
        Pair cj = PerftestDeviceTest.run(tool, true, false, Topology.LOOPBACK, opts, opts);
        String all = "C/C:\n" + cc + "\nJava client:\n" + jc + "\nJava server:\n" + cj;
        assertThat(cc.client().status()).as(all).isZero();
        assertThat(cc.server().status()).as(all).isZero();
        assertThat(jc.client().status()).as(all).isZero();
        assertThat(errors(jc.client())).as(all).isEqualTo(errors(cc.client()));
        assertThat(PerftestDeviceTest.shape(jc.client().out())).as(all).isEqualTo(PerftestDeviceTest.shape(cc.client().out()));
        assertThat(cj.server().status()).as(all).isZero();
        assertThat(errors(cj.server())).as(all).isEqualTo(errors(cc.server()));
        assertThat(PerftestDeviceTest.shape(cj.server().out())).as(all).isEqualTo(PerftestDeviceTest.shape(cc.server().out()));
    }

    @Test
    @Timeout(170)
    void bothSidesInHugePages() throws Exception {
        try (HugePages reserved = HugePages.reserve(8)) {
            sameAsC(PerfTool.WRITE_BW, List.of("--use_hugepages", "-n", "10"));
            sameAsC(PerfTool.SEND_LAT, List.of("--use_hugepages", "-n", "10"));
            assertThat(HugePages.available()).as("every side gave its huge pages back").isEqualTo(8);
        }
    }
}
