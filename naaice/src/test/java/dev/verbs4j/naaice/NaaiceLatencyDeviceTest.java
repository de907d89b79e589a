package dev.verbs4j.naaice;

import dev.verbs4j.verbs.RdmaArena;
import dev.verbs4j.verbs.TestBed;
import dev.verbs4j.verbs.ToolRunner;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * RPC latency of the four pairings of the NAAICE C library and verbs4j, in one boot: C client +
 * C NAA, Java client + C NAA, C client + Java NAA, Java client + Java NAA; one 1-byte in/out
 * parameter, function 3 (no-op), the median of {@value #RPCS} RPCs each, printed as a table. The
 * Java client and the Java NAA are measured warm ({@value #CLIENT_WARM_UP} and {@value #NAA_WARM_UP}
 * RPCs before), so that the table compares steady states rather than a young JVM's interpreter
 * and JIT compilers under emulation; the C NAA runs twice, before and after the Java NAA.
 * Asserts that the Java NAA answers the C client about as fast as the C NAA does (a generous
 * bound relative to the C pair of the same run, so that emulation does not make it flaky).
 *
 * <p>Needs a build of the NAAICE C library (naa-communication-library, not part of this
 * repository): {@code VERBS4J_NAAICE_C} names its CMake build directory (with {@code
 * examples/naaice_server} and {@code lib/libnaaice_low_level.a}); without it the test is skipped,
 * so {@code bin/test} leaves it out of its runs: run it with {@code VERBS4J_NAAICE_C=DIR bin/test
 * --device-only --select-class=dev.verbs4j.naaice.NaaiceLatencyDeviceTest}. The C client is {@code
 * src/test/c/naaice_c_rpc.c}, compiled here with gcc against that library.
 */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_EXTERNAL)
@Timeout(170)
class NaaiceLatencyDeviceTest {

    private static final int RPCS = 40;
    private static final int WARM_UP = 20;
    /** RPCs of a Java client that warm the Java client up (against the Java NAA) before it is measured. */
    private static final int CLIENT_WARM_UP = 1500;
    /** RPCs of a C client that warm the Java NAA up before it is measured: its worker's loop gets compiled. */
    private static final int NAA_WARM_UP = 300;
    /** Runs against the C library that one of its flaws stopped are repeated, up to this many in all. */
    private static final int ATTEMPTS = 6;
    private static final int PORT = 12345; // the C library's, fixed in its server and in naaice_c_rpc
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final Duration RPC_WAIT = Duration.ofSeconds(3);
    /** A C client's run: setup (under a second) and at most {@value #NAA_WARM_UP} RPCs of a few ms. */
    private static final Duration C_RUN_LIMIT = Duration.ofSeconds(20);
    private static Path cServer;
    private static Path cClient;
    private static Path work;

    @BeforeAll
    static void build() throws Exception {
        String dir = System.getenv("VERBS4J_NAAICE_C");
        assumeTrue(dir != null && !dir.isEmpty(), "VERBS4J_NAAICE_C (a build of the NAAICE C library) is not set");
        Path build = Path.of(dir);
        cServer = build.resolve("examples/naaice_server");
        Path lib = build.resolve("lib/libnaaice_low_level.a");
        assumeTrue(Files.isExecutable(cServer) && Files.isRegularFile(lib), "no NAAICE C library build in " + build);
        work = Files.isDirectory(Path.of("naaice")) ? Path.of("naaice/target/naaice-c").toAbsolutePath()
                : Path.of("target/naaice-c").toAbsolutePath();
        Files.createDirectories(work);
        cClient = work.resolve("naaice_c_rpc");
        Path source = work.getParent().getParent().resolve("src/test/c/naaice_c_rpc.c");
        String out = runOk(List.of("gcc", "-O2", "-o", cClient.toString(), source.toString(), lib.toString(), "-lrdmacm", "-libverbs"),
                Duration.ofSeconds(120));
        assertThat(Files.isExecutable(cClient)).as("gcc built %s: %s", cClient, out).isTrue();
    }

    @Test
    void fourPairingsOneBoot() throws Exception {
        String a = TestBed.hostA().address();
        String b = TestBed.hostB().address();
        long cc;
        Process server = startCNaa();
        try {
            cc = cClientMedian(a, b, RPCS);
        } finally {
            stop(server);
        }
        long cToJava;
        long javaToJava;
        try (NaaServer naa = NaaServer.builder().bind(NaaiceTestSupport.naaAddress(PORT)).start()) {
            cClientMedian(a, b, NAA_WARM_UP); // a new server's first RPCs run its code cold (interpreted, then compiled)
            cToJava = cClientMedian(a, b, RPCS);
            javaClientWarmUp();
            javaToJava = javaClientMedian();
        }
        long javaToC;
        server = startCNaa();
        try {
            javaToC = javaClientMedianAgainstC();
        } finally {
            stop(server);
        }
        System.out.printf("NAAICE RPC latency, 1 B in/out, function 3, median of %d RPCs (µs):%n", RPCS);
        System.out.printf("  C client    -> C NAA     %8d%n", cc);
        System.out.printf("  Java client -> C NAA     %8d%n", javaToC);
        System.out.printf("  C client    -> Java NAA  %8d%n", cToJava);
        System.out.printf("  Java client -> Java NAA  %8d%n", javaToJava);
        assertThat(cToJava).as("C client -> Java NAA against C client -> C NAA (%d µs) in this run", cc)
                .isLessThanOrEqualTo(3 * cc + 5_000);
    }

    /** Starts the C NAA (its log in the work directory) and waits until it listens. */
    private static Process startCNaa() throws Exception {
        Process server = new ProcessBuilder(cServer.toString()).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(work.resolve("naaice_server.log").toFile())).start();
        try {
            awaitListener(server);
        } catch (Throwable t) {
            stop(server);
            throw t;
        }
        return server;
    }

    /**
     * {@value #CLIENT_WARM_UP} RPCs of a Java client against the Java NAA (which answers every
     * one), before the Java client is measured: under emulation a young JVM's client runs
     * interpreted and then compiled code for hundreds of RPCs, and its JIT compilers take the
     * virtual CPUs meanwhile; the C client has no such phase. Measured in one boot against the C
     * NAA, medians of 50 RPCs: 18.9 ms over the first 50 (the client thread's CPU time 9.9 ms per
     * RPC), about 7.5 ms from RPC 250 to 1150 (2.2 ms) while the compilers still worked, then
     * 3.7 ms (about 1.2 ms), as the C client's 3.96 ms in the same boot.
     */
    private static void javaClientWarmUp() throws Exception {
        try (RdmaArena arena = RdmaArena.ofShared();
             NaaClient c = NaaClient.builder(NaaiceTestSupport.naaAddress(PORT)).localAddress(NaaiceTestSupport.hostAddress())
                     .inOut(arena.allocate(1)).build()) {
            c.connect(WAIT);
            c.setupRegions(WAIT);
            for (int i = 0; i < CLIENT_WARM_UP; i++) {
                c.rpc(ReferenceKernels.FN_NO_OP, RPC_WAIT);
            }
        }
    }

    /**
     * Runs the C client for {@code n} RPCs; the median in µs. Two flaws of the C library stop a
     * run now and then, and such a run is counted and repeated (up to {@value #ATTEMPTS} runs): the C NAA's worker
     * can miss the completion that starts an RPC and never answer (it re-arms its queue without
     * polling it again; the run then does not end), and the C host takes a reply polled before the
     * completion of its own write for a protocol error (the order is not guaranteed; under
     * emulation a NAA's reply can overtake its acknowledgement of the write).
     */
    private static long cClientMedian(String local, String naa, int n) throws Exception {
        List<String> command = List.of(cClient.toString(), local, naa, "1", Integer.toString(n), "3");
        for (int attempt = 1; ; attempt++) {
            RunResult r = run(command, C_RUN_LIMIT);
            String why = r.timedOut() ? "did not end within " + C_RUN_LIMIT + " (an RPC the NAA did not answer)"
                    : r.output().contains("IBV_WC_RECV_RDMA_WITH_IMM, not handled for state: NAAICE_DATA_SENDING")
                    ? "polled a reply before its own write's completion and stopped" : null;
            if (why != null && attempt < ATTEMPTS) {
                System.out.printf("naaice_c_rpc (attempt %d) %s; running it again%n", attempt, why);
                continue;
            }
            assertThat(r.status()).as("%s exit status (%s); output:%n%s", command, why, tail(r.output())).isZero();
            for (String line : r.output().split("\n")) {
                if (line.startsWith("median_us ")) {
                    return Long.parseLong(line.substring(10).trim());
                }
            }
            throw new AssertionError("naaice_c_rpc printed no median:\n" + tail(r.output()));
        }
    }

    private static String tail(String text) {
        return text.length() <= 4000 ? text : "..." + text.substring(text.length() - 4000);
    }

    /**
     * {@link #javaClientMedian} against the C NAA, which now and then leaves an RPC unanswered: its
     * worker can miss the completion that starts an RPC (it re-arms its queue without polling it
     * again), and it ends its side of the connection when the client's next request is polled
     * before the completion of its own reply's write (the order is not guaranteed). Such an RPC
     * times out after {@link #RPC_WAIT}; the run goes on on a new connection, keeping the samples
     * measured so far, on up to {@value #ATTEMPTS} connections.
     */
    private static long javaClientMedianAgainstC() throws Exception {
        return javaClientMedian(ATTEMPTS);
    }

    /** {@link #javaClientMedian(int)} on one connection: the Java NAA answers every RPC. */
    private static long javaClientMedian() throws Exception {
        return javaClientMedian(1);
    }

    /**
     * Runs {@value #WARM_UP} RPCs of a Java client, then {@value #RPCS} measured ones; the median
     * in µs. An RPC that times out ends its connection; with {@code connections} above 1 the run
     * goes on on a new one.
     */
    private static long javaClientMedian(int connections) throws Exception {
        InetSocketAddress naa = NaaiceTestSupport.naaAddress(PORT);
        long[] t = new long[RPCS];
        int done = -WARM_UP;
        for (int connection = 1; ; connection++) {
            try (RdmaArena arena = RdmaArena.ofShared()) {
                MemorySegment p = arena.allocate(1);
                try (NaaClient c = NaaClient.builder(naa).localAddress(NaaiceTestSupport.hostAddress()).inOut(p).build()) {
                    c.connect(WAIT);
                    c.setupRegions(WAIT);
                    for (; done < RPCS; done++) {
                        c.rpc(ReferenceKernels.FN_NO_OP, RPC_WAIT);
                        if (done >= 0) {
                            t[done] = c.lastRpcNanos() / 1000;
                        }
                    }
                    Arrays.sort(t);
                    return t[RPCS / 2];
                } catch (NaaiceException e) {
                    if (e.reason() != NaaiceException.Reason.TIMEOUT || connection >= connections) {
                        throw e;
                    }
                    System.out.printf("the C NAA did not answer an RPC (connection %d, %d of %d RPCs done: %s); going on on a"
                            + " new connection%n", connection, done + WARM_UP, WARM_UP + RPCS, e.getMessage());
                }
            }
        }
    }

    /** Waits until a connection manager id listens on the NAAICE port (the C server is up). */
    private static void awaitListener(Process server) throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (System.nanoTime() < deadline) {
            assertThat(server.isAlive()).as("the C NAAICE server runs").isTrue();
            if (ToolRunner.cmListening(runOk(List.of("rdma", "res", "show", "cm_id"), WAIT), PORT, ToolRunner.rdmaDevices())) {
                return;
            }
            Thread.sleep(100);
        }
        throw new AssertionError("the C NAAICE server did not listen within " + WAIT);
    }

    private static void stop(Process p) throws InterruptedException {
        p.destroy(); // SIGTERM: it stops its loop and exits
        if (!p.waitFor(20, TimeUnit.SECONDS)) {
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    private record RunResult(int status, boolean timedOut, String output) {
    }

    /** Runs a command to its end, or kills it after {@code limit}; its exit status and output (stdout and stderr). */
    private static RunResult run(List<String> command, Duration limit) throws IOException, InterruptedException {
        Path log = Files.createTempFile(work, "run", ".log");
        try {
            Process p = new ProcessBuilder(new ArrayList<>(command)).redirectErrorStream(true).redirectOutput(log.toFile()).start();
            if (!p.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                return new RunResult(-1, true, Files.readString(log, StandardCharsets.UTF_8));
            }
            return new RunResult(p.exitValue(), false, Files.readString(log, StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(log);
        }
    }

    /** {@link #run}, failing on a non-zero exit status; the output. */
    private static String runOk(List<String> command, Duration limit) throws IOException, InterruptedException {
        RunResult r = run(command, limit);
        assertThat(r.timedOut()).as("%s ended within %s", command, limit).isFalse();
        assertThat(r.status()).as("%s exit status; output:%n%s", command, r.output()).isZero();
        return r.output();
    }
}
