package dev.verbs4j.verbs;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * One child JVM of the misuse suite, running {@link MisuseChild} over a list of cases: the same
 * {@code java}, class path and environment as this JVM, native access enabled, its crash report
 * ({@code hs_err_pid*.log}) and standard error in a directory of its own. Hands out the lines of
 * its standard output one by one with a timeout, takes a thread dump (SIGQUIT) and kills it when
 * it hangs, and reads the head of its crash report when it died.
 */
final class MisuseChildProcess implements AutoCloseable {

    private static final String EOF = "\u0000eof";

    private final Process process;
    private final Path dir;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final List<String> other = new ArrayList<>();

    private MisuseChildProcess(Process process, Path dir) {
        this.process = process;
        this.dir = dir;
        Thread.ofPlatform().daemon().name("misuse-child-" + process.pid()).start(this::pump);
    }

    /** Starts a child in {@code dir} (created) that runs {@code names} in this order. */
    static MisuseChildProcess start(Path dir, Collection<String> names) throws IOException {
        Files.createDirectories(dir);
        Path list = dir.resolve("cases.txt");
        Files.write(list, names, StandardCharsets.UTF_8);
        String java = ProcessHandle.current().info().command().orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        List<String> command = new ArrayList<>(List.of(java,
                "--enable-native-access=ALL-UNNAMED",
                "-XX:ErrorFile=" + dir.toAbsolutePath() + "/hs_err_pid%p.log",
                "-XX:-CreateCoredumpOnCrash",
                "-Xshare:auto",
                // C1 only, one compiler thread, serial GC: under emulation (the Soft-RoCE VM) this
                // starts a JVM in a third of the time and leaves the CPUs to the cases
                "-XX:TieredStopAtLevel=1", "-XX:CICompilerCount=1", "-XX:+UseSerialGC",
                "-D" + MisuseSelfTestCases.PROPERTY + "=" + Boolean.getBoolean(MisuseSelfTestCases.PROPERTY),
                "-cp", System.getProperty("java.class.path"),
                MisuseChild.class.getName(), list.toAbsolutePath().toString()));
        ProcessBuilder pb = new ProcessBuilder(command)
                .redirectErrorStream(false)
                .redirectError(dir.resolve("stderr.txt").toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        return new MisuseChildProcess(pb.start(), dir);
    }

    private void pump() {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                lines.add(line);
            }
        } catch (IOException e) {
            // the child is gone
        } finally {
            lines.add(EOF);
        }
    }

    long pid() {
        return process.pid();
    }

    Path dir() {
        return dir;
    }

    /**
     * The next protocol line without {@link MisuseChild#PREFIX}, waiting up to {@code timeout};
     * {@link Line#timeout()} when none came, {@link Line#end()} when the child's output ended.
     * Other output is kept for {@link #otherOutput()}.
     */
    Line next(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            long left = deadline - System.nanoTime();
            String line = left > 0 ? lines.poll(left, TimeUnit.NANOSECONDS) : lines.poll();
            if (line == null) {
                return Line.TIMEOUT;
            }
            if (line.equals(EOF)) {
                lines.add(EOF);
                return Line.END;
            }
            if (line.startsWith(MisuseChild.PREFIX)) {
                return new Line(line.substring(MisuseChild.PREFIX.length()));
            }
            synchronized (other) {
                other.add(line);
            }
        }
    }

    /** A protocol line; {@link #TIMEOUT} and {@link #END} are markers. */
    record Line(String text) {
        static final Line TIMEOUT = new Line("\u0000timeout");
        static final Line END = new Line("\u0000end");

        boolean timeout() {
            return this == TIMEOUT;
        }

        boolean end() {
            return this == END;
        }
    }

    /** Waits up to {@code timeout} for the child to exit; its exit status, or null while it runs. */
    Integer awaitExit(Duration timeout) throws InterruptedException {
        return process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS) ? process.exitValue() : null;
    }

    /**
     * Asks the JVM for a thread dump (SIGQUIT; it prints it on standard output), collects it for up
     * to {@code wait}, writes it to {@code threads.txt} and returns the stacks that run verbs4j or
     * misuse code, shortened.
     */
    String threadDump(Duration wait) throws InterruptedException {
        int before;
        synchronized (other) {
            before = other.size();
        }
        try {
            new ProcessBuilder("kill", "-QUIT", Long.toString(process.pid())).inheritIO().start().waitFor(5, TimeUnit.SECONDS);
        } catch (IOException e) {
            return "(no thread dump: " + e + ")";
        }
        long deadline = System.nanoTime() + wait.toNanos();
        while (System.nanoTime() < deadline) {
            Line l = next(Duration.ofMillis(200));
            if (l.end()) {
                break;
            }
        }
        List<String> dump;
        synchronized (other) {
            dump = new ArrayList<>(other.subList(before, other.size()));
        }
        try {
            Files.write(dir.resolve("threads.txt"), dump, StandardCharsets.UTF_8);
        } catch (IOException e) {
            // the excerpt below is what matters
        }
        return interestingStacks(dump);
    }

    /** The thread stacks of a dump that contain verbs4j frames, at most 12 frames each. */
    static String interestingStacks(List<String> dump) {
        StringBuilder out = new StringBuilder();
        List<String> thread = new ArrayList<>();
        for (String line : dump) {
            if (line.startsWith("\"")) {
                flushThread(thread, out);
                thread.clear();
            }
            thread.add(line);
        }
        flushThread(thread, out);
        return out.isEmpty() ? "(no verbs4j frame in the thread dump)" : out.toString();
    }

    private static void flushThread(List<String> thread, StringBuilder out) {
        if (thread.isEmpty() || thread.stream().noneMatch(l -> l.contains("dev.verbs4j."))) {
            return;
        }
        int frames = 0;
        for (String l : thread) {
            if (l.isBlank()) {
                continue;
            }
            if (l.trim().startsWith("at ") && ++frames > 12) {
                out.append("\n\t...");
                break;
            }
            out.append('\n').append(l);
        }
    }

    /**
     * The head of the child's crash report ({@code hs_err_pid*.log}): the signal, the problematic
     * frame and the first Java frames; null when there is none.
     */
    String crashReport() throws IOException {
        Path hsErr;
        try (Stream<Path> files = Files.list(dir)) {
            hsErr = files.filter(p -> p.getFileName().toString().startsWith("hs_err_pid")).findFirst().orElse(null);
        }
        if (hsErr == null) {
            return null;
        }
        List<String> all = Files.readAllLines(hsErr, StandardCharsets.ISO_8859_1);
        StringBuilder head = new StringBuilder(hsErr.toString());
        int kept = 0;
        for (String l : all) {
            if (l.startsWith("#") && !l.isBlank() && !l.equals("#") && kept++ < 14) {
                head.append('\n').append(l);
            }
        }
        int java = -1;
        for (int i = 0; i < all.size(); i++) {
            if (all.get(i).startsWith("Java frames:")) {
                java = i;
                break;
            }
        }
        if (java >= 0) {
            head.append('\n').append(all.get(java));
            for (int i = java + 1; i < Math.min(all.size(), java + 16) && !all.get(i).isBlank(); i++) {
                head.append('\n').append(all.get(i));
            }
        } else {
            for (int i = 0; i < all.size(); i++) {
                if (all.get(i).startsWith("Native frames:")) {
                    for (int j = i; j < Math.min(all.size(), i + 16) && !all.get(j).isBlank(); j++) {
                        head.append('\n').append(all.get(j));
                    }
                    break;
                }
            }
        }
        return head.toString();
    }

    /** The last {@code n} lines the child wrote on standard error. */
    String stderrTail(int n) {
        try {
            List<String> all = Files.readAllLines(dir.resolve("stderr.txt"), StandardCharsets.ISO_8859_1);
            return String.join("\n", all.subList(Math.max(0, all.size() - n), all.size()));
        } catch (IOException e) {
            return "";
        }
    }

    /** What the child wrote on standard output that was not protocol. */
    List<String> otherOutput() {
        synchronized (other) {
            return List.copyOf(other);
        }
    }

    /** Kills the child and its descendants at once. */
    @Override
    public void close() {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
