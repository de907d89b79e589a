package dev.verbs4j.perf.tools;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * {@code -W/--report-counters}: the port counters of sysfs
 * ({@code /sys/class/infiniband/<device>/ports/<port>/<name>}, names such as
 * {@code counters/port_xmit_data} or {@code hw_counters/...}), read when the run starts and after
 * each result row, each printed as its change since the previous reading, as perftest prints
 * them. Holds paths only; no native resources.
 */
final class PortCounters {

    private final String[] names;
    private final Path[] paths;
    private final long[] last;

    private PortCounters(String[] names, Path[] paths) {
        this.names = names;
        this.paths = paths;
        this.last = new long[names.length];
    }

    /**
     * The counters of the comma-separated {@code list} on {@code device}'s {@code port}, read once;
     * null when one of them cannot be read (perftest then fails the run).
     */
    static PortCounters open(String list, String device, int port) {
        String[] names = list.split(",", -1);
        Path[] paths = new Path[names.length];
        for (int i = 0; i < names.length; i++) {
            Path p = Path.of("/sys/class/infiniband", device, "ports", String.valueOf(port)).resolve(names[i]);
            if (!Files.isReadable(p) || Files.isDirectory(p)) {
                return null;
            }
            paths[i] = p;
        }
        PortCounters c = new PortCounters(names, paths);
        c.read();
        return c;
    }

    private long[] read() {
        long[] prev = last.clone();
        for (int i = 0; i < paths.length; i++) {
            try {
                last[i] = parse(Files.readString(paths[i]).strip());
            } catch (IOException | RuntimeException e) {
                // perftest keeps the previous value when a read fails
            }
        }
        return prev;
    }

    /** {@code strtoll(s, NULL, 10)}: the leading decimal digits, 0 when there are none. */
    private static long parse(String s) {
        int end = 0;
        while (end < s.length() && Character.isDigit(s.charAt(end))) {
            end++;
        }
        return end == 0 ? 0 : Long.parseLong(s.substring(0, Math.min(end, 18)));
    }

    /** Reads every counter and prints its change since the last reading, then an empty line. */
    void print(PrintStream out) {
        long[] prev = read();
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < names.length; i++) {
            s.append('\t').append(names[i]).append('=').append(Long.toUnsignedString(last[i] - prev[i])).append('\n');
        }
        out.print(s.append('\n'));
    }
}
