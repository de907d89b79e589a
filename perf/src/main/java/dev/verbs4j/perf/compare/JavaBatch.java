package dev.verbs4j.perf.compare;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * One side (server or client) of a Java tool over several message sizes, in one JVM: run {@code i}
 * is the tool's {@code run} with the common options, {@code -s SIZE_i} and {@code -p PORT+i}, as
 * perftest's {@code -a} runs its sizes in one process. The client waits until the server listens
 * on run {@code i}'s port. Each run's output is framed by marker lines for {@link Compare}:
 * <pre>
 * @@compare begin I SIZE
 * ...the tool's stdout...
 * @@compare end I SIZE STATUS
 * </pre>
 * Usage: {@code JavaBatch TOOL server|client BASEPORT SIZE,SIZE,... [ARGS...]} (size 0: no {@code -s};
 * the client's last argument is the host).
 */
public final class JavaBatch {

    static final String BEGIN = "@@compare begin ";
    static final String END = "@@compare end ";

    private JavaBatch() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 4) {
            System.err.println("usage: JavaBatch TOOL server|client BASEPORT SIZE,SIZE,... [ARGS...]");
            System.exit(2);
        }
        Tool tool = Tool.byProgram(args[0]);
        boolean client = args[1].equals("client");
        int basePort = Integer.parseInt(args[2]);
        long[] sizes = Arrays.stream(args[3].split(",")).mapToLong(Long::parseLong).toArray();
        List<String> common = new ArrayList<>(Arrays.asList(args).subList(4, args.length));
        String host = client ? common.removeLast() : null;
        PrintStream out = System.out;
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
            if (client && !awaitListening(port, 120_000)) {
                System.err.println("compare: nothing listens on port " + port + " for the client");
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
        System.exit(0);
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
