package dev.verbs4j.perf.tools;

import dev.verbs4j.perf.tools.PerftestDeviceTest.Pair;
import dev.verbs4j.perf.tools.PerftestDeviceTest.Topology;
import dev.verbs4j.verbs.TestBed;
import dev.verbs4j.verbs.ToolRunner;
import dev.verbs4j.verbs.ToolRunner.Background;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * perftest 4.5's options of the timed runs on Soft-RoCE, against the C tools: {@code --cpu_util}
 * in duration mode (the CPU column laid out as perftest's) and {@code --run_infinitely} (a row per
 * interval on the sides that print, until the run is stopped).
 */
@Tag(TestBed.TAG)
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
    private static Pair forever(PerfTool tool, boolean javaServer, boolean javaClient, int seconds) throws Exception {
        int port = PORTS.getAndIncrement();
        TestBed.Host host = TestBed.loopback();
        List<String> common = List.of("--run_infinitely", "-D", "2", "-p", String.valueOf(port), "-d", host.device(), "-x",
                String.valueOf(host.gidIndex()));
        Background s = start(tool, javaServer, "server", common);
        Background c = null;
        try {
            ToolRunner.awaitTcpListening(port, LIMIT);
            List<String> clientArgs = new ArrayList<>(common);
            clientArgs.add(host.address());
            c = start(tool, javaClient, "client", clientArgs);
            // the length of the run: rows every 2 s until the sides are stopped
            Thread.sleep(seconds * 1000L);
            assertThat(c.isAlive()).as("the client runs on").isTrue();
        } finally {
            if (c != null) {
                c.stop();
            }
            s.stop();
        }
        return new Pair(s.await(), c.await(), javaServer, javaClient);
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
}
