package dev.verbs4j.tools.verbs;

import dev.verbs4j.verbs.ToolRunner;
import dev.verbs4j.verbs.TestBed;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import dev.verbs4j.verbs.ToolRunner.Background;
import dev.verbs4j.verbs.ToolRunner.Run;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Java ping-pong tools against rdma-core's C ones, both ways round (Java server with C client,
 * C server with Java client), on the loopback device and between the two test-bed hosts; and
 * Java against Java. The Java side runs in this JVM on a thread, the C side as a process; every
 * wait is bounded and leftovers are killed or interrupted.
 */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_1)
class PingPongDeviceTest {

    private static final int ITERS = 100;
    /** Limit of one side's whole run (the VM is slow, but a run of 100 iterations takes well under a second there). */
    private static final Duration RUN_LIMIT = Duration.ofSeconds(90);
    /**
     * Limit of a server's start until it listens: the first Java side of the class runs in a young
     * JVM, which once needed more than 30 s with the host's CPUs busy; the wait ends when it listens.
     */
    private static final Duration LISTEN_LIMIT = Duration.ofSeconds(120);

    /** The tools by name: the Java entry point and the C program. */
    enum Tool {
        RC(RcPingPong::run, "ibv_rc_pingpong"),
        UC(UcPingPong::run, "ibv_uc_pingpong"),
        UD(UdPingPong::run, "ibv_ud_pingpong");

        final ToolRunner.JavaTool java;
        final String c;

        Tool(ToolRunner.JavaTool java, String c) {
            this.java = java;
            this.c = c;
        }
    }

    // ---- Java and C, both ways round ----

    /**
     * A ping-pong setup tried both ways round: a Java server with a C client on {@code port}, then
     * a C server with a Java client on {@code port + 1}; on the loopback device or across hosts.
     */
    record Setup(String name, Tool tool, boolean acrossHosts, int port, int size, String... options) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Setup> setups() {
        return Stream.of(
                new Setup("RC on the loopback device", Tool.RC, false, 18710, 4096, "-c"),
                new Setup("RC across hosts", Tool.RC, true, 18712, 4096, "-c"),
                new Setup("RC across hosts with events and a 512-byte MTU", Tool.RC, true, 18714, 8192, "-e", "-m", "512", "-c"),
                new Setup("UC on the loopback device", Tool.UC, false, 18720, 1024, "-c"),
                new Setup("UD on the loopback device", Tool.UD, false, 18730, 1024, "-c"),
                new Setup("UD across hosts with events", Tool.UD, true, 18732, 512, "-e"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("setups")
    @Timeout(300)
    void javaAndCBothWays(Setup s) throws Exception {
        TestBed.Host server = s.acrossHosts() ? TestBed.hostA() : TestBed.loopback();
        TestBed.Host client = s.acrossHosts() ? TestBed.hostB() : TestBed.loopback();
        pingPong(s.tool(), Side.JAVA, server, Side.C, client, s.port(), s.size(), s.options());
        pingPong(s.tool(), Side.C, server, Side.JAVA, client, s.port() + 1, s.size(), s.options());
    }

    // ---- Java against Java ----

    @Test
    @Timeout(300)
    void javaAgainstJavaForEveryTransport() throws Exception {
        int port = 18740;
        for (Tool tool : Tool.values()) {
            TestBed.Host a = TestBed.hostA();
            TestBed.Host b = TestBed.hostB();
            pingPong(tool, Side.JAVA, a, Side.JAVA, b, port, tool == Tool.UD ? 1024 : 4096, "-e", "-c");
            port++;
        }
    }

    // ---- errors: the same status, messages and usage text as C ----

    @Test
    @Timeout(300)
    void errorsMatchTheCTools() throws Exception {
        String lo = TestBed.loopback().device();
        String gid = String.valueOf(TestBed.loopback().gidIndex());
        List<String[]> usageErrors = List.of(new String[]{"-x"}, new String[]{"a", "b"}, new String[]{"-m", "300"},
                new String[]{"-p", "70000"}, new String[]{"-i", "0"}, new String[]{"--size"});
        // each as a client of a port where nothing listens, so that none waits for a peer
        List<String[]> runErrors = List.of(new String[]{"-d", "no_such_dev"}, new String[]{"-d", lo, "-g", "999"},
                new String[]{"-d", lo, "-i", "2"}, new String[]{"-d", lo, "-g", gid});
        for (Tool tool : Tool.values()) {
            List<String[]> cases = new ArrayList<>(usageErrors);
            cases.addAll(runErrors);
            if (tool == Tool.RC) {
                cases.add(new String[]{"-d", lo, "-o"});
                cases.add(new String[]{"-d", lo, "-t"});
                cases.add(new String[]{"-d", lo, "-j"});
                cases.add(new String[]{"-o", "-j"});
                cases.add(new String[]{"-P"});
            }
            if (tool == Tool.UD) {
                cases.add(new String[]{"-d", lo, "-s", "70000"});
            }
            for (String[] caseArgs : cases) {
                String[] args = caseArgs;
                if (Arrays.stream(args).noneMatch(a -> a.equals("a") || a.equals("--size") || a.equals("-x"))) {
                    args = Stream.concat(Arrays.stream(args), Stream.of("-p", "18799", "127.0.0.1")).toArray(String[]::new);
                }
                Run c = startC(tool, "C", args).await();
                Run java = startJava(tool, "java", args).await();
                String what = tool.c + " " + String.join(" ", args);
                assertThat(c.status()).as("C status of %s", what).isNotZero();
                assertThat(java.status()).as("status of %s: %s / %s", what, c, java).isEqualTo(c.status());
                assertThat(java.err()).as("stderr of %s", what).containsExactlyElementsOf(masked(c.err()));
                assertThat(masked(java.out())).as("stdout of %s", what).containsExactlyElementsOf(masked(c.out()));
                System.out.printf("%s: exit %d, %s%n", what, java.status(), java.err().isEmpty() ? "usage" : java.err().getLast());
            }
        }
    }

    /** The C program's name as the Java one, and the random QPN and PSN of an address line as x. */
    private static List<String> masked(List<String> lines) {
        return lines.stream().map(l -> l.replace("ibv_", "").replaceAll("(QPN|PSN) 0x[0-9a-f]{6}", "$1 0xxxxxxx")).toList();
    }

    // ---- a Java side that waits forever ends when its thread is interrupted ----

    @Test
    @Timeout(300)
    void javaSideEndsWhenInterrupted() throws Exception {
        TestBed.Host lo = TestBed.loopback();
        String gid = String.valueOf(lo.gidIndex());
        // waiting for a client
        Background idle = startJava(Tool.RC, "idle java server", new String[]{"-d", lo.device(), "-g", gid, "-p", "18790"});
        awaitListening(18790);
        idle.stop();
        Run r = idle.await();
        assertThat(r.status()).as("%s", r).isEqualTo(1);
        assertThat(r.err()).as("%s", r).containsExactly("accept() failed");

        // waiting for completions (events mode) from a peer that was killed
        Background server = startJava(Tool.RC, "orphaned java server",
                new String[]{"-d", lo.device(), "-g", gid, "-p", "18791", "-n", "100000000", "-e"});
        awaitListening(18791);
        Background client = startC(Tool.RC, "C client", new String[]{"-d", lo.device(), "-g", gid, "-p", "18791",
                "-n", "100000000", "127.0.0.1"});
        // until the two exchanged their addresses (a fixed 3 s was once too short beside two busy VMs), then a moment of traffic
        long until = System.nanoTime() + 120_000_000_000L;
        while (!server.stdoutSoFar().contains("remote address:") && System.nanoTime() < until) {
            Thread.sleep(50);
        }
        assertThat(server.stdoutSoFar()).as("the orphaned java server's stdout within 120 s").contains("remote address:");
        Thread.sleep(1000);
        client.stop();
        Thread.sleep(2000);
        server.stop();
        Run s = server.await();
        assertThat(s.status()).as("%s", s).isEqualTo(1);
        // waiting for a receive, or (when its last send was not yet acknowledged) ended by the retries
        boolean interrupted = s.err().equals(List.of("rc_pingpong: interrupted"));
        boolean retriesExceeded = s.err().size() == 2 && s.err().get(0).startsWith("Failed status ");
        assertThat(interrupted || retriesExceeded).as("%s", s).isTrue();
        assertThat(s.out()).as("%s", s).hasSize(2);
        System.out.println("orphaned java server: " + s.err());
    }

    // ---- one ping-pong ----

    /** Which implementation runs a side. */
    enum Side {
        JAVA("java"), C("C");

        final String label;

        Side(String label) {
            this.label = label;
        }

        Background start(Tool tool, String role, String[] args) throws IOException {
            String who = label + " " + role;
            return this == JAVA ? startJava(tool, who, args) : startC(tool, who, args);
        }
    }

    /**
     * One ping-pong of {@code tool}: a {@code serverSide} server on {@code serverHost}, then a
     * {@code clientSide} client from {@code clientHost}; both must succeed and see each other.
     */
    private static void pingPong(Tool tool, Side serverSide, TestBed.Host serverHost, Side clientSide, TestBed.Host clientHost,
                                 int port, int size, String... extra) throws Exception {
        List<String> common = common(port, size, extra);
        Background server = serverSide.start(tool, "server", args(common, "-d", serverHost.device(),
                "-g", String.valueOf(serverHost.gidIndex())));
        try {
            awaitListening(port);
            Background client = clientSide.start(tool, "client", args(common, "-d", clientHost.device(),
                    "-g", String.valueOf(clientHost.gidIndex()), serverHost.address()));
            Run c = client.await();
            Run s = server.await();
            checkPair(tool, s, c, size);
        } finally {
            server.stop();
        }
    }

    private static List<String> common(int port, int size, String... extra) {
        List<String> a = new ArrayList<>(List.of("-p", String.valueOf(port), "-n", String.valueOf(ITERS),
                "-s", String.valueOf(size)));
        a.addAll(List.of(extra));
        return a;
    }

    private static String[] args(List<String> common, String... more) {
        List<String> a = new ArrayList<>(common);
        a.addAll(List.of(more));
        return a.toArray(String[]::new);
    }

    // ---- checks ----

    private static final Pattern ADDRESS = Pattern.compile(
            "  (local|remote) address: +LID 0x([0-9a-f]{4}), QPN 0x([0-9a-f]{6}), PSN 0x([0-9a-f]{6})[,:] GID (\\S+)");
    private static final Pattern BYTES = Pattern.compile("(\\d+) bytes in (\\d+\\.\\d\\d) seconds = (\\d+\\.\\d\\d) Mbit/sec");
    private static final Pattern ITERS_LINE = Pattern.compile("(\\d+) iters in (\\d+\\.\\d\\d) seconds = (\\d+\\.\\d\\d) usec/iter");

    /** Both exited 0, printed both result lines with sane numbers, and saw each other's addresses. */
    static void checkPair(Tool tool, Run server, Run client, int size) {
        for (Run r : List.of(server, client)) {
            assertThat(r.status()).as("%s", r).isZero();
            assertThat(r.err()).as("stderr of %s", r).isEmpty();
            assertThat(r.out()).as("%s", r).hasSize(4).noneMatch(l -> l.startsWith("invalid data"));
            Matcher bytes = BYTES.matcher(r.out().get(2));
            assertThat(bytes.matches()).as("bytes line of %s", r).isTrue();
            assertThat(Long.parseLong(bytes.group(1))).isEqualTo(2L * size * ITERS);
            assertThat(Double.parseDouble(bytes.group(3))).as("Mbit/sec of %s", r).isPositive();
            Matcher iters = ITERS_LINE.matcher(r.out().get(3));
            assertThat(iters.matches()).as("iters line of %s", r).isTrue();
            assertThat(Integer.parseInt(iters.group(1))).isEqualTo(ITERS);
            assertThat(iters.group(2)).isEqualTo(bytes.group(2));
            double usecPerIter = Double.parseDouble(iters.group(3));
            assertThat(usecPerIter).as("usec/iter of %s", r).isPositive().isLessThan(RUN_LIMIT.toMillis() * 1000.0 / ITERS);
        }
        assertAddresses(server, client);
        assertAddresses(client, server);
        System.out.printf(Locale.ROOT, "%s %s / %s: server \"%s\", client \"%s\"%n", tool, server.who(), client.who(),
                server.out().get(3), client.out().get(3));
    }

    /** {@code a}'s remote address line names what {@code b} printed as its local address. */
    private static void assertAddresses(Run a, Run b) {
        Matcher remote = ADDRESS.matcher(a.out().get(1));
        Matcher local = ADDRESS.matcher(b.out().get(0));
        assertThat(remote.matches()).as("remote address line of %s", a).isTrue();
        assertThat(local.matches()).as("local address line of %s", b).isTrue();
        assertThat(remote.group(1)).isEqualTo("remote");
        assertThat(local.group(1)).isEqualTo("local");
        for (int g = 2; g <= 5; g++) {
            assertThat(remote.group(g)).as("field %d of %s's remote address vs %s's local address", g, a.who(), b.who())
                    .isEqualTo(local.group(g));
        }
        assertThat(local.group(5)).as("GID of %s", b.who()).startsWith("::ffff:");
    }

    // ---- running the sides ----

    private static Background startJava(Tool tool, String who, String[] args) {
        return ToolRunner.startJava(tool.java, who, RUN_LIMIT, args);
    }

    private static Background startC(Tool tool, String who, String[] args) throws IOException {
        String[] cmd = new String[args.length + 1];
        cmd[0] = tool.c;
        System.arraycopy(args, 0, cmd, 1, args.length);
        return ToolRunner.startC(who, RUN_LIMIT, cmd);
    }

    /** Waits until some socket listens on TCP {@code port} (the C client does not retry its connect). */
    static void awaitListening(int port) throws IOException, InterruptedException {
        ToolRunner.awaitTcpListening(port, LISTEN_LIMIT);
    }
}
