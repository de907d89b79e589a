package dev.verbs4j.perf.tools;

import dev.verbs4j.perf.tools.PerftestDeviceTest.Topology;
import dev.verbs4j.verbs.HugePages;
import dev.verbs4j.verbs.TestBed;
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

    private static void sameAsC(PerfTool tool, List<String> opts) throws Exception {
        AgainstC r = AgainstC.run(tool, Topology.LOOPBACK, opts, opts);
        String all = r.all();
        assertThat(r.cc().client().status()).as(all).isZero();
        assertThat(r.cc().server().status()).as(all).isZero();
        assertThat(r.jc().client().status()).as(all).isZero();
        assertThat(r.cj().server().status()).as(all).isZero();
        // (with every status 0, each Java side's equals the C side's of its role)
        r.assertSameAsC(PerftestDeviceTest::errors);
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
