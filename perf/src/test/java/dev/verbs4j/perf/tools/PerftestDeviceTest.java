package dev.verbs4j.perf.tools;

import dev.verbs4j.verbs.TestBed;
import dev.verbs4j.verbs.ToolRunner;
import dev.verbs4j.verbs.ToolRunner.Background;
import dev.verbs4j.verbs.ToolRunner.Run;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.junit.jupiter.params.provider.Arguments.arguments;

/**
 * The eight Java perftest tools on Soft-RoCE, each option set in three directions: Java against
 * Java, a Java client against the C server and a C client against the Java server (Debian's
 * perftest 4.5). Every run must end with status 0 on both sides and print result rows that parse,
 * for the right sizes and iteration counts, with sane numbers wherever Java computed them; each
 * side's "remote address" must be what the peer printed as its "local address"; and the Java
 * output of each role must be laid out as the C output of that role (values aside), its rows
 * exactly in perftest's printf formats.
 *
 * <p>The option sets are chosen to cover every tool in both topologies and every wire sequence
 * at little cost under the emulated CPU, where a C process with its clock calibration costs
 * seconds: few iterations ({@code -n}) everywhere; the defaults (TCP) of the latency tools on the
 * loopback device and of the bandwidth tools across the two hosts; {@code -R} (RDMA CM, which
 * needs the veth addresses) with {@code -s} across the two hosts; {@code -b} together with
 * {@code -q 2} for the bandwidth tools on the loopback device; UC and UD ({@code -c}) where
 * perftest offers them. {@code -a} (2 B to 8 MiB, by far the costliest) is in
 * {@link PerftestSweepDeviceTest}.
 * The Java side of every run is called in this JVM (on a thread, with its own streams and exit
 * status), the C side is a process.
 */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_3)
class PerftestDeviceTest {

    private static final Duration RUN_LIMIT = Duration.ofSeconds(90);
    /** The first run of the class also pays for loading and compiling the Java side. */
    private static final Duration LISTEN_LIMIT = Duration.ofSeconds(90);
    private static final AtomicInteger PORTS = new AtomicInteger(19100);
    private static final String ITERS = "10";
    private static final String HUNG = "\n(the C side did not end although its Java peer ended with 0)";

    /** Where the two sides run: both on the loopback device, or server on host A and client on host B. */
    enum Topology {
        LOOPBACK, HOSTS;

        TestBed.Host server() {
            return this == LOOPBACK ? TestBed.loopback() : TestBed.hostA();
        }

        TestBed.Host client() {
            return this == LOOPBACK ? TestBed.loopback() : TestBed.hostB();
        }
    }

    /** Both sides' results, and which of them ran in Java. */
    record Pair(Run server, Run client, boolean javaServer, boolean javaClient) {
        @Override
        public String toString() {
            return server + "\n" + client;
        }
    }

    /**
     * One Java ping-pong before the tests: the first run in a JVM loads and compiles the Java side,
     * which takes about a minute on the emulated CPU and must not fall into a timed test (the
     * duration mode's clocks, a peer's 90 s limit).
     */
    @BeforeAll
    static void warmUp() throws Exception {
        warmUpOnce();
    }

    private static volatile boolean warm;

    /**
     * The first Java run in a JVM loads and compiles the Java side, which no timed pair should
     * include: one Java pair, once per JVM (the device test classes of the tools share it).
     */
    static synchronized void warmUpOnce() throws Exception {
        if (warm) {
            return;
        }
        Pair p = run(PerfTool.SEND_LAT, true, true, Topology.LOOPBACK, List.of("-n", ITERS), List.of("-n", ITERS));
        assertThat(p.server().status()).as(p.toString()).isZero();
        assertThat(p.client().status()).as(p.toString()).isZero();
        warm = true;
    }

    // ---- the matrix: each option set, each tool, three directions ----

    @ParameterizedTest(name = "{0}")
    @EnumSource(PerfTool.class)
    @Timeout(300)
    void defaults(PerfTool tool) throws Exception {
        // the latency tools on the loopback device, the bandwidth tools across the hosts (they run
        // -b -q 2 on the loopback device below): every tool meets both topologies
        threeWays(tool, tool.bw ? Topology.HOSTS : Topology.LOOPBACK, List.of("-n", ITERS));
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(PerfTool.class)
    @Timeout(300)
    void rdmaCmWithSizeAcrossHosts(PerfTool tool) throws Exception {
        // atomics are 8 bytes and perftest refuses any other -s; 16384 is four packets at the veth pair's path MTU (4096)
        threeWays(tool, Topology.HOSTS, List.of("-R", "-s", tool.atomic() ? "8" : "16384", "-n", ITERS));
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = PerfTool.class, names = {"SEND_BW", "WRITE_BW", "READ_BW", "ATOMIC_BW"})
    @Timeout(300)
    void bidirectionalTwoQueuePairs(PerfTool tool) throws Exception {
        threeWays(tool, Topology.LOOPBACK, List.of("-b", "-q", "2", "-n", ITERS));
    }

    // ---- the unreliable transports ----

    static Stream<Arguments> unreliable() {
        return Stream.of(arguments(PerfTool.SEND_LAT, "UC"), arguments(PerfTool.SEND_BW, "UC"),
                arguments(PerfTool.WRITE_LAT, "UC"), arguments(PerfTool.WRITE_BW, "UC"),
                arguments(PerfTool.SEND_LAT, "UD"), arguments(PerfTool.SEND_BW, "UD"));
    }

    @ParameterizedTest(name = "{0} -c {1}")
    @MethodSource("unreliable")
    @Timeout(300)
    void unreliableTransports(PerfTool tool, String type) throws Exception {
        // UC queue pairs (no acknowledgements, no RNR retry) and UD ones (an address handle per
        // peer, the GRH in front of every receive) on the loopback device
        threeWays(tool, Topology.LOOPBACK, List.of("-c", type, "-n", ITERS));
    }

    @Test
    @Timeout(300)
    void datagramLargerThanTheMtuEndsAsPerftest() throws Exception {
        // -s above the MTU (4096 on the loopback device) on UD: both sides stop once the MTU is
        // agreed, with perftest's words and status; the C pair shows what perftest does
        List<String> opts = List.of("-c", "UD", "-s", "8192", "-n", "5");
        for (boolean java : new boolean[]{true, false}) {
            Pair p = run(PerfTool.SEND_BW, java, java, Topology.LOOPBACK, opts, opts);
            for (Run r : List.of(p.server(), p.client())) {
                assertThat(r.status()).as(p.toString()).isEqualTo(1);
                assertThat(r.err()).as(p.toString()).containsSubsequence(" Max message size in UD cannot be greater than MTU ",
                        " Couldn't get context for the device");
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = PerfTool.class, names = {"SEND_LAT", "SEND_BW"})
    @Timeout(300)
    void datagramsOverRdmaCm(PerfTool tool) throws Exception {
        // UD queue pairs in the UDP port space: the server's address from the connection manager;
        // the latency test also sends the client's QPN in a SEND with immediate
        threeWays(tool, Topology.HOSTS, List.of("-c", "UD", "-R", "-n", ITERS));
    }

    @Test
    @Timeout(300)
    void datagramsBothWaysOverRdmaCm() throws Exception {
        // -b: the bandwidth server sends too, so it learns the client's address as the latency server does
        threeWays(PerfTool.SEND_BW, Topology.HOSTS, List.of("-c", "UD", "-R", "-b", "-n", ITERS));
    }

    @Test
    @Timeout(300)
    void datagramsOfAllSizesOverRdmaCm() throws Exception {
        threeWays(PerfTool.SEND_LAT, Topology.HOSTS, List.of("-c", "UD", "-R", "-a", "-n", "5"));
    }

    // ---- completion events, duration mode, the JSON file ----

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = PerfTool.class, names = {"SEND_LAT", "SEND_BW", "READ_LAT", "ATOMIC_BW"})
    @Timeout(300)
    void completionEvents(PerfTool tool) throws Exception {
        // -e: every side sleeps on its completion channel; the header names the channel
        List<String> opts = List.of("-e", "-n", ITERS);
        Topology where = tool.bw ? Topology.HOSTS : Topology.LOOPBACK;
        List<Pair> pairs = threeWaysWithJson(tool, where, opts);
        for (Pair p : pairs) {
            check(tool, opts, p);
        }
        sameLayout(pairs.get(2).server(), pairs.get(1).server());
        sameLayout(pairs.get(1).client(), pairs.get(2).client());
        for (Pair p : pairs) {
            assertThat(p.server().out()).as(p.toString()).contains(" Test with events. Using " + where.server().device() + "_comp0");
            assertThat(p.client().out()).as(p.toString()).contains(" Test with events. Using " + where.client().device() + "_comp0");
        }
        if (tool.bw) {
            // perftest keeps the moderation of large messages with -e (ib_send_bw: 10, cut to -n; 1 when polling)
            assertThat(lines(pairs.get(1).client(), " CQ Moderation")).as(pairs.get(1) + "\n" + pairs.get(2))
                    .isEqualTo(lines(pairs.get(2).client(), " CQ Moderation")).hasSize(1);
            assertThat(lines(pairs.get(2).server(), " CQ Moderation")).as(pairs.get(1) + "\n" + pairs.get(2))
                    .isEqualTo(lines(pairs.get(1).server(), " CQ Moderation")).hasSize(1);
        }
        sameJson(tool);
    }

    private static List<String> lines(Run r, String prefix) {
        return r.out().stream().filter(l -> l.startsWith(prefix)).toList();
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = PerfTool.class, names = {"SEND_LAT", "WRITE_LAT", "SEND_BW", "READ_BW"})
    @Timeout(300)
    void durationMode(PerfTool tool) throws Exception {
        // -D 2: no margin (a quarter of 2 s is 0 whole seconds), two seconds sampled on each side;
        // the latency tool with a margin of its own: 1 s left out at each end of 4, 2 s sampled (a
        // one-second window once caught nothing in a loaded CI run: both sides printed 0 iterations)
        // 4 KiB messages: the 128 sends a bandwidth client starts with must complete well inside its
        // window (of 64 KiB each they take about 2 s through the emulated loopback device)
        List<String> opts = tool.bw ? List.of("-D", "2", "-s", "4096") : List.of("-D", "4", "-f", "1");
        double sampled = 2;
        List<Pair> pairs = threeWaysWithJson(tool, Topology.LOOPBACK, opts);
        for (Pair p : pairs) {
            checkDuration(tool, opts, p, sampled, false);
        }
        sameLayout(pairs.get(2).server(), pairs.get(1).server());
        sameLayout(pairs.get(1).client(), pairs.get(2).client());
        sameJson(tool);
    }

    // ---- misuse ----

    @Test
    @Timeout(120)
    void missingServerOrDeviceFailsAsPerftest() throws Exception {
        TestBed.Host lo = TestBed.loopback();
        int port = PORTS.getAndIncrement();
        String refused = "Couldn't connect to " + lo.address() + ":" + port
                + "\nUnable to open file descriptor for socket connection Unable to init the socket connection";
        Run c = ToolRunner.startC("C ib_write_lat client", LISTEN_LIMIT, "ib_write_lat", "-F", "-d", lo.device(), "-x",
                String.valueOf(lo.gidIndex()), "-p", String.valueOf(port), lo.address()).await();
        assertThat(c.status()).as(c.toString()).isEqualTo(1);
        assertThat(String.join("\n", c.err())).as(c.toString()).isEqualTo(refused);
        for (PerfTool tool : PerfTool.values()) {
            Run j = ToolRunner.startJava(tool.java, "java " + tool.c + " client", LISTEN_LIMIT, "-d", lo.device(), "-x",
                    String.valueOf(lo.gidIndex()), "-p", String.valueOf(port), lo.address()).await();
            String inline = tool == PerfTool.READ_LAT || tool == PerfTool.READ_BW || tool.atomic()
                    ? "Device not recognized to implement inline feature. Disabling it\n" : "";
            assertThat(j.status()).as(j.toString()).isEqualTo(1);
            assertThat(String.join("\n", j.err())).as(j.toString()).isEqualTo(inline + refused);

            Run nodev = ToolRunner.startJava(tool.java, "java " + tool.c, LISTEN_LIMIT, "-d", "nodev", lo.address()).await();
            boolean silent = tool == PerfTool.READ_BW || tool == PerfTool.ATOMIC_BW;
            assertThat(nodev.status()).as(nodev.toString()).isEqualTo(silent ? 7 : 1);
            assertThat(nodev.err()).as(nodev.toString()).isEqualTo(silent ? List.of("IB device nodev not found")
                    : List.of("IB device nodev not found", " Unable to find the Infiniband/RoCE device"));
            assertThat(nodev.out()).as(nodev.toString()).isEmpty();
        }
        // RDMA CM: nobody listens on the port, the connection is rejected at once
        TestBed.Host a = TestBed.hostA();
        TestBed.Host b = TestBed.hostB();
        String[] args = {"-R", "-d", b.device(), "-x", String.valueOf(b.gidIndex()), "-p", String.valueOf(port), a.address()};
        Run cr = ToolRunner.startC("C ib_send_bw -R client", LISTEN_LIMIT, concat(List.of("ib_send_bw", "-F"), List.of(args))
                .toArray(String[]::new)).await();
        Run jr = ToolRunner.startJava(PerfTool.SEND_BW.java, "java ib_send_bw -R client", LISTEN_LIMIT, args).await();
        assertThat(cr.status()).as(cr.toString()).isEqualTo(1);
        assertThat(jr.status()).as(jr + "\n" + cr).isEqualTo(1);
        assertThat(jr.err()).as(jr + "\n" + cr).isEqualTo(errors(cr));
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = PerfTool.class, names = {"SEND_LAT", "WRITE_BW"})
    @Timeout(300)
    void mismatchedSizesEndAsPerftest(PerfTool tool) throws Exception {
        // ib_send_lat: server -s 128, client -s 64: the client's receive is too short, both end with 17;
        // ib_write_bw: client -s 1M into the server's 64 KiB: a remote access error, both end with 1
        List<String> serverOpts = tool == PerfTool.SEND_LAT ? List.of("-s", "128", "-n", "5") : List.of("-n", "5");
        List<String> clientOpts = tool == PerfTool.SEND_LAT ? List.of("-s", "64", "-n", "5") : List.of("-s", "1M", "-n", "5");
        int status = tool == PerfTool.SEND_LAT ? 17 : 1;
        Pair jj = run(tool, true, true, Topology.LOOPBACK, serverOpts, clientOpts);
        Pair jc = run(tool, false, true, Topology.LOOPBACK, serverOpts, clientOpts);
        Pair cj = run(tool, true, false, Topology.LOOPBACK, serverOpts, clientOpts);
        for (Pair p : List.of(jj, jc, cj)) {
            assertThat(p.server().status()).as(p.toString()).isEqualTo(status);
            assertThat(p.client().status()).as(p.toString()).isEqualTo(status);
        }
        // the same messages as C in the same role, in every pairing
        for (Pair p : List.of(jj, cj)) {
            assertThat(p.server().err()).as(p + "\nC server:\n" + jc.server()).isEqualTo(errors(jc.server()));
        }
        if (tool == PerfTool.SEND_LAT) {
            // The client's QP fails on the server's 128 B while its own send may still await its
            // acknowledgement: rxe handles the two in separate tasks, so either the receive's error
            // comes first (as a rule) or the send is flushed. C and Java each end with one of the two.
            assertThat(errors(cj.client())).as("C client:\n" + cj.client()).isIn(SEND_LAT_CLIENT_ENDS);
            for (Pair p : List.of(jj, jc)) {
                assertThat(p.client().err()).as(p + "\nC client:\n" + cj.client()).isIn(SEND_LAT_CLIENT_ENDS);
            }
            return;
        }
        for (Pair p : List.of(jj, jc)) {
            assertThat(p.client().err()).as(p + "\nC client:\n" + cj.client()).isEqualTo(errors(cj.client()));
        }
    }

    /** How a C ib_send_lat -s 64 client against a -s 128 server ends (as seen in the VM), in either order. */
    private static final List<List<String>> SEND_LAT_CLIENT_ENDS = List.of(
            List.of(" Completion with error at server", " Failed status 2: wr_id 0 syndrom 0x0", " rcnt=0"),
            List.of(" Completion with error at client", " Failed status 5: wr_id 0 syndrom 0x0", "scnt=1, ccnt=1"));

    // ---- helpers ----

    private static final String JSON_DIR = System.getProperty("java.io.tmpdir");

    private static String jsonFile(PerfTool tool, boolean java, String role) {
        return JSON_DIR + "/verbs4j-" + tool.c + "-" + (java ? "java" : "c") + "-" + role + ".json";
    }

    /** As {@link #threeWays}, the mixed runs with --out_json, each side into a file of its own. */
    private List<Pair> threeWaysWithJson(PerfTool tool, Topology where, List<String> opts) throws Exception {
        for (boolean isJava : new boolean[]{true, false}) {
            for (String role : List.of("server", "client")) {
                Files.deleteIfExists(Path.of(jsonFile(tool, isJava, role)));
            }
        }
        Pair jj = run(tool, true, true, where, opts, opts);
        Pair jc = run(tool, false, true, where, concat(opts, json(tool, false, "server")),
                concat(opts, json(tool, true, "client")));
        Pair cj = run(tool, true, false, where, concat(opts, json(tool, true, "server")),
                concat(opts, json(tool, false, "client")));
        return List.of(jj, jc, cj);
    }

    private static List<String> json(PerfTool tool, boolean java, String role) {
        return List.of("--out_json", "--out_json_file=" + jsonFile(tool, java, role));
    }

    /** The JSON files of the Java sides laid out as those of the C sides in the same role (values masked). */
    private static void sameJson(PerfTool tool) throws Exception {
        for (String role : List.of("server", "client")) {
            Path c = Path.of(jsonFile(tool, false, role));
            Path j = Path.of(jsonFile(tool, true, role));
            // a side that prints a row writes the file (all but the passive latency servers)
            if (role.equals("server") && tool.passiveLatencyServer()) {
                assertThat(c).as("C's JSON file").doesNotExist();
                assertThat(j).as("Java's JSON file").doesNotExist();
                continue;
            }
            assertThat(c).as("C's JSON file").exists();
            assertThat(j).as("Java's JSON file").exists();
            List<String> jl = Files.readAllLines(j);
            List<String> cl = Files.readAllLines(c);
            assertThat(shape(jl)).as("JSON of java " + role + ":\n" + String.join("\n", jl) + "\nagainst C:\n"
                    + String.join("\n", cl)).isEqualTo(shape(cl));
        }
    }

    private static final String LAT_DURATION_ROW = " %-7d       %d            %-7.2f        %-7.2f";

    /** Java against Java, Java client against C server, C client against Java server; then the comparisons. */
    static void threeWays(PerfTool tool, Topology where, List<String> opts) throws Exception {
        Pair jj = run(tool, true, true, where, opts, opts);
        check(tool, opts, jj);
        Pair jc = run(tool, false, true, where, opts, opts);
        check(tool, opts, jc);
        Pair cj = run(tool, true, false, where, opts, opts);
        check(tool, opts, cj);
        sameLayout(cj.server(), jc.server());
        sameLayout(jc.client(), cj.client());
        if (tool.serverEchoesClient() && !opts.contains("-b")) {
            // the server prints the client's report: exactly the client's last row
            List<String> rows = rows(jj.client());
            assertThat(rows(jj.server())).as(jj.toString()).containsExactly(rows.get(rows.size() - 1));
        }
        if (opts.contains("-b")) {
            // both sides print the sum of both directions
            assertThat(rows(jj.server())).as(jj.toString()).isEqualTo(rows(jj.client()));
        }
    }

    static Pair run(PerfTool tool, boolean javaServer, boolean javaClient, Topology where, List<String> serverOpts,
                     List<String> clientOpts) throws Exception {
        return run(tool, javaServer, javaClient, where, serverOpts, clientOpts, true);
    }

    /**
     * As {@link #run}; without {@code gidIndex} neither side is given -x (perftest then picks the GID itself).
     * A C side that does not end although its Java peer ended with 0 fails the pair, as any hang
     * does: with {@code -R} that is the C side resending its last control message for ever
     * (perftest's retry count 7, which rxe takes for no limit) because its acknowledgement was
     * lost with a control queue pair that left RTS too early, which {@code CmRun}'s tear-down
     * must not allow.
     */
    static Pair run(PerfTool tool, boolean javaServer, boolean javaClient, Topology where, List<String> serverOpts,
                     List<String> clientOpts, boolean gidIndex) throws Exception {
        int port = PORTS.getAndIncrement();
        TestBed.Host server = where.server();
        TestBed.Host client = where.client();
        List<String> serverArgs = concat(serverOpts, List.of("-p", String.valueOf(port), "-d", server.device()));
        List<String> clientArgs = concat(clientOpts, List.of("-p", String.valueOf(port), "-d", client.device()));
        if (gidIndex) {
            serverArgs = concat(serverArgs, List.of("-x", String.valueOf(server.gidIndex())));
            clientArgs = concat(clientArgs, List.of("-x", String.valueOf(client.gidIndex())));
        }
        clientArgs = concat(clientArgs, List.of(server.address()));
        long t0 = System.nanoTime();
        Background s = start(tool, javaServer, "server", serverArgs);
        try {
            if (serverOpts.contains("-R") || serverOpts.contains("-z")) {
                // each look is a process, dear in the VM: every 250 ms
                ToolRunner.awaitCmListening(port, LISTEN_LIMIT, Duration.ofMillis(250));
            } else {
                ToolRunner.awaitTcpListening(port, LISTEN_LIMIT);
            }
            Background c = start(tool, javaClient, "client", clientArgs);
            try {
                Run cr;
                try {
                    cr = c.await();
                } catch (AssertionError e) {
                    // the client hung: what the server was doing meanwhile
                    boolean serverEnded = !s.isAlive();
                    s.stop();
                    String serverSide;
                    boolean serverEndedWell = false;
                    try {
                        Run sr = s.await();
                        serverSide = sr.toString();
                        serverEndedWell = serverEnded && sr.status() == 0;
                    } catch (AssertionError e2) {
                        serverSide = e2.getMessage();
                    }
                    String message = e.getMessage() + "\nwhile the server: " + serverSide;
                    throw new AssertionError(message + (!javaClient && javaServer && serverEndedWell ? HUNG : ""), e);
                }
                String clientErr = String.join("\n", cr.err());
                if ((serverOpts.contains("-R") || serverOpts.contains("-z")) && cr.status() != 0 && s.isAlive()
                        && (clientErr.contains("RDMA_CM_EVENT_REJECTED") || clientErr.contains("Unexpected CM event bl blka 8"))) {
                    // A connect rejected for want of a listener (status 8) while the server still
                    // waits: seen with three VMs on the host, when the wait above took a listener
                    // listed on one device for one listening on all (fixed there). One more
                    // connect tells such a race from a failure.
                    System.err.println("[perftest] connect rejected, once more: " + cr);
                    c.stop();
                    c = start(tool, javaClient, "client", clientArgs);
                    cr = c.await();
                }
                Run sr;
                try {
                    sr = s.await();
                } catch (AssertionError e) {
                    String message = e.getMessage() + "\nwhile the client ended: " + cr;
                    throw new AssertionError(message + (!javaServer && javaClient && cr.status() == 0 ? HUNG : ""), e);
                }
                System.err.printf(Locale.ROOT, "[perftest] %s %s server %s client %s %s: %d ms%n", tool.c,
                        String.join(" ", clientOpts), javaServer ? "Java" : "C", javaClient ? "Java" : "C", where,
                        (System.nanoTime() - t0) / 1_000_000);
                return new Pair(sr, cr, javaServer, javaClient);
            } finally {
                c.stop();
            }
        } finally {
            s.stop();
        }
    }

    private static Background start(PerfTool tool, boolean java, String role, List<String> args) throws Exception {
        if (java) {
            return ToolRunner.startJava(tool.java, "java " + tool.c + " " + role, RUN_LIMIT, args.toArray(String[]::new));
        }
        // -F: a failed cycle calibration in the VM must not end the C side with "Can't produce a report";
        // stdbuf: what a C side printed is there even when it has to be stopped
        List<String> cmd = concat(List.of("stdbuf", "-oL", tool.c, "-F"), args);
        return ToolRunner.startC("C " + tool.c + " " + role, RUN_LIMIT, cmd.toArray(String[]::new));
    }

    // ---- what every run must show ----

    private static void check(PerfTool tool, List<String> opts, Pair p) {
        String both = p.toString();
        assertThat(p.server().status()).as(both).isZero();
        assertThat(p.client().status()).as(both).isZero();
        boolean duplex = opts.contains("-b");
        int qps = opts.contains("-q") ? Integer.parseInt(opts.get(opts.indexOf("-q") + 1)) : 1;
        long iters = Long.parseLong(opts.get(opts.indexOf("-n") + 1)) * (tool.bw ? qps : 1);
        List<Long> sizes = sizes(tool, opts, mtu(p.client()));

        // the tables: one row per size, or as perftest prints them on each side
        List<Long> serverSizes = !tool.bw ? (tool.passiveLatencyServer() ? List.of() : sizes)
                : tool.serverEchoesClient() && !duplex ? List.of(sizes.get(sizes.size() - 1)) : sizes;
        checkRows(tool, p.client(), sizes, iters, p.javaClient() && (p.javaServer() || !duplex), duplex, true, both);
        boolean serverOwnNumbers = !duplex && !tool.serverEchoesClient();
        checkRows(tool, p.server(), serverSizes, iters, p.javaServer() && (p.javaClient() || serverOwnNumbers), duplex,
                false, both);

        // what each side prints as the peer's address is what the peer printed as its own
        assertThat(addresses(p.client(), "remote")).as(both).isEqualTo(addresses(p.server(), "local"))
                .hasSize(2 * qps);
        assertThat(addresses(p.server(), "remote")).as(both).isEqualTo(addresses(p.client(), "local"));

        // the header names the device and the queue pairs of this side
        for (Run r : List.of(p.server(), p.client())) {
            assertThat(r.out()).as(both).contains(" Number of qps   : " + qps + "\t\tTransport type : IB");
            assertThat(r.out()).as(both).contains(" rdma_cm QPs\t : " + (opts.contains("-R") ? "ON" : "OFF"));
            String type = opts.contains("-c") ? opts.get(opts.indexOf("-c") + 1) : "RC";
            assertThat(r.out()).as(both).contains(" Connection type : " + type + "\t\tUsing SRQ      : OFF");
        }
    }

    /**
     * A duration-mode run: status 0 on both sides, the duration table on every side that prints
     * one (each side's own count; with a C peer the Java numbers are still this side's own), rows
     * in perftest's formats with a positive count and consistent numbers.
     */
    private static void checkDuration(PerfTool tool, List<String> opts, Pair p, double sampled, boolean duplex) {
        String both = p.toString();
        long size = sizes(tool, opts, 0).get(0);
        assertThat(p.server().status()).as(both).isZero();
        assertThat(p.client().status()).as(both).isZero();
        for (Run r : List.of(p.server(), p.client())) {
            boolean server = r == p.server();
            // the write/read/atomic bandwidth server prints the client's row
            // with -b the RDMA tools print the sum of both sides (send_bw -b -D: each its own count)
            boolean peerNumbers = duplex ? !tool.send() : server && tool.serverEchoesClient();
            boolean java = (server ? p.javaServer() : p.javaClient()) && (!peerNumbers || (p.javaServer() && p.javaClient()));
            List<String> rows = rows(r);
            if (server && tool.passiveLatencyServer()) {
                assertThat(rows).as(both).isEmpty();
                continue;
            }
            assertThat(rows).as(both).hasSize(1);
            String row = rows.get(0);
            String[] f = row.strip().split("[ \t]+");
            assertThat(Long.parseLong(f[0])).as(row + "\n" + both).isEqualTo(size);
            assertThat(Long.parseLong(f[1])).as(row + "\n" + both).isPositive();
            if (!tool.bw) {
                assertThat(r.out()).as(both).contains(" #bytes        #iterations       t_avg[usec]    tps average");
            }
            if (!java) {
                continue;
            }
            assertThat(row).as(both).doesNotContain("inf").doesNotContain("nan");
            double[] v = Arrays.stream(f).skip(2).mapToDouble(Double::parseDouble).toArray();
            long iters = Long.parseLong(f[1]);
            if (!tool.bw) {
                assertThat(f).as(row).hasSize(4);
                assertThat(row).as("the C row format").isEqualTo(String.format(Locale.ROOT, LAT_DURATION_ROW, size,
                        iters, v[0], v[1]));
                // t_avg is one way for send and write (half the round trip), tps counts round trips
                int rtt = tool.passiveLatencyServer() ? 1 : 2;
                assertThat(rtt * v[0] * v[1]).as(row).isCloseTo(1e6, within(0.02e6));
                assertThat(iters / v[1]).as("seconds sampled: " + row).isCloseTo(sampled, within(0.05));
            } else {
                assertThat(f).as(row).hasSize(5);
                assertThat(row).as("the C row format").isEqualTo(String.format(Locale.ROOT, BW_ROW, size, iters,
                        v[0], v[1], v[2]));
                assertThat(v[0]).as("no peak in duration mode: " + row).isZero();
                assertThat(v[2]).as(row).isPositive();
                if (!(duplex && !tool.send())) {
                    // (a sum of both sides' rates is not this side's count over its window)
                    assertThat(iters / (v[2] * 1e6)).as("seconds sampled: " + row).isCloseTo(sampled, within(0.05));
                }
                double mbPerMpps = size * 1e6 / 1048576;
                assertThat(v[1]).as(row).isCloseTo(v[2] * mbPerMpps, within(0.02 * v[1] + 0.5e-6 * mbPerMpps + 0.006));
            }
        }
        assertThat(addresses(p.client(), "remote")).as(both).isEqualTo(addresses(p.server(), "local"));
    }

    /** The MTU a side's header names. */
    private static int mtu(Run r) {
        return r.out().stream().filter(l -> l.startsWith(" Mtu             : ")).findFirst()
                .map(l -> Integer.parseInt(l.replaceAll("[^0-9]", ""))).orElse(0);
    }

    private static List<Long> sizes(PerfTool tool, List<String> opts, int mtu) {
        boolean ud = opts.contains("UD");
        if (opts.contains("-a")) {
            List<Long> all = new ArrayList<>();
            int top = ud ? Integer.numberOfTrailingZeros(mtu) : 23;
            for (int i = 1; i <= top; i++) {
                all.add(1L << i);
            }
            return all;
        }
        if (opts.contains("-s")) {
            String s = opts.get(opts.indexOf("-s") + 1);
            return List.of(s.endsWith("M") ? Long.parseLong(s.substring(0, s.length() - 1)) << 20 : Long.parseLong(s));
        }
        // UD: perftest cuts the size to the MTU
        return List.of(ud ? Math.min(tool.defaultSize(), mtu) : tool.defaultSize());
    }

    private static final Pattern ROW = Pattern.compile(" \\d+ +\\d+ .*");
    private static final String LAT_ROW = " %-7d %d          %-7.2f        %-7.2f      %-7.2f  \t       %-7.2f     \t%-7.2f\t\t%-7.2f \t\t%-7.2f";
    private static final String BW_ROW = " %-7d    %-10d       %-7.2f            %-7.2f\t\t   %-7.6f";

    static List<String> rows(Run r) {
        return r.out().stream().filter(l -> ROW.matcher(l).matches()).toList();
    }

    /**
     * The result rows of one side: their sizes and iteration counts; when the numbers are this
     * Java side's own (or both sides are Java), finite, positive and consistent, each row exactly in
     * perftest's printf format.
     */
    private static void checkRows(PerfTool tool, Run r, List<Long> sizes, long iters, boolean javaNumbers, boolean duplex,
                                  boolean client, String both) {
        List<String> rows = rows(r);
        assertThat(rows).as(both).hasSize(sizes.size());
        for (int k = 0; k < rows.size(); k++) {
            String row = rows.get(k);
            String[] f = row.strip().split("[ \t]+");
            assertThat(Long.parseLong(f[0])).as(row + "\n" + both).isEqualTo(sizes.get(k));
            assertThat(Long.parseLong(f[1])).as(row + "\n" + both).isEqualTo(iters);
            if (!javaNumbers) {
                continue;
            }
            assertThat(row).as(both).doesNotContain("inf").doesNotContain("nan");
            double[] v = Arrays.stream(f).skip(2).mapToDouble(Double::parseDouble).toArray();
            if (!tool.bw) {
                assertThat(f).as(row).hasSize(9);
                assertThat(row).as("the C row format").isEqualTo(String.format(Locale.ROOT, LAT_ROW, sizes.get(k), iters,
                        v[0], v[1], v[2], v[3], v[4], v[5], v[6]));
                double min = v[0], max = v[1], typical = v[2], avg = v[3], stdev = v[4], p99 = v[5], p999 = v[6];
                assertThat(min).as(row).isPositive();
                assertThat(typical).as(row).isBetween(min, max);
                assertThat(avg).as(row).isBetween(min, max);
                assertThat(stdev).as(row).isNotNegative();
                assertThat(p99).as(row).isBetween(min, p999);
                assertThat(p999).as(row).isLessThanOrEqualTo(max);
            } else {
                assertThat(f).as(row).hasSize(5);
                assertThat(row).as("the C row format").isEqualTo(String.format(Locale.ROOT, BW_ROW, sizes.get(k), iters,
                        v[0], v[1], v[2]));
                double peak = v[0], avg = v[1], rate = v[2];
                assertThat(avg).as(row).isNotNegative();
                assertThat(rate).as(row).isPositive();
                // MB/sec = size * Mpps * 10^6 / 2^20, up to the rounding of the printed values
                double mbPerMpps = sizes.get(k) * 1e6 / 1048576;
                assertThat(avg).as(row).isCloseTo(rate * mbPerMpps, within(0.02 * avg + 0.5e-6 * mbPerMpps + 0.006));
                boolean peakMeasured = client || duplex || tool != PerfTool.SEND_BW;
                if (peakMeasured) {
                    assertThat(peak).as(row).isGreaterThanOrEqualTo(avg * 0.99);
                } else {
                    assertThat(peak).as(row).isZero();
                }
            }
        }
    }

    /** The address lines (and the GID line after each) of {@code side} ("local" or "remote"), named alike. */
    private static List<String> addresses(Run r, String side) {
        List<String> out = new ArrayList<>();
        List<String> lines = r.out();
        for (int i = 0; i + 1 < lines.size(); i++) {
            if (lines.get(i).startsWith(" " + side + " address: ")) {
                out.add(lines.get(i).substring(side.length() + 1));
                out.add(lines.get(i + 1));
            }
        }
        return out;
    }

    // ---- layout ----

    private static final Pattern VALUE = Pattern.compile("(?<![\\w.])(-?nan|-?inf|-?\\d+(?:\\.\\d+)?e[+-]\\d+|-?\\d+\\.\\d+|0x[0-9a-f]+|\\d+)(?![\\w.]) *");

    /** The Java output laid out as the C one in the same role: same lines and fields, values masked; same stderr. */
    static void sameLayout(Run java, Run c) {
        assertThat(shape(java.out())).as("layout of " + java + "\nagainst " + c).isEqualTo(shape(c.out()));
        assertThat(java.err()).as("stderr of " + java + "\nagainst " + c).isEqualTo(errors(c));
    }

    /** A C side's stderr without its clock calibration's complaints (the Java tools need none). */
    static List<String> errors(Run c) {
        // (and what it costs the rate limiter, which then runs without a gap)
        return c.err().stream().filter(l -> !l.startsWith("Correlation coefficient")
                && !l.equals("Failed: couldn't acquire cpu frequency for rate limiter.")).toList();
    }

    static List<String> shape(List<String> lines) {
        List<String> out = new ArrayList<>();
        for (String l : lines) {
            Matcher m = VALUE.matcher(l);
            out.add(m.replaceAll("#"));
        }
        return out;
    }

    private static List<String> concat(List<String> a, List<String> b) {
        List<String> r = new ArrayList<>(a);
        r.addAll(b);
        return r;
    }
}
