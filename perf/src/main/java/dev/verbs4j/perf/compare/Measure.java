package dev.verbs4j.perf.compare;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The measurement: for each tool, the C runs (one server/client process pair per size, retried
 * while they give no usable value), then the Java runs (one JVM per side for all sizes, see
 * {@link JavaBatch}), with one progress line per run.
 */
final class Measure {

    private final CompareOptions o;
    private final Testbed.Sides sides;
    private final PrintStream out;
    private final PrintStream err;
    private int port;
    private int done;
    private int total;
    private Path work;
    private final boolean pinning;

    Measure(CompareOptions o, Testbed.Sides sides, PrintStream out, PrintStream err) {
        this.o = o;
        this.sides = sides;
        this.out = out;
        this.err = err;
        this.port = o.port;
        this.pinning = canPin(o.pin);
    }

    /** The sizes a tool runs: the requested ones, or the atomic size. */
    static List<Long> sizesOf(Tool t, List<Long> requested) {
        return t.sized() ? requested : List.of(Tool.ATOMIC_SIZE);
    }

    List<Result> run() throws IOException, InterruptedException {
        for (Tool t : o.tools) {
            total += 2 * sizesOf(t, o.sizes).size();
        }
        out.printf(Locale.ROOT, "compare: %d runs (C then Java per tool): server %s, client %s -> %s, -n %d%s%s%n", total,
                sides.server(), sides.client(), sides.host(), o.iters, o.events ? " -e" : "",
                pinning ? "; servers on CPU " + SERVER_CPU + ", clients on CPU " + CLIENT_CPU : "; not pinned to CPUs");
        work = Files.createTempDirectory("verbs4j-compare");
        try {
            List<Result> results = new ArrayList<>();
            for (Tool t : o.tools) {
                List<Long> sizes = sizesOf(t, o.sizes);
                Map<Long, double[]> c = new HashMap<>();
                for (long size : sizes) {
                    c.put(size, cRun(t, size));
                }
                Map<Long, Double> java = javaRuns(t, sizes);
                for (long size : sizes) {
                    double[] cv = c.get(size);
                    results.add(new Result(t, size, cv[0], java.getOrDefault(size, Double.NaN), (int) cv[1]));
                }
            }
            return results;
        } finally {
            stopJava();
            deleteTree(work);
        }
    }

    // ---- C ----

    /** One C measurement: {value or NaN, runs it took}. */
    private double[] cRun(Tool t, long size) throws IOException, InterruptedException {
        int attempts = 1 + o.retries;
        String why = "";
        for (int a = 1; a <= attempts; a++) {
            long start = System.nanoTime();
            int p = port++;
            List<String> common = new ArrayList<>(List.of("-n", Integer.toString(o.iters)));
            if (o.events) {
                common.add("-e");
            }
            if (t.sized()) {
                common.addAll(List.of("-s", Long.toString(size)));
            }
            common.addAll(List.of("-p", Integer.toString(p)));
            List<String> server = pinned(SERVER_CPU, List.of(t.program()));
            server.addAll(common);
            server.addAll(sides.server().options());
            List<String> client = pinned(CLIENT_CPU, List.of(t.program()));
            client.addAll(common);
            client.addAll(sides.client().options());
            client.add(sides.host());
            Path sOut = work.resolve("c-server.out");
            Path cOut = work.resolve("c-client.out");
            Path cErr = work.resolve("c-client.err");
            Process s = start(server, sOut, sOut);
            Process c = null;
            int rc;
            try {
                if (!awaitListening(p, s, 60_000)) {
                    rc = -1;
                    why = "the C server did not listen (" + lastLine(sOut) + ")";
                } else {
                    c = start(client, cOut, cErr);
                    if (!c.waitFor(o.timeoutSeconds, TimeUnit.SECONDS)) {
                        rc = -1;
                        why = "no end after " + o.timeoutSeconds + " s";
                    } else {
                        rc = c.exitValue();
                    }
                    s.waitFor(30, TimeUnit.SECONDS);
                }
            } finally {
                stop(c);
                stop(s);
            }
            if (rc >= 0) {
                List<String> lines = Files.readAllLines(cOut, StandardCharsets.ISO_8859_1);
                String errText = Files.readString(cErr, StandardCharsets.ISO_8859_1);
                double v = ResultParser.values(lines, t.latency()).getOrDefault(t.sized() ? size : Tool.ATOMIC_SIZE,
                        Double.NaN);
                if (rc == 0 && ResultParser.usable(v)) {
                    progress(t, "C", size, v, a == 1 ? "" : "run " + a, start);
                    return new double[] {v, a};
                }
                boolean calibration = errText.contains("Correlation coefficient") || errText.contains("produce a report");
                why = calibration ? "calibration failed" + (lines.stream().anyMatch(l -> l.contains("inf")) ? " (inf)" : "")
                        : rc != 0 ? "status " + rc + " (" + lastLine(cErr) + ")"
                        : "no usable value";
            }
            out.printf(Locale.ROOT, "compare:             %-14s C    %8d B  run %d of %d: %s%s%n", t.program(), size, a,
                    attempts, why, a < attempts ? ", again" : "");
            out.flush();
        }
        progress(t, "C", size, Double.NaN, "failed: " + why, System.nanoTime());
        return new double[] {Double.NaN, attempts};
    }

    private Process start(List<String> cmd, Path stdout, Path stderr) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()))
                .redirectOutput(stdout.toFile());
        if (stdout.equals(stderr)) {
            pb.redirectErrorStream(true);
        } else {
            pb.redirectError(stderr.toFile());
        }
        try {
            return pb.start();
        } catch (IOException e) {
            throw new Compare.SetupException("cannot start " + cmd.get(0) + " (" + e.getMessage() + ")"
                    + (cmd.get(0).startsWith("ib_") ? "; perftest's C tools come with the package perftest" : ""));
        }
    }

    private static void stop(Process p) throws InterruptedException {
        if (p != null && p.isAlive()) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
    }

    // ---- Java ----

    private Process jServer;
    private Process jClient;
    private BufferedReader jClientOut;

    /** Starts the two {@link JavaBatch} JVMs (once for the whole comparison, or again after a failure). */
    private void startJava() throws IOException {
        if (jClient != null && jClient.isAlive() && jServer != null && jServer.isAlive()) {
            return;
        }
        stopJava();
        List<String> server = pinned(SERVER_CPU, javaCommand("server"));
        server.addAll(List.of("-n", Integer.toString(o.iters)));
        List<String> client = pinned(CLIENT_CPU, javaCommand("client"));
        client.addAll(List.of("-n", Integer.toString(o.iters)));
        if (o.events) {
            server.add("-e");
            client.add("-e");
        }
        server.addAll(sides.server().options());
        client.addAll(sides.client().options());
        client.add(sides.host());
        jServer = new ProcessBuilder(server).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(work.resolve("java-server.out").toFile())).start();
        jClient = new ProcessBuilder(client)
                .redirectError(ProcessBuilder.Redirect.appendTo(work.resolve("java-client.err").toFile())).start();
        jClientOut = new BufferedReader(new InputStreamReader(jClient.getInputStream(), StandardCharsets.UTF_8));
    }

    private void stopJava() {
        for (Process p : new Process[] {jClient, jServer}) {
            if (p != null && p.isAlive()) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
            }
        }
        jClient = null;
        jServer = null;
    }

    /** The Java runs of a tool at all sizes, in the two {@link JavaBatch} JVMs. */
    private Map<Long, Double> javaRuns(Tool t, List<Long> sizes) throws IOException, InterruptedException {
        List<Long> runs = new ArrayList<>();
        if (o.warmup) {
            runs.add(sizes.get(0));
        }
        runs.addAll(sizes);
        int base = port;
        port += runs.size();
        String sizeList = String.join(",", runs.stream().map(s -> t.sized() ? Long.toString(s) : "0").toList());
        Map<Long, Double> values = new ConcurrentHashMap<>();
        startJava();
        // the client waits as long for the server to listen as a run may take: the server's JVM may still be starting
        String command = t.program() + " " + base + " " + sizeList + " " + o.timeoutSeconds + "\n";
        for (Process p : new Process[] {jServer, jClient}) {
            p.getOutputStream().write(command.getBytes(StandardCharsets.UTF_8));
            p.getOutputStream().flush();
        }
        long limit = (long) runs.size() * o.timeoutSeconds + 120;
        Process client = jClient;
        Process server = jServer;
        Thread watchdog = Thread.ofPlatform().daemon().name("compare watchdog").start(() -> {
            try {
                Thread.sleep(limit * 1000);
                out.printf(Locale.ROOT, "compare: the Java %s runs did not end in %d s; stopped%n", t.program(), limit);
                for (Process p : new Process[] {client, server}) {
                    p.descendants().forEach(ProcessHandle::destroyForcibly);
                    p.destroyForcibly();
                }
            } catch (InterruptedException e) {
                // the batch ended in time
            }
        });
        boolean complete = read(t, values);
        watchdog.interrupt();
        if (!complete) {
            stopJava();
        }
        for (long size : sizes) {
            if (!values.containsKey(size)) {
                progress(t, "Java", size, Double.NaN, "failed: no result (" + lastLine(work.resolve("java-client.err"))
                        + "; server: " + lastLine(work.resolve("java-server.out")) + ")", System.nanoTime());
            }
        }
        return values;
    }

    /** Reads the client JVM's framed output up to the end of the batch, one progress line per run; false at EOF. */
    private boolean read(Tool t, Map<Long, Double> values) throws IOException {
        List<String> lines = new ArrayList<>();
        long start = System.nanoTime();
        for (String line; (line = jClientOut.readLine()) != null; ) {
            if (line.equals(JavaBatch.DONE)) {
                return true;
            } else if (line.startsWith(JavaBatch.BEGIN)) {
                lines.clear();
                start = System.nanoTime();
            } else if (line.startsWith(JavaBatch.END)) {
                String[] f = line.substring(JavaBatch.END.length()).split(" ");
                int index = Integer.parseInt(f[0]);
                int status = Integer.parseInt(f[2]);
                long size = t.sized() ? Long.parseLong(f[1]) : Tool.ATOMIC_SIZE;
                double v = ResultParser.values(lines, t.latency()).getOrDefault(size, Double.NaN);
                boolean ok = status == 0 && ResultParser.usable(v);
                if (o.warmup && index == 0) {
                    out.printf(Locale.ROOT, "compare:             %-14s Java %8d B  warm-up run%s (%.1f s), not counted%n",
                            t.program(), size, ok ? "" : " failed", (System.nanoTime() - start) / 1e9);
                    out.flush();
                    continue;
                }
                values.put(size, ok ? v : Double.NaN);
                progress(t, "Java", size, ok ? v : Double.NaN, ok ? "" : "failed: status " + status, start);
            } else {
                lines.add(line);
            }
        }
        return false;
    }

    /** The CPUs of the two sides when pinned: the server's and the client's, C and Java alike. */
    static final int SERVER_CPU = 1;
    static final int CLIENT_CPU = 0;

    /**
     * {@code command} run on CPU {@code cpu} with taskset when pinning is on and possible (two CPUs
     * or more, taskset on PATH): two peers that spin on their completions each get a CPU of their
     * own. Without it, a scheduler may put both on one CPU, where each spins through its time
     * slice before the other can answer (about 4 ms per round trip in the VM).
     */
    private List<String> pinned(int cpu, List<String> command) {
        List<String> cmd = new ArrayList<>();
        if (pinning) {
            cmd.addAll(List.of("taskset", "-c", Integer.toString(cpu)));
        }
        cmd.addAll(command);
        return cmd;
    }

    /** Whether the sides are pinned: asked for, two CPUs or more, and taskset on PATH. */
    static boolean canPin(boolean asked) {
        if (!asked || Runtime.getRuntime().availableProcessors() < 2) {
            return false;
        }
        String path = System.getenv("PATH");
        if (path == null) {
            return false;
        }
        for (String dir : path.split(":")) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, "taskset"))) {
                return true;
            }
        }
        return false;
    }

    /** The command that starts a {@link JavaBatch} with this JVM's module path (or class path). */
    static List<String> javaCommand(String role) {
        String java = ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        List<String> cmd = new ArrayList<>(List.of(java));
        String modulePath = System.getProperty("jdk.module.path");
        if (modulePath != null && !modulePath.isEmpty()) {
            cmd.addAll(List.of("--enable-native-access=dev.verbs4j.bindings,dev.verbs4j.verbs,dev.verbs4j.rdmacm",
                    "--module-path", modulePath, "--add-modules", "ALL-MODULE-PATH",
                    "-m", "dev.verbs4j.perf/" + JavaBatch.class.getName()));
        } else {
            cmd.addAll(List.of("--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
                    JavaBatch.class.getName()));
        }
        cmd.add(role);
        return cmd;
    }

    // ---- helpers ----

    private synchronized void progress(Tool t, String lang, long size, double v, String note, long startNanos) {
        done++;
        String value = Double.isNaN(v) ? "-" : t.latency() ? String.format(Locale.ROOT, "%.2f usec", v)
                : String.format(Locale.ROOT, "%.6f Mpps", v);
        out.printf(Locale.ROOT, "compare: [%3d/%3d] %-14s %-4s %8d B  %-18s %s%n", done, total, t.program(), lang, size,
                value, note.isEmpty() ? String.format(Locale.ROOT, "(%.1f s)", (System.nanoTime() - startNanos) / 1e9)
                        : note);
        out.flush();
    }

    /** Whether something listens on TCP {@code port} before {@code limitMillis}, while {@code p} lives. */
    private static boolean awaitListening(int port, Process p, long limitMillis) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + limitMillis * 1_000_000;
        while (System.nanoTime() < deadline && p.isAlive()) {
            if (JavaBatch.listening(port)) {
                return true;
            }
            Thread.sleep(20);
        }
        return false;
    }

    private static String lastLine(Path file) {
        try {
            List<String> l = Files.readAllLines(file, StandardCharsets.ISO_8859_1).stream()
                    .map(String::strip).filter(s -> !s.isEmpty()).toList();
            return l.isEmpty() ? "no output" : l.getLast();
        } catch (IOException e) {
            return "no output";
        }
    }

    private static void deleteTree(Path dir) {
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // a temporary directory; nothing to do
        }
    }
}
