package dev.verbs4j.perf.tools;

import dev.verbs4j.perf.tools.PerftestDeviceTest.Pair;
import dev.verbs4j.perf.tools.PerftestDeviceTest.Topology;
import dev.verbs4j.verbs.TestBed;
import dev.verbs4j.verbs.ToolRunner;
import dev.verbs4j.verbs.ToolRunner.Background;
import dev.verbs4j.verbs.ToolRunner.Run;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * perftest 4.5's options of the timed runs on Soft-RoCE, against the C tools: {@code --cpu_util}
 * in duration mode (the CPU column laid out as perftest's) and {@code --run_infinitely} (a row per
 * interval on the sides that print, until the run is stopped; with {@code -b} on both sides).
 */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_3)
class PerftestTimedOptionsDeviceTest {

    @BeforeAll
    static void warmUp() throws Exception {
        PerftestDeviceTest.warmUpOnce();
    }

    @Test
    @Timeout(240)
    void cpuUtilInDurationMode() throws Exception {
        PerftestOptionsDeviceTest.layoutBothWays(PerfTool.SEND_BW, Topology.LOOPBACK, List.of("-D", "4", "--cpu_util"));
    }

    private static final AtomicInteger PORTS = new AtomicInteger(19400);
    private static final Duration LIMIT = Duration.ofSeconds(90);

    private static Background start(PerfTool tool, boolean java, String role, List<String> args) throws Exception {
        if (java) {
            return ToolRunner.startJava(tool.java, "java " + tool.c + " " + role, LIMIT, args.toArray(String[]::new));
        }
        List<String> cmd = new ArrayList<>(List.of("stdbuf", "-oL", tool.c, "-F"));
        cmd.addAll(args);
        return ToolRunner.startC("C " + tool.c + " " + role, LIMIT, cmd.toArray(String[]::new));
    }

    /** A --run_infinitely pair run for {@code seconds}, then stopped: what each side printed. */
    private static Pair forever(PerfTool tool, boolean javaServer, boolean javaClient, int seconds, String... opts)
            throws Exception {
        int port = PORTS.getAndIncrement();
        TestBed.Host host = TestBed.loopback();
        List<String> common = new ArrayList<>(List.of(opts));
        common.addAll(List.of("--run_infinitely", "-D", "2", "-p", String.valueOf(port), "-d", host.device(), "-x",
                String.valueOf(host.gidIndex())));
        long t0 = System.nanoTime();
        Background s = start(tool, javaServer, "server", common);
        Background c = null;
        long stopping = 0;
        boolean clientEnded = false;
        try {
            ToolRunner.awaitTcpListening(port, LIMIT);
            List<String> clientArgs = new ArrayList<>(common);
            clientArgs.add(host.address());
            c = start(tool, javaClient, "client", clientArgs);
            // the length of the run: rows every 2 s until the sides are stopped
            Thread.sleep(seconds * 1000L);
            assertThat(c.isAlive()).as("the client runs on").isTrue();
        } finally {
            stopping = System.nanoTime();
            if (c != null) {
                c.stop();
                clientEnded = !c.isAlive();
            }
            s.stop();
        }
        Pair p = new Pair(s.await(), c.await(), javaServer, javaClient);
        // stopped first, with its peer still running (and streaming with -b): it ends on the interrupt
        assertThat(clientEnded).as("the client ends when stopped\n" + p).isTrue();
        long end = System.nanoTime();
        System.err.printf(Locale.ROOT, "[perftest] %s %s server %s client %s: %d ms, stopping %d ms%n", tool.c,
                String.join(" ", opts), javaServer ? "Java" : "C", javaClient ? "Java" : "C", (end - t0) / 1_000_000,
                (end - stopping) / 1_000_000);
        return p;
    }

    @Test
    @Timeout(240)
    void runInfinitelyPrintsARowPerInterval() throws Exception {
        // ib_write_bw: the client prints; ib_send_bw: the server prints too (its receives)
        Pair jc = forever(PerfTool.WRITE_BW, false, true, 9);
        List<String> rows = PerftestDeviceTest.rows(jc.client());
        assertThat(rows).as(jc.toString()).hasSizeGreaterThanOrEqualTo(2);
        assertThat(rows).as(jc.toString()).allMatch(r -> r.matches(" 65536 +\\d+ +0\\.00 +\\d+\\.\\d\\d *\\t\\t   \\d+\\.\\d{6} *"));
        Pair cj = forever(PerfTool.SEND_BW, true, false, 9);
        assertThat(PerftestDeviceTest.rows(cj.server())).as(cj.toString()).hasSizeGreaterThanOrEqualTo(2);
        // (the C client's rows are not counted: it calibrates its clock for every row, seconds in the VM)
    }

    /** What a side printed with each run of result rows (as many as the run lasted) shaped as one line. */
    private static List<String> shapeOfRun(List<String> out) {
        List<String> shaped = PerftestDeviceTest.shape(out);
        List<String> r = new ArrayList<>();
        for (int i = 0; i < out.size(); i++) {
            boolean row = ROW.matcher(out.get(i)).matches();
            if (!row || i == 0 || !ROW.matcher(out.get(i - 1)).matches()) {
                r.add(shaped.get(i));
            }
        }
        return r;
    }

    private static final Pattern ROW = Pattern.compile(" \\d+ +\\d+ .*");

    @Test
    @Timeout(240)
    void runInfinitelyBidirectional() throws Exception {
        // ib_write_bw and ib_read_bw -b: both sides stream at once, with no barrier before, and both
        // print a row per interval (the sum of both directions: twice the bytes and messages per
        // operation); ib_send_bw refuses -b with --run_infinitely, as perftest does
        for (PerfTool tool : List.of(PerfTool.WRITE_BW, PerfTool.READ_BW)) {
            Pair cServer = forever(tool, false, true, SECONDS_BIDIR, "-b");
            Pair cClient = forever(tool, true, false, SECONDS_BIDIR, "-b");
            for (Pair p : List.of(cServer, cClient)) {
                Run java = p.javaServer() ? p.server() : p.client();
                Run c = p.javaServer() ? p.client() : p.server();
                assertThat(PerftestDeviceTest.rows(java)).as(p.toString()).hasSizeGreaterThanOrEqualTo(2)
                        .allMatch(r -> r.matches(" 65536 +\\d+ +0\\.00 +\\d+\\.\\d\\d *\\t\\t   \\d+\\.\\d{6} *"));
                assertThat(PerftestDeviceTest.rows(c)).as(p.toString()).isNotEmpty();
            }
            // each Java side laid out as the C side in its role, line for line, up to the number of rows
            assertThat(shapeOfRun(cClient.server().out())).as(cClient + "\nagainst " + cServer)
                    .isEqualTo(shapeOfRun(cServer.server().out()));
            assertThat(shapeOfRun(cServer.client().out())).as(cServer + "\nagainst " + cClient)
                    .isEqualTo(shapeOfRun(cClient.client().out()));
        }
    }

    /** The length of a bidirectional run: rows every 2 s on both sides. */
    private static final int SECONDS_BIDIR = 8;
}
