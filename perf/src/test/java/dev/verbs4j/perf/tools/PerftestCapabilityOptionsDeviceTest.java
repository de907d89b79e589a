package dev.verbs4j.perf.tools;

import dev.verbs4j.perf.tools.PerftestDeviceTest.Pair;
import dev.verbs4j.perf.tools.PerftestDeviceTest.Topology;
import dev.verbs4j.verbs.TestBed;
import dev.verbs4j.verbs.ToolRunner;
import dev.verbs4j.verbs.ToolRunner.Run;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * perftest 4.5's options whose outcome depends on what the device or the machine offers
 * (on-demand paging, huge pages, a second port) and those that end a run on purpose: on
 * Soft-RoCE each Java side ends as the C side in the same role of a C/C pair with the same options,
 * with the same status and the same messages on stderr.
 */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_2)
class PerftestCapabilityOptionsDeviceTest {

    @BeforeAll
    static void warmUp() throws Exception {
        PerftestDeviceTest.warmUpOnce();
    }

    /** A C side's stderr without its clock calibration's complaints. */
    private static List<String> errors(Run r) {
        return r.err().stream().filter(l -> !l.startsWith("Correlation coefficient")).toList();
    }

    /** The pair C/C, then each Java side against a C peer: every Java side ends as the C side of its role. */
    private static void endsAsC(PerfTool tool, List<String> opts) throws Exception {
        AgainstC.run(tool, Topology.LOOPBACK, opts, opts).assertEndsAsC(PerftestCapabilityOptionsDeviceTest::errors);
    }

    @Test
    @Timeout(240)
    void hugePages() throws Exception {
        endsAsC(PerfTool.WRITE_BW, List.of("--use_hugepages", "-n", "10"));
    }

    @Test
    @Timeout(240)
    void onDemandPaging() throws Exception {
        endsAsC(PerfTool.SEND_BW, List.of("--odp", "-n", "10"));
    }

    @Test
    @Timeout(240)
    void versionsNotExchanged() throws Exception {
        endsAsC(PerfTool.SEND_LAT, List.of("--dont_xchg_versions", "-n", "10"));
    }

    /** A server that ends before it listens, run alone in C and in Java: the same status and words. */
    private static void aloneAsC(PerfTool tool, List<String> args) throws Exception {
        Run c = ToolRunner.startC("C " + tool.c, Duration.ofSeconds(60),
                concat(List.of(tool.c, "-F"), args).toArray(String[]::new)).await();
        Run j = ToolRunner.startJava(tool.java, "java " + tool.c, Duration.ofSeconds(60), args.toArray(String[]::new)).await();
        assertThat(j.status()).as(c + "\n" + j).isEqualTo(c.status()).isNotZero();
        assertThat(j.err()).as(c + "\n" + j).isEqualTo(errors(c));
        assertThat(j.out()).as(c + "\n" + j).isEqualTo(c.out());
    }

    @Test
    @Timeout(120)
    void dualPortOnASinglePortDevice() throws Exception {
        // the port check comes before the connection: one side, as a server
        aloneAsC(PerfTool.WRITE_BW, List.of("-O", "-n", "10", "-p", "19499", "-d", TestBed.loopback().device()));
    }

    private static List<String> concat(List<String> a, List<String> b) {
        List<String> r = new ArrayList<>(a);
        r.addAll(b);
        return r;
    }

    /** As {@link #endsAsC}, and each Java side's stdout laid out as the C side's of its role. */
    private static void sameAsC(PerfTool tool, List<String> opts) throws Exception {
        sameAsC(tool, Topology.LOOPBACK, true, opts);
    }

    /** As {@link #sameAsC(PerfTool, List)} in {@code where}; without {@code gidIndex} no side is given -x. */
    private static List<Pair> sameAsC(PerfTool tool, Topology where, boolean gidIndex, List<String> opts) throws Exception {
        AgainstC r = AgainstC.run(tool, where, opts, opts, gidIndex);
        r.assertSameAsC(PerftestCapabilityOptionsDeviceTest::errors);
        return List.of(r.cc(), r.jc(), r.cj());
    }

    /** The lines of a side's stdout that start with {@code prefix}. */
    private static List<String> lines(Run r, String prefix) {
        return r.out().stream().filter(l -> l.startsWith(prefix)).toList();
    }

    /** Each Java side of {@code pairs} (C/C, Java client, Java server) prints the lines starting with {@code prefix} as C. */
    private static void sameLines(List<Pair> pairs, String prefix, int count) {
        Pair cc = pairs.get(0), jc = pairs.get(1), cj = pairs.get(2);
        String all = "C/C:\n" + cc + "\nJava client:\n" + jc + "\nJava server:\n" + cj;
        assertThat(cc.server().status()).as(all).isZero();
        assertThat(cc.client().status()).as(all).isZero();
        assertThat(lines(jc.client(), prefix)).as(all).isEqualTo(lines(cc.client(), prefix)).hasSize(count);
        assertThat(lines(cj.server(), prefix)).as(all).isEqualTo(lines(cc.server(), prefix)).hasSize(count);
    }

    @Test
    @Timeout(240)
    void portCounters() throws Exception {
        sameAsC(PerfTool.SEND_LAT, List.of("-W", "hw_counters/sent_pkts,hw_counters/rcvd_pkts", "-n", "10"));
        // a counter the port does not have: the run ends before it listens
        aloneAsC(PerfTool.WRITE_BW, List.of("--report-counters=counters/no_such_counter", "-n", "10", "-p", "19498", "-d",
                TestBed.loopback().device()));
    }

    @Test
    @Timeout(240)
    void linkLayerForcedToInfiniBand() throws Exception {
        // rxe's port is Ethernet; perftest takes the link layer given
        sameLines(sameAsC(PerfTool.SEND_LAT, Topology.LOOPBACK, true, List.of("--force-link=IB", "-n", "10")),
                " Link type       : IB", 1);
    }

    @Test
    @Timeout(240)
    void destinationLid() throws Exception {
        // on RoCE the address handle's LID is not used; the remote address line shows the LID given
        List<Pair> pairs = sameAsC(PerfTool.WRITE_BW, Topology.LOOPBACK, true, List.of("--dlid=3", "-n", "10"));
        for (Pair p : pairs) {
            assertThat(p.server().status()).as(p.toString()).isZero();
            assertThat(p.client().status()).as(p.toString()).isZero();
            assertThat(lines(p.server(), " remote address: LID 0x03 ")).as(p.toString()).hasSize(1);
            assertThat(lines(p.client(), " remote address: LID 0x03 ")).as(p.toString()).hasSize(1);
        }
    }

    @Test
    @Timeout(240)
    void ipv6GidWithRdmaCm() throws Exception {
        // without -x perftest picks the GID: with --ipv6 one that is not IPv4-mapped
        List<Pair> pairs = sameAsC(PerfTool.SEND_BW, Topology.HOSTS, false, List.of("--ipv6", "-R", "-n", "10"));
        sameLines(pairs, " GID index       : ", 1);
        // the GIDs each side prints: a link-local IPv6 address (fe80::), no IPv4-mapped one
        sameLines(pairs, " GID: 254:128:", 2);
    }

    @Test
    @Timeout(300)
    void mappedFileBuffer() throws Exception {
        java.nio.file.Path f = java.nio.file.Files.createTempFile("perftest-mmap", ".bin");
        try {
            java.nio.file.Files.write(f, new byte[1 << 20]);
            sameAsC(PerfTool.WRITE_BW, List.of("--mmap=" + f, "--mmap-offset=4096", "-n", "10"));
            endsAsC(PerfTool.SEND_BW, List.of("--mmap=/nonexistent/perftest-mmap", "-n", "10"));
            // a file shorter than the buffer: perftest's mmap maps past its end and the
            // registration fails there; the Java client ends the same way and leaves the file as it was
            java.nio.file.Files.write(f, new byte[4096]);
            List<String> server = List.of("-n", "5");
            List<String> client = List.of("--mmap=" + f, "-n", "5");
            Pair cc = PerftestDeviceTest.run(PerfTool.SEND_BW, false, false, Topology.LOOPBACK, server, client);
            Pair jc = PerftestDeviceTest.run(PerfTool.SEND_BW, false, true, Topology.LOOPBACK, server, client);
            Pair cj = PerftestDeviceTest.run(PerfTool.SEND_BW, true, false, Topology.LOOPBACK, server, client);
            String all = "C/C:\n" + cc + "\nJava client:\n" + jc + "\nJava server:\n" + cj;
            // the server's read of the keys fails: perftest's server says "to socket"
            assertThat(errors(cc.server())).as(all).contains(" Unable to read to socket/rdma_cm");
            assertThat(cj.server().status()).as(all).isEqualTo(cc.server().status());
            assertThat(errors(cj.server())).as(all).isEqualTo(errors(cc.server()));
            assertThat(cc.client().status()).as(all).isEqualTo(1);
            assertThat(errors(cc.client())).as(all).contains("Couldn't allocate MR");
            assertThat(jc.client().status()).as(all).isEqualTo(cc.client().status());
            assertThat(errors(jc.client())).as(all).isEqualTo(errors(cc.client()));
            assertThat(PerftestDeviceTest.shape(jc.client().out())).as(all).isEqualTo(PerftestDeviceTest.shape(cc.client().out()));
            assertThat(jc.server().status()).as(all).isEqualTo(cc.server().status());
            assertThat(java.nio.file.Files.size(f)).as("the file's size after both runs").isEqualTo(4096);
        } finally {
            java.nio.file.Files.deleteIfExists(f);
        }
    }
}
