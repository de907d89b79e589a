package dev.verbs4j.tools.vipl;

import dev.verbs4j.verbs.TestBed;
import dev.verbs4j.verbs.ToolRunner;
import dev.verbs4j.verbs.ToolRunner.Background;
import dev.verbs4j.verbs.ToolRunner.Run;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code vipl-pingpong} and {@code vipl-bw} on Soft-RoCE: server on host B, client on host A, both
 * in this JVM on threads; polling and waiting, with and without a receive CQ; a missing peer ends
 * with a message within the timeout; and the latency of {@code vipl-pingpong} next to the C
 * {@code ibv_rc_pingpong}'s on the same run.
 */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_3)
class ViplToolsDeviceTest {

    private static final Duration RUN_LIMIT = Duration.ofSeconds(100);
    private static final Pattern ROW = Pattern.compile("(\\d+) +(\\d+) +(\\d+\\.\\d+) +(\\d+(?:\\.\\d+)?)");

    /** Runs server (host B) and client (host A) of {@code tool} with the options; returns the client's rows. */
    private static List<double[]> pair(ToolRunner.JavaTool tool, String name, int port, String... options) throws Exception {
        return pair(tool, name, port, List.of(), options);
    }

    /** As {@link #pair(ToolRunner.JavaTool, String, int, String...)}, {@code clientOnly} given to the client alone. */
    private static List<double[]> pair(ToolRunner.JavaTool tool, String name, int port, List<String> clientOnly, String... options)
            throws Exception {
        TestBed.Host a = TestBed.hostA();
        TestBed.Host b = TestBed.hostB();
        List<String> common = new ArrayList<>(List.of("-p", String.valueOf(port), "-t", "60"));
        common.addAll(List.of(options));
        List<String> server = new ArrayList<>(common);
        server.addAll(List.of("-d", b.device()));
        List<String> client = new ArrayList<>(common);
        client.addAll(clientOnly);
        client.addAll(List.of("-d", a.device(), b.address()));
        long t0 = System.nanoTime();
        Background s = ToolRunner.startJava(tool, name + " server", RUN_LIMIT, server.toArray(String[]::new));
        try {
            Run c = ToolRunner.startJava(tool, name + " client", RUN_LIMIT, client.toArray(String[]::new)).await();
            Run r = s.await();
            System.out.printf(Locale.ROOT, "%s %s (%.1f s):%n  %s%n", name, String.join(" ", options), (System.nanoTime() - t0) / 1e9,
                    String.join("\n  ", c.out()));
            assertThat(c.status()).as("%s%n%s", c, r).isZero();
            assertThat(r.status()).as("%s%n%s", r, c).isZero();
            assertThat(c.err()).as("%s", c).isEmpty();
            assertThat(r.err()).as("%s", r).isEmpty();
            assertThat(c.out()).as("%s", c).anyMatch(l -> l.startsWith("#bytes"));
            List<double[]> rows = new ArrayList<>();
            for (String l : c.out()) {
                Matcher m = ROW.matcher(l.strip());
                if (m.matches()) {
                    rows.add(new double[]{Double.parseDouble(m.group(1)), Double.parseDouble(m.group(2)),
                            Double.parseDouble(m.group(3)), Double.parseDouble(m.group(4))});
                }
            }
            return rows;
        } finally {
            s.stop();
        }
    }

    private static void checkRows(List<double[]> rows, int iters, int... sizes) {
        assertThat(rows).hasSize(sizes.length);
        for (int i = 0; i < sizes.length; i++) {
            double[] r = rows.get(i);
            assertThat(r[0]).isEqualTo(sizes[i]);
            assertThat(r[1]).isEqualTo(iters);
            assertThat(r[2]).as("column 3 of size %d", sizes[i]).isPositive().isFinite();
            assertThat(r[3]).as("column 4 of size %d", sizes[i]).isPositive().isFinite();
        }
    }

    @Test
    @Timeout(240)
    void pingpongPollingAndWaiting() throws Exception {
        checkRows(pair(ViplPingPong::run, "vipl-pingpong", 18601, "-s", "64,4096", "-n", "10"), 10, 64, 4096);
        checkRows(pair(ViplPingPong::run, "vipl-pingpong", 18602, "-s", "64,4096", "-n", "10", "-w"), 10, 64, 4096);
        // the server takes the client's reliability level
        checkRows(pair(ViplPingPong::run, "vipl-pingpong", 18603, List.of("-r", "reliable-reception"), "-s", "1,65536",
                "-n", "5", "-w", "-c"), 5, 1, 65536);
        // Unreliable (UC): a receive is always posted before its message can come, so nothing is lost
        checkRows(pair(ViplPingPong::run, "vipl-pingpong", 18604, List.of("-r", "unreliable"), "-s", "64,4096",
                "-n", "10"), 10, 64, 4096);
    }

    @Test
    @Timeout(240)
    void bwPollingAndWaiting() throws Exception {
        checkRows(pair(ViplBw::run, "vipl-bw", 18611, "-s", "4096,65536", "-n", "200", "-q", "16"), 200, 4096, 65536);
        checkRows(pair(ViplBw::run, "vipl-bw", 18612, "-s", "4096,65536", "-n", "200", "-q", "16", "-w", "-c", "-V"),
                200, 4096, 65536);
        // Unreliable: the credits keep a receive posted for every message in flight
        checkRows(pair(ViplBw::run, "vipl-bw", 18613, List.of("-r", "unreliable"), "-s", "4096", "-n", "200", "-q", "16",
                "-V"), 200, 4096);
    }

    @Test
    @Timeout(240)
    void failuresEndWithAMessageWithinTheTimeout() throws Exception {
        TestBed.Host a = TestBed.hostA();
        TestBed.Host b = TestBed.hostB();
        // untimed, once: a cold JVM's first VIPL connect loads and compiles the library (15-20 s in the VM)
        ToolRunner.startJava(ViplPingPong::run, "client without server, warming up", RUN_LIMIT,
                "-d", a.device(), "-p", "18619", "-t", "1", b.address()).await();
        long t0 = System.nanoTime();
        Run c = ToolRunner.startJava(ViplPingPong::run, "client without server", RUN_LIMIT,
                "-d", a.device(), "-p", "18620", "-t", "3", b.address()).await();
        double seconds = (System.nanoTime() - t0) / 1e9;
        System.out.printf(Locale.ROOT, "client without server: exit %d after %.1f s: %s%n", c.status(), seconds, c.err());
        assertThat(c.status()).as("%s", c).isEqualTo(1);
        assertThat(c.err()).as("%s", c).singleElement().asString().startsWith("vipl-pingpong: VipConnectRequest: VIP_");
        assertThat(seconds).isLessThan(15);

        t0 = System.nanoTime();
        Run s = ToolRunner.startJava(ViplBw::run, "server without client", RUN_LIMIT, "-d", b.device(), "-p", "18621", "-t", "2")
                .await();
        seconds = (System.nanoTime() - t0) / 1e9;
        assertThat(s.status()).as("%s", s).isEqualTo(1);
        assertThat(s.err()).as("%s", s).singleElement().asString().startsWith("vipl-bw: VipConnectWait: VIP_TIMEOUT");
        assertThat(seconds).isLessThan(15);

        // a vipl-bw client at a vipl-pingpong server: refused, both end with a message
        Background ps = ToolRunner.startJava(ViplPingPong::run, "pingpong server", RUN_LIMIT, "-d", b.device(), "-p", "18622",
                "-t", "60");
        try {
            Run bc = ToolRunner.startJava(ViplBw::run, "bw client", RUN_LIMIT, "-d", a.device(), "-p", "18622", "-t", "60",
                    b.address()).await();
            Run pr = ps.await();
            System.out.println("bw client at a pingpong server: " + bc.err() + " / " + pr.err());
            assertThat(pr.status()).as("%s", pr).isEqualTo(1);
            assertThat(pr.err()).as("%s", pr).singleElement().asString()
                    .isEqualTo("vipl-pingpong: refused the client: the client is vipl-bw, this server is vipl-pingpong");
            assertThat(bc.status()).as("%s", bc).isEqualTo(1);
            assertThat(bc.err()).as("%s", bc).singleElement().asString().startsWith("vipl-bw: ");
        } finally {
            ps.stop();
        }
    }

    @Test
    @Timeout(240)
    void pingpongNextToIbvRcPingpong() throws Exception {
        int size = 4096;
        int iters = 100;
        TestBed.Host lo = TestBed.loopback();
        int port = 18630;
        String[] common = {"-d", lo.device(), "-g", String.valueOf(lo.gidIndex()), "-p", String.valueOf(port),
                "-s", String.valueOf(size), "-n", String.valueOf(iters)};
        Background cs = ToolRunner.startC("ibv_rc_pingpong server", RUN_LIMIT, concat("ibv_rc_pingpong", common));
        double cUsecPerIter;
        try {
            ToolRunner.awaitTcpListening(port, Duration.ofSeconds(30));
            Run cc = ToolRunner.startC("ibv_rc_pingpong client", RUN_LIMIT, concat(concat("ibv_rc_pingpong", common), "127.0.0.1"))
                    .await();
            Run cr = cs.await();
            assertThat(cc.status()).as("%s", cc).isZero();
            assertThat(cr.status()).as("%s", cr).isZero();
            Matcher m = Pattern.compile("(\\d+) iters in (\\d+\\.\\d+) seconds = (\\d+\\.\\d+) usec/iter")
                    .matcher(cc.out().getLast());
            assertThat(m.matches()).as("%s", cc).isTrue();
            cUsecPerIter = Double.parseDouble(m.group(3));
        } finally {
            cs.stop();
        }
        List<double[]> rows = pair(ViplPingPong::run, "vipl-pingpong", 18631, "-s", String.valueOf(size), "-n", String.valueOf(iters));
        checkRows(rows, iters, size);
        double vipl = rows.getFirst()[2];
        // ibv_rc_pingpong's usec/iter is a round trip; half of it is the one-way time vipl-pingpong prints
        double c = cUsecPerIter / 2;
        assertThat(c).isPositive().isFinite();
        System.out.printf(Locale.ROOT, "[vipl] size %d: vipl-pingpong t_avg %.2f us, ibv_rc_pingpong %.2f us"
                + " (one-way, %d iterations; vipl rxe_a->rxe_b, C on %s)%n", size, vipl, c, iters, lo.device());
    }

    private static String[] concat(String first, String[] rest) {
        String[] a = new String[rest.length + 1];
        a[0] = first;
        System.arraycopy(rest, 0, a, 1, rest.length);
        return a;
    }

    private static String[] concat(String[] first, String last) {
        String[] a = java.util.Arrays.copyOf(first, first.length + 1);
        a[first.length] = last;
        return a;
    }
}
