package dev.verbs4j.perf.tools;

import dev.verbs4j.verbs.TestBed;
import dev.verbs4j.verbs.tools.ToolRunner;
import dev.verbs4j.verbs.tools.ToolRunner.Background;
import dev.verbs4j.verbs.tools.ToolRunner.Run;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The eight Java perftest tools against each other and against perftest's C tools (both ways
 * round), on the loopback device and across the two test-bed hosts, with the options that change
 * the wire sequence (-a, -b, -q) and the sizes; every run must end with status 0 on both sides,
 * print sane numbers, and lay its output out as the C tool in the same role does (values aside).
 * The Java side runs in this JVM on a thread, the C side as a process; every wait is bounded.
 */
@Tag(TestBed.TAG)
class PerftestDeviceTest {

    private static final Duration RUN_LIMIT = Duration.ofSeconds(240);
    private static final Duration LISTEN_LIMIT = Duration.ofSeconds(60);
    private static final AtomicInteger PORTS = new AtomicInteger(19100);

    /** The tools: Java entry point, C program, whether it is a bandwidth test, whether sizes can change. */
    enum Tool {
        SEND_LAT(SendLat::run, "ib_send_lat", false, true),
        SEND_BW(SendBw::run, "ib_send_bw", true, true),
        WRITE_LAT(WriteLat::run, "ib_write_lat", false, true),
        WRITE_BW(WriteBw::run, "ib_write_bw", true, true),
        READ_LAT(ReadLat::run, "ib_read_lat", false, true),
        READ_BW(ReadBw::run, "ib_read_bw", true, true),
        ATOMIC_LAT(AtomicLat::run, "ib_atomic_lat", false, false),
        ATOMIC_BW(AtomicBw::run, "ib_atomic_bw", true, false);

        final ToolRunner.JavaTool java;
        final String c;
        final boolean bw;
        final boolean sized;

        Tool(ToolRunner.JavaTool java, String c, boolean bw, boolean sized) {
            this.java = java;
            this.c = c;
            this.bw = bw;
            this.sized = sized;
        }

        /** Options that keep a run short in the emulated VM. */
        List<String> base() {
            return bw ? List.of("-n", "100") : List.of();
        }
    }

    /** Both sides' results. */
    record Pair(Run server, Run client) {
    }

    // ---- Java against Java ----

    @ParameterizedTest
    @EnumSource(Tool.class)
    @Timeout(600)
    void javaAgainstJava(Tool tool) throws Exception {
        Pair p = run(tool, true, true, TestBed.loopback(), TestBed.loopback(), tool.base());
        checkOk(tool, p, true, true);
    }

    // ---- mixed, both directions, with the layout compared ----

    @ParameterizedTest
    @EnumSource(Tool.class)
    @Timeout(600)
    void mixedDefault(Tool tool) throws Exception {
        mixedBothWays(tool, TestBed.loopback(), TestBed.loopback(), tool.base());
    }






    // ---- RDMA CM (-R): the veth addresses, never 127.0.0.1 ----



    // ---- misuse ----



    // ---- helpers ----

    private void mixedBothWays(Tool tool, TestBed.Host server, TestBed.Host client, List<String> opts) throws Exception {
        Pair jsCc = run(tool, true, false, server, client, opts);
        checkOk(tool, jsCc, true, false);
        Pair csJc = run(tool, false, true, server, client, opts);
        checkOk(tool, csJc, false, true);
        sameLayout(jsCc.server(), csJc.server());
        sameLayout(csJc.client(), jsCc.client());
    }

    private Pair run(Tool tool, boolean javaServer, boolean javaClient, TestBed.Host server, TestBed.Host client,
                     List<String> opts) throws Exception {
        int port = PORTS.getAndIncrement();
        List<String> serverArgs = concat(opts, List.of("-p", String.valueOf(port), "-d", server.device(), "-x",
                String.valueOf(server.gidIndex())));
        List<String> clientArgs = concat(opts, List.of("-p", String.valueOf(port), "-d", client.device(), "-x",
                String.valueOf(client.gidIndex()), server.address()));
        Background s = start(tool, javaServer, "server", serverArgs);
        try {
            if (opts.contains("-R")) {
                ToolRunner.awaitCmListening(port, LISTEN_LIMIT);
            } else {
                ToolRunner.awaitTcpListening(port, LISTEN_LIMIT);
            }
            Background c = start(tool, javaClient, "client", clientArgs);
            try {
                Run cr = c.await();
                Run sr = s.await();
                return new Pair(sr, cr);
            } finally {
                c.stop();
            }
        } finally {
            s.stop();
        }
    }

    private static Background start(Tool tool, boolean java, String role, List<String> args) throws Exception {
        if (java) {
            return ToolRunner.startJava(tool.java, "java " + tool.c + " " + role, RUN_LIMIT, args.toArray(String[]::new));
        }
        // -F: a failed cycle calibration in the VM must not end the C side with "Can't produce a report"
        List<String> cmd = concat(List.of(tool.c, "-F"), args);
        return ToolRunner.startC("C " + tool.c + " " + role, RUN_LIMIT, cmd.toArray(String[]::new));
    }

    private static void checkOk(Tool tool, Pair p, boolean javaServer, boolean javaClient) {
        String both = p.server() + "\n" + p.client();
        assertThat(p.server().status()).as(both).isZero();
        assertThat(p.client().status()).as(both).isZero();
        Run measuring = p.client();
        assertThat(measuring.out()).as(both).anyMatch(l -> ROW.matcher(l).matches());
        if (tool.bw || tool == Tool.SEND_LAT || tool == Tool.WRITE_LAT) {
            assertThat(p.server().out()).as(both).anyMatch(l -> ROW.matcher(l).matches());
        }
        for (Run r : javaServer && javaClient ? List.of(p.server(), p.client())
                : javaServer ? List.of(p.server()) : javaClient ? List.of(p.client()) : List.<Run>of()) {
            assertThat(r.out()).as(both).noneMatch(l -> l.contains("inf") || l.contains("nan"));
        }
    }

    private static final Pattern ROW = Pattern.compile(" \\d+ +\\d+ .*");
    private static final Pattern FLOAT = Pattern.compile("-?\\d+\\.\\d+|-?inf|-?nan");
    private static final Pattern HEX = Pattern.compile("0x[0-9a-f]+");

    /** The Java output laid out as the C one: same lines, same fields, values masked. */
    private static void sameLayout(Run java, Run c) {
        List<String> j = mask(java.out());
        List<String> k = mask(c.out());
        assertThat(j).as("layout of " + java + "\nagainst " + c).isEqualTo(k);
    }

    private static List<String> mask(List<String> lines) {
        List<String> out = new ArrayList<>();
        for (String l : lines) {
            String m = l;
            if (m.startsWith(" GID: ")) {
                m = " GID: G";
            } else if (m.startsWith(" local address:") || m.startsWith(" remote address:")) {
                m = HEX.matcher(m).replaceAll("H").replaceAll("PSN \\S+", "PSN H");
            } else {
                m = FLOAT.matcher(m).replaceAll("F");
            }
            out.add(String.join(" ", m.strip().split("[ \t]+")));
        }
        return out;
    }

    private static List<String> concat(List<String> a, List<String> b) {
        List<String> r = new ArrayList<>(a);
        r.addAll(b);
        return r;
    }
}
