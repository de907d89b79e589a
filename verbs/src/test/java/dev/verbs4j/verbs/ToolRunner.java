package dev.verbs4j.verbs;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs one side of a tool test: a Java tool in this JVM (on a thread, with its own output
 * streams) or a C program as a process, in the background, bounded by a time limit.
 */
public final class ToolRunner {

    /** A Java tool's entry point: arguments and streams in, exit status out. */
    @FunctionalInterface
    public interface JavaTool {
        int run(String[] args, PrintStream out, PrintStream err);
    }

    /** One side's result. */
    public record Run(String who, int status, List<String> out, List<String> err) {

        /** The first output line starting with {@code prefix}, or null. */
        public String line(String prefix) {
            return out.stream().filter(l -> l.startsWith(prefix)).findFirst().orElse(null);
        }

        @Override
        public String toString() {
            return who + " exited " + status + "\n  stdout: " + String.join("\n          ", out)
                    + "\n  stderr: " + String.join("\n          ", err);
        }
    }

    /** One in-process run of a Java tool, to its end: its status and all it printed. */
    public record Captured(int status, String out, String err) {
    }

    /** Runs {@code tool} with {@code args} on this thread, each stream into a string of its own. */
    public static Captured runJava(JavaTool tool, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = tool.run(args, new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Captured(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    /** What a server and its client returned and printed. */
    public record Exchange(Run server, Run client) {

        /** Asserts that both exited 0 (each failure shown with both sides' output); this exchange. */
        public Exchange succeeded() {
            assertThat(client.status()).as("%s\n%s", client, server).isZero();
            assertThat(server.status()).as("%s\n%s", server, client).isZero();
            return this;
        }
    }

    /** Starts one side. */
    @FunctionalInterface
    public interface Start {
        Background start() throws Exception;
    }

    /**
     * Starts {@code server}, waits until something listens on RDMA CM {@code port} (at most
     * {@code listenLimit}), runs {@code client} to its end and then awaits the server; both are
     * stopped whatever happens.
     */
    public static Exchange cmServerAndClient(Start server, int port, Duration listenLimit, Start client) throws Exception {
        Background s = server.start();
        try {
            awaitCmListening(port, listenLimit);
            Background c = client.start();
            Run clientRun;
            try {
                clientRun = c.await();
            } finally {
                c.stop();
            }
            return new Exchange(s.await(), clientRun);
        } finally {
            s.stop();
        }
    }

    /** A side running in the background. */
    public interface Background {
        /** Waits for the end (at most the run limit; then stops the side and fails). */
        Run await() throws Exception;

        /** Stops the side now (a Java tool is interrupted, a process killed). */
        void stop();

        /** Kills a process side with SIGKILL at once (Java sides are interrupted). */
        default void kill() {
            stop();
        }

        /** Whether the side is still running. */
        boolean isAlive();

        /** What a Java side printed on stdout so far (a process side's output is read at its end). */
        default String stdoutSoFar() {
            throw new UnsupportedOperationException("a process side's output is read when it ends");
        }

        /** The process id of a process side (a Java side has none of its own). */
        default long pid() {
            throw new UnsupportedOperationException("a Java side runs in this JVM");
        }
    }

    private ToolRunner() {
    }

    /** Starts {@code tool} with {@code args} on a daemon thread; {@code limit} bounds {@link Background#await()}. */
    public static Background startJava(JavaTool tool, String who, Duration limit, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        CompletableFuture<Integer> status = new CompletableFuture<>();
        Thread t = Thread.ofPlatform().name(who).daemon().start(() -> {
            try {
                status.complete(tool.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
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
                    rc = status.get(limit.toMillis(), TimeUnit.MILLISECONDS);
                } catch (TimeoutException e) {
                    // where the side was stuck, for the report
                    String where = stack(t.getStackTrace());
                    stop();
                    throw new AssertionError(who + " (" + String.join(" ", args) + ") did not finish in " + limit
                            + "; so far: " + out.toString(StandardCharsets.UTF_8) + err.toString(StandardCharsets.UTF_8)
                            + "\n  its thread was" + where);
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

            @Override
            public boolean isAlive() {
                return t.isAlive();
            }

            @Override
            public String stdoutSoFar() {
                return out.toString(StandardCharsets.UTF_8);
            }
        };
    }

    /** Starts the program {@code command[0]} with the rest as arguments, stdin from /dev/null. */
    public static Background startC(String who, Duration limit, String... command) throws IOException {
        List<String> cmd = List.of(command);
        Path outFile = Files.createTempFile("tool", ".out");
        Path errFile = Files.createTempFile("tool", ".err");
        Process p = new ProcessBuilder(cmd).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectOutput(outFile.toFile()).redirectError(errFile.toFile()).start();
        return new Background() {
            @Override
            public Run await() throws Exception {
                try {
                    if (!p.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)) {
                        String where = processStacks(p.pid());
                        stop();
                        throw new AssertionError(who + " (" + String.join(" ", cmd) + ") did not finish in " + limit
                                + "; so far: " + read(outFile) + read(errFile) + "\n  where it waited:" + where);
                    }
                    return new Run(who, p.exitValue(), lines(read(outFile)), lines(read(errFile)));
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

            @Override
            public void kill() {
                stop(); // destroyForcibly is SIGKILL on Linux
            }

            @Override
            public long pid() {
                return p.pid();
            }

            @Override
            public boolean isAlive() {
                return p.isAlive();
            }
        };
    }

    /** Waits until some socket listens on TCP {@code port}, at most {@code limit}. */
    public static void awaitTcpListening(int port, Duration limit) throws IOException, InterruptedException {
        String hexPort = String.format(Locale.ROOT, ":%04X", port);
        long deadline = System.nanoTime() + limit.toNanos();
        while (System.nanoTime() < deadline) {
            for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
                Path p = Path.of(table);
                if (!Files.isReadable(p)) {
                    continue;
                }
                for (String line : Files.readAllLines(p)) {
                    String[] f = line.strip().split("\\s+");
                    if (f.length > 3 && f[1].endsWith(hexPort) && f[3].equals("0A")) {
                        return;
                    }
                }
            }
            Thread.sleep(50);
        }
        throw new AssertionError("nothing listens on TCP port " + port + " after " + limit);
    }

    /**
     * Waits until an RDMA CM listener is bound to {@code port} (the kernel lists CM ids in
     * {@code rdma res show cm_id}), at most {@code limit}; see {@link #cmListening}.
     */
    public static void awaitCmListening(int port, Duration limit) throws IOException, InterruptedException {
        awaitCmListening(port, limit, Duration.ofMillis(50));
    }

    /** As {@link #awaitCmListening(int, Duration)}, looking every {@code every} (each look is a process). */
    public static void awaitCmListening(int port, Duration limit, Duration every) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        String text = "";
        while (System.nanoTime() < deadline) {
            Process p = new ProcessBuilder("rdma", "res", "show", "cm_id").redirectErrorStream(true).start();
            text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            p.waitFor(5, TimeUnit.SECONDS);
            if (cmListening(text, port, rdmaDevices())) {
                return;
            }
            Thread.sleep(every.toMillis());
        }
        throw new AssertionError("no RDMA CM listener on port " + port + " after " + limit + "; last seen:\n" + text);
    }

    /**
     * Whether {@code cmIds} (the output of {@code rdma res show cm_id}) shows a listener on
     * {@code port} that a connect can reach. The kernel lists a listener once per device it
     * listens on ({@code link rxe_a/- ... state LISTEN ... src-addr 0.0.0.0:PORT}); a listener
     * on the wildcard address is added to the devices one after the other, so it is ready only
     * once it is listed on every device in {@code devices}: a connect through a device not yet
     * listed is rejected (no listener).
     */
    public static boolean cmListening(String cmIds, int port, Set<String> devices) {
        Pattern listener = Pattern.compile("link ([^/ ]+)/\\S* .*state LISTEN .*src-addr (\\S*):" + port + "( .*|$)");
        Set<String> on = new HashSet<>();
        boolean wildcard = false;
        for (String line : cmIds.split("\n")) {
            Matcher m = listener.matcher(line.strip());
            if (m.matches()) {
                on.add(m.group(1));
                String addr = m.group(2);
                wildcard |= addr.equals("0.0.0.0") || addr.equals("[::]") || addr.equals("::");
            }
        }
        return !on.isEmpty() && (!wildcard || on.containsAll(devices));
    }

    /** {@code frames} as a report shows a thread's stack: one {@code "\n    at FRAME"} per frame. */
    public static String stack(StackTraceElement[] frames) {
        StringBuilder where = new StringBuilder();
        for (StackTraceElement f : frames) {
            where.append("\n    at ").append(f);
        }
        return where.toString();
    }

    /**
     * Where a hung process waits, for the report: each thread's kernel stack (readable as root, as
     * in the VM) and, if gdb is there, its user-space frames (exported symbols only).
     */
    static String processStacks(long pid) {
        StringBuilder where = new StringBuilder();
        File[] tasks = new File("/proc/" + pid + "/task").listFiles();
        for (File t : tasks == null ? new File[0] : tasks) {
            where.append("\n    thread ").append(t.getName()).append(' ').append(read(t.toPath().resolve("comm")).strip())
                    .append(" in ").append(read(t.toPath().resolve("wchan")).strip());
            for (String l : lines(read(t.toPath().resolve("stack")))) {
                where.append("\n      ").append(l);
            }
        }
        try {
            Path out = Files.createTempFile("gdb", ".out");
            try {
                Process gdb = new ProcessBuilder("gdb", "-p", String.valueOf(pid), "-batch", "-nx",
                        "-ex", "thread apply all bt 20").redirectErrorStream(true).redirectOutput(out.toFile())
                        .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
                boolean ended = gdb.waitFor(20, TimeUnit.SECONDS);
                if (!ended) {
                    gdb.destroyForcibly();
                }
                List<String> said = lines(read(out));
                List<String> frames = said.stream().filter(l -> l.startsWith("#") || l.startsWith("Thread ")).toList();
                frames.forEach(l -> where.append("\n    ").append(l));
                if (frames.isEmpty()) {
                    // why there are none: gdb's own last words, or its time ran out
                    where.append("\n    (gdb: no frames").append(ended ? "; it said: " + String.join(" / ", said.subList(
                            Math.max(0, said.size() - 3), said.size())) : " within 20 s").append(')');
                }
            } finally {
                Files.deleteIfExists(out);
            }
        } catch (IOException e) {
            where.append("\n    (no gdb: ").append(e.getMessage()).append(')');
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return where.toString();
    }

    /** The RDMA devices of this machine ({@code /sys/class/infiniband}). */
    public static Set<String> rdmaDevices() {
        String[] names = new File("/sys/class/infiniband").list();
        return names == null ? Set.of() : Set.of(names);
    }

    private static String read(Path p) {
        try {
            return Files.readString(p);
        } catch (IOException e) {
            return "";
        }
    }

    /** The lines of {@code s}, without a trailing empty one. */
    public static List<String> lines(String s) {
        if (s.isEmpty()) {
            return List.of();
        }
        String t = s.endsWith("\n") ? s.substring(0, s.length() - 1) : s;
        return new ArrayList<>(List.of(t.split("\n", -1)));
    }
}
