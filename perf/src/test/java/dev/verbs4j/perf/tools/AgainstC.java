package dev.verbs4j.perf.tools;

import dev.verbs4j.perf.tools.PerftestDeviceTest.Pair;
import dev.verbs4j.perf.tools.PerftestDeviceTest.Topology;
import dev.verbs4j.verbs.ToolRunner.Run;

import java.util.List;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The three pairs that hold each Java side against C, run one after the other: both sides in C
 * ({@code cc}), a Java client against a C server ({@code jc}) and a Java server against a C client
 * ({@code cj}); and the checks that each Java side ends as the C side of its role did.
 */
record AgainstC(Pair cc, Pair jc, Pair cj) {

    /** The three pairs of {@code tool} in {@code where}; without {@code gidIndex} no side is given -x. */
    static AgainstC run(PerfTool tool, Topology where, List<String> serverOpts, List<String> clientOpts, boolean gidIndex)
            throws Exception {
        Pair cc = PerftestDeviceTest.run(tool, false, false, where, serverOpts, clientOpts, gidIndex);
        Pair jc = PerftestDeviceTest.run(tool, false, true, where, serverOpts, clientOpts, gidIndex);
        Pair cj = PerftestDeviceTest.run(tool, true, false, where, serverOpts, clientOpts, gidIndex);
        return new AgainstC(cc, jc, cj);
    }

    /** As {@link #run(PerfTool, Topology, List, List, boolean)}, every side given -x. */
    static AgainstC run(PerfTool tool, Topology where, List<String> serverOpts, List<String> clientOpts) throws Exception {
        return run(tool, where, serverOpts, clientOpts, true);
    }

    /** All three pairs' output, for a failure's description. */
    String all() {
        return "C/C:\n" + cc + "\nJava client:\n" + jc + "\nJava server:\n" + cj;
    }

    /** Each Java side's status and stderr (as {@code stderr} compares them) are the C side's of its role. */
    void assertEndsAsC(Function<Run, List<String>> stderr) {
        String all = all();
        assertEndsAs(jc.client(), cc.client(), all, stderr, false);
        assertEndsAs(cj.server(), cc.server(), all, stderr, false);
    }

    /** As {@link #assertEndsAsC}, and each Java side's stdout laid out as the C side's of its role. */
    void assertSameAsC(Function<Run, List<String>> stderr) {
        String all = all();
        assertEndsAs(jc.client(), cc.client(), all, stderr, true);
        assertEndsAs(cj.server(), cc.server(), all, stderr, true);
    }

    private static void assertEndsAs(Run java, Run c, String all, Function<Run, List<String>> stderr, boolean layout) {
        assertThat(java.status()).as(all).isEqualTo(c.status());
        assertThat(stderr.apply(java)).as(all).isEqualTo(stderr.apply(c));
        if (layout) {
            assertThat(PerftestDeviceTest.shape(java.out())).as(all).isEqualTo(PerftestDeviceTest.shape(c.out()));
        }
    }
}
