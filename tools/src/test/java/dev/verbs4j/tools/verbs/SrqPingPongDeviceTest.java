package dev.verbs4j.tools.verbs;

import dev.verbs4j.verbs.ToolRunner;
import dev.verbs4j.verbs.TestBed;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.verbs4j.verbs.ToolRunner.Background;
import dev.verbs4j.verbs.ToolRunner.Run;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code srq_pingpong} against rdma-core's {@code ibv_srq_pingpong} on the loopback device, both
 * ways round (Java server with C client, C server with Java client), with several queue pairs
 * sharing one receive queue. The Java side runs in this JVM on a thread, the C side as a
 * process; every wait is bounded and leftovers are killed or interrupted.
 */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_1)
class SrqPingPongDeviceTest {

    private static final int ITERS = 50;
    private static final int QPS = 4;
    private static final int SIZE = 4096;
    private static final Duration RUN_LIMIT = Duration.ofSeconds(90);

    @Test
    @Timeout(300)
    void javaServerCClientLoopback() throws Exception {
        pair(18760, true, "-c");
    }

    @Test
    @Timeout(300)
    void cServerJavaClientLoopback() throws Exception {
        pair(18761, false, "-c");
    }

    @Test
    @Timeout(300)
    void bothWaysWithEvents() throws Exception {
        pair(18762, true, "-e");
        pair(18763, false, "-e");
    }

    @Test
    @Timeout(300)
    void optionErrorsMatchTheCTool() throws Exception {
        String lo = TestBed.loopback().device();
        List<String[]> cases = List.of(new String[]{"-x"}, new String[]{"a", "b"}, new String[]{"-m", "300"},
                new String[]{"-s", "0"}, new String[]{"-q", "300"}, new String[]{"-q", "20", "-r", "10"},
                new String[]{"-d", "no_such_dev", "-p", "18799", "127.0.0.1"},
                new String[]{"-d", lo, "-g", "999", "-p", "18799", "127.0.0.1"});
        for (String[] args : cases) {
            Run c = startC("C", args).await();
            Run java = startJava("java", args).await();
            String what = String.join(" ", args);
            assertThat(c.status()).as("C status of %s", what).isNotZero();
            assertThat(java.status()).as("status of %s: %s / %s", what, c, java).isEqualTo(c.status());
            assertThat(java.err()).as("stderr of %s", what).containsExactlyElementsOf(masked(c.err()));
            assertThat(masked(java.out())).as("stdout of %s", what).containsExactlyElementsOf(masked(c.out()));
        }
    }

    private static List<String> masked(List<String> lines) {
        return lines.stream().map(l -> l.replace("ibv_", "").replaceAll("(QPN|PSN) 0x[0-9a-f]{6}", "$1 0xxxxxxx")).toList();
    }

    private void pair(int port, boolean javaServer, String... extra) throws Exception {
        TestBed.Host lo = TestBed.loopback();
        List<String> common = new ArrayList<>(List.of("-d", lo.device(), "-g", String.valueOf(lo.gidIndex()),
                "-p", String.valueOf(port), "-n", String.valueOf(ITERS), "-q", String.valueOf(QPS),
                "-s", String.valueOf(SIZE)));
        common.addAll(List.of(extra));
        String[] serverArgs = common.toArray(String[]::new);
        common.add(lo.address());
        String[] clientArgs = common.toArray(String[]::new);
        Background server = javaServer ? startJava("java server", serverArgs) : startC("C server", serverArgs);
        try {
            PingPongDeviceTest.awaitListening(port);
            Background client = javaServer ? startC("C client", clientArgs) : startJava("java client", clientArgs);
            Run c = client.await();
            Run s = server.await();
            check(s, c);
        } finally {
            server.stop();
        }
    }

    private static final Pattern ADDRESS = Pattern.compile(
            "  (local|remote) address: +LID 0x([0-9a-f]{4}), QPN 0x([0-9a-f]{6}), PSN 0x([0-9a-f]{6}), GID (\\S+)");
    private static final Pattern BYTES = Pattern.compile("(\\d+) bytes in (\\d+\\.\\d\\d) seconds = (\\d+\\.\\d\\d) Mbit/sec");
    private static final Pattern ITERS_LINE = Pattern.compile("(\\d+) iters in (\\d+\\.\\d\\d) seconds = (\\d+\\.\\d\\d) usec/iter");

    private static void check(Run server, Run client) {
        for (Run r : List.of(server, client)) {
            assertThat(r.status()).as("%s", r).isZero();
            assertThat(r.err()).as("stderr of %s", r).isEmpty();
            assertThat(r.out()).as("%s", r).hasSize(2 * QPS + 2).noneMatch(l -> l.startsWith("invalid data"));
            Matcher bytes = BYTES.matcher(r.out().get(2 * QPS));
            assertThat(bytes.matches()).as("bytes line of %s", r).isTrue();
            assertThat(Long.parseLong(bytes.group(1))).isEqualTo(2L * SIZE * ITERS);
            Matcher iters = ITERS_LINE.matcher(r.out().get(2 * QPS + 1));
            assertThat(iters.matches()).as("iters line of %s", r).isTrue();
            assertThat(Integer.parseInt(iters.group(1))).isEqualTo(ITERS);
            assertThat(iters.group(2)).isEqualTo(bytes.group(2));
        }
        for (int i = 0; i < QPS; i++) {
            sameAddress(server, QPS + i, client, i);
            sameAddress(client, QPS + i, server, i);
        }
        System.out.printf("srq %s / %s: server \"%s\", client \"%s\"%n", server.who(), client.who(),
                server.out().getLast(), client.out().getLast());
    }

    /** Line {@code remoteLine} of {@code a} (a remote address) names what line {@code localLine} of {@code b} printed. */
    private static void sameAddress(Run a, int remoteLine, Run b, int localLine) {
        Matcher remote = ADDRESS.matcher(a.out().get(remoteLine));
        Matcher local = ADDRESS.matcher(b.out().get(localLine));
        assertThat(remote.matches()).as("remote address line %d of %s", remoteLine, a).isTrue();
        assertThat(local.matches()).as("local address line %d of %s", localLine, b).isTrue();
        assertThat(remote.group(1)).isEqualTo("remote");
        assertThat(local.group(1)).isEqualTo("local");
        for (int g = 2; g <= 5; g++) {
            assertThat(remote.group(g)).as("field %d of %s's remote address %d", g, a.who(), localLine).isEqualTo(local.group(g));
        }
        assertThat(local.group(5)).as("GID of %s", b.who()).startsWith("::ffff:");
    }

    private static Background startJava(String who, String[] args) {
        return ToolRunner.startJava(SrqPingPong::run, who, RUN_LIMIT, args);
    }

    private static Background startC(String who, String[] args) throws IOException {
        String[] cmd = new String[args.length + 1];
        cmd[0] = "ibv_srq_pingpong";
        System.arraycopy(args, 0, cmd, 1, args.length);
        return ToolRunner.startC(who, RUN_LIMIT, cmd);
    }
}
