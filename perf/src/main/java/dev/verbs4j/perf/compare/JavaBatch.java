package dev.verbs4j.perf.compare;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * One side (server or client) of the Java tools, in one JVM for the whole comparison, so that the
 * JVM starts once per side: it reads batches from stdin, one line each,
 * {@code TOOL BASEPORT SIZE,SIZE,... LISTEN_SECONDS}, and runs {@code TOOL}'s {@code run} once
 * per size with the common options, {@code -s SIZE_i} (none for size 0) and {@code -p
 * BASEPORT+i}, as perftest's {@code -a} runs its sizes in one process. The client waits up to
 * {@code LISTEN_SECONDS} until the server listens on run {@code i}'s port (the server's JVM
 * starts beside it, which can take minutes in an emulated VM). Each run's output is framed by marker lines for {@link Compare}, and each batch
 * ends with a line of its own:
 * <pre>
 * @@compare begin I SIZE
 * ...the tool's stdout...
 * @@compare end I SIZE STATUS
 * @@compare batch done
 * </pre>
 * Usage: {@code JavaBatch server|client [ARGS...]} (the client's last argument is the host).
 */
public final class JavaBatch {

    static final String BEGIN = "@@compare begin ";
    static final String END = "@@compare end ";
    static final String DONE = "@@compare batch done";

    private JavaBatch() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: JavaBatch server|client [ARGS...]");
            System.exit(2);
        }
        boolean client = args[0].equals("client");
        List<String> common = new ArrayList<>(Arrays.asList(args).subList(1, args.length));
        String host = client ? common.removeLast() : null;
        PrintStream out = System.out;
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            String[] f = line.strip().split(" ");
            if (f.length != 4) {
                continue;
            }
            batch(Tool.byProgram(f[0]), Integer.parseInt(f[1]), Arrays.stream(f[2].split(",")).mapToLong(Long::parseLong)
                    .toArray(), Long.parseLong(f[3]), common, host, out);
            out.println(DONE);
            out.flush();
        }
        System.exit(0);
    }

    private static void batch(Tool tool, int basePort, long[] sizes, long listenSeconds, List<String> common, String host,
                              PrintStream out)
            throws IOException, InterruptedException {
        for (int i = 0; i < sizes.length; i++) {
            int port = basePort + i;
            List<String> a = new ArrayList<>(common);
            if (sizes[i] > 0) {
                a.addAll(List.of("-s", Long.toString(sizes[i])));
            }
            a.addAll(List.of("-p", Integer.toString(port)));
            int status;
            out.println(BEGIN + i + " " + sizes[i]);
            out.flush();
            if (host != null && !awaitListening(port, listenSeconds * 1000)) {
                System.err.println("compare: nothing listens on port " + port + " for the client after " + listenSeconds + " s");
                status = 124;
            } else {
                if (host != null) {
                    a.add(host);
                }
                status = tool.entry.run(a.toArray(String[]::new), out, System.err);
            }
            out.flush();
            out.println(END + i + " " + sizes[i] + " " + status);
            out.flush();
        }
    }

    /** Whether something listens on TCP {@code port} (IPv4 or IPv6) within {@code millis}. */
    static boolean awaitListening(int port, long millis) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + millis * 1_000_000;
        while (!listening(port)) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(20);
        }
        return true;
    }

    /** Whether a socket in state LISTEN has local port {@code port} ({@code /proc/net/tcp}, {@code tcp6}). */
    static boolean listening(int port) throws IOException {
        String hexPort = String.format(Locale.ROOT, ":%04X", port);
        for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
            Path p = Path.of(table);
            if (!Files.isReadable(p)) {
                continue;
            }
            for (String line : Files.readAllLines(p)) {
                String[] f = line.strip().split("\\s+");
                if (f.length > 3 && f[1].endsWith(hexPort) && f[3].equals("0A")) {
                    return true;
                }
            }
        }
        return false;
    }
}
