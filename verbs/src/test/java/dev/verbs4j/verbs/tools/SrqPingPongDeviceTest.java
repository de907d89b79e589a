package dev.verbs4j.verbs.tools;

import dev.verbs4j.verbs.TestBed;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
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
class SrqPingPongDeviceTest {

    private static final int ITERS = 50;
    private static final int QPS = 4;
    private static final int SIZE = 4096;
    private static final Duration RUN_LIMIT = Duration.ofSeconds(90);

    record Run(String who, int status, List<String> out, List<String> err) {

        @Override
        public String toString() {
            return who + " exited " + status + "\n  stdout: " + String.join("\n          ", out)
                    + "\n  stderr: " + String.join("\n          ", err);
        }
    }

    interface Background {
        Run await() throws Exception;

        void stop();
    }

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
            assertThat(c.status).as("C status of %s", what).isNotZero();
            assertThat(java.status).as("status of %s: %s / %s", what, c, java).isEqualTo(c.status);
            assertThat(java.err).as("stderr of %s", what).containsExactlyElementsOf(masked(c.err));
            assertThat(masked(java.out)).as("stdout of %s", what).containsExactlyElementsOf(masked(c.out));
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
            assertThat(r.status).as("%s", r).isZero();
            assertThat(r.err).as("stderr of %s", r).isEmpty();
            assertThat(r.out).as("%s", r).hasSize(2 * QPS + 2).noneMatch(l -> l.startsWith("invalid data"));
            Matcher bytes = BYTES.matcher(r.out.get(2 * QPS));
            assertThat(bytes.matches()).as("bytes line of %s", r).isTrue();
            assertThat(Long.parseLong(bytes.group(1))).isEqualTo(2L * SIZE * ITERS);
            Matcher iters = ITERS_LINE.matcher(r.out.get(2 * QPS + 1));
            assertThat(iters.matches()).as("iters line of %s", r).isTrue();
            assertThat(Integer.parseInt(iters.group(1))).isEqualTo(ITERS);
            assertThat(iters.group(2)).isEqualTo(bytes.group(2));
        }
        for (int i = 0; i < QPS; i++) {
            sameAddress(server, QPS + i, client, i);
            sameAddress(client, QPS + i, server, i);
        }
        System.out.printf("srq %s / %s: server \"%s\", client \"%s\"%n", server.who, client.who,
                server.out.getLast(), client.out.getLast());
    }

    /** Line {@code remoteLine} of {@code a} (a remote address) names what line {@code localLine} of {@code b} printed. */
    private static void sameAddress(Run a, int remoteLine, Run b, int localLine) {
        Matcher remote = ADDRESS.matcher(a.out.get(remoteLine));
        Matcher local = ADDRESS.matcher(b.out.get(localLine));
        assertThat(remote.matches()).as("remote address line %d of %s", remoteLine, a).isTrue();
        assertThat(local.matches()).as("local address line %d of %s", localLine, b).isTrue();
        assertThat(remote.group(1)).isEqualTo("remote");
        assertThat(local.group(1)).isEqualTo("local");
        for (int g = 2; g <= 5; g++) {
            assertThat(remote.group(g)).as("field %d of %s's remote address %d", g, a.who, localLine).isEqualTo(local.group(g));
        }
        assertThat(local.group(5)).as("GID of %s", b.who).startsWith("::ffff:");
    }

    private static Background startJava(String who, String[] args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        CompletableFuture<Integer> status = new CompletableFuture<>();
        Thread t = Thread.ofPlatform().name(who).daemon().start(() -> {
            try {
                status.complete(SrqPingPong.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                        new PrintStream(err, true, StandardCharsets.UTF_8)));
            } catch (Throwable e) {
                status.completeExceptionally(e);
            }
        });
        return new Background() {
            @Override
            public Run await() throws Exception {
                int rc;
                try {
                    rc = status.get(RUN_LIMIT.toSeconds(), TimeUnit.SECONDS);
                } catch (TimeoutException e) {
                    stop();
                    throw new AssertionError(who + " (" + String.join(" ", args) + ") did not finish in " + RUN_LIMIT
                            + "; so far: " + out.toString(StandardCharsets.UTF_8) + err.toString(StandardCharsets.UTF_8));
                }
                return new Run(who, rc, lines(out.toString(StandardCharsets.UTF_8)), lines(err.toString(StandardCharsets.UTF_8)));
            }

            @Override
            public void stop() {
                if (t.isAlive()) {
                    t.interrupt();
                    try {
                        t.join(10_000);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            }
        };
    }

    private static Background startC(String who, String[] args) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add("ibv_srq_pingpong");
        cmd.addAll(List.of(args));
        Path outFile = Files.createTempFile("srq_pingpong", ".out");
        Path errFile = Files.createTempFile("srq_pingpong", ".err");
        Process p = new ProcessBuilder(cmd).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectOutput(outFile.toFile()).redirectError(errFile.toFile()).start();
        return new Background() {
            @Override
            public Run await() throws Exception {
                try {
                    if (!p.waitFor(RUN_LIMIT.toSeconds(), TimeUnit.SECONDS)) {
                        stop();
                        throw new AssertionError(who + " (" + String.join(" ", cmd) + ") did not finish in " + RUN_LIMIT
                                + "; so far: " + Files.readString(outFile) + Files.readString(errFile));
                    }
                    return new Run(who, p.exitValue(), lines(Files.readString(outFile)), lines(Files.readString(errFile)));
                } finally {
                    Files.deleteIfExists(outFile);
                    Files.deleteIfExists(errFile);
                }
            }

            @Override
            public void stop() {
                if (p.isAlive()) {
                    p.destroyForcibly();
                    try {
                        p.waitFor(10, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            }
        };
    }

    private static List<String> lines(String s) {
        if (s.isEmpty()) {
            return List.of();
        }
        String t = s.endsWith("\n") ? s.substring(0, s.length() - 1) : s;
        return List.of(t.split("\n", -1));
    }
}
