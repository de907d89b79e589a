package dev.verbs4j.perf.compare;

import dev.verbs4j.tools.Sizes;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** The command line of {@code compare}. Pure value holder. */
final class CompareOptions {

    static final int DEFAULT_ITERS = 100;
    static final int DEFAULT_RETRIES = 3;
    static final int DEFAULT_TIMEOUT = 180;
    static final int DEFAULT_PORT = 18600;
    static final String DEFAULT_SIZES = "2..65536";

    List<Tool> tools = List.of(Tool.values());
    List<Long> sizes = sizes(DEFAULT_SIZES);
    int iters = DEFAULT_ITERS;
    int retries = DEFAULT_RETRIES;
    int timeoutSeconds = DEFAULT_TIMEOUT;
    int port = DEFAULT_PORT;
    boolean warmup = true;
    boolean pin = true;
    /** Completion events ({@code -e}) on both sides; set on an emulated CPU unless {@link #polling}. */
    boolean events;
    /** Poll as asked even on an emulated CPU. */
    boolean polling;
    double maxRatio = Double.POSITIVE_INFINITY;
    double minRatio = 0;
    Path csv = Path.of("verbs4j-compare.csv");
    Path plot = Path.of("verbs4j-compare.png");
    Path fromCsv;
    Path raw;
    String serverDev;
    String clientDev;
    String host;
    boolean help;

    static final String USAGE = """
            Usage: bin/verbs4j compare [OPTIONS]

            Runs each perftest tool in C (perftest 4.5, ib_*) and then its Java twin (bin/verbs4j ib_*)
            with the same devices and options, server and client in the same language, over a sweep of
            message sizes; prints the Java/C ratio per tool and size, writes them as CSV and as a PNG
            chart, and exits 1 when a ratio is outside [--min-ratio, --max-ratio] or a side gave no
            usable result. Without an RDMA device it boots the Soft-RoCE VM (bin/softroce) for the
            measurement and writes the table, CSV and chart on this machine.

            The ratio is the Java slowdown, above 1 = Java slower:
              latency tools (ib_*_lat)   Java t_typical / C t_typical   (the median, usec)
              bandwidth tools (ib_*_bw)  C MsgRate / Java MsgRate (Mpps; at one size that is C BW
                                         average / Java BW average, with six decimals instead of two)
            The atomic tools always move 8 bytes: one row each, at 8 B.

            C runs are one process pair per size; a C run with no usable value (a failed cycle-counter
            calibration prints inf/nan or "Can't produce a report"), or a failed one, is run again. The
            Java server and client each run in one JVM for the whole comparison (started once), all sizes
            of a tool in a row (as perftest -a does in one process), after one discarded warm-up run of
            the tool at its first size.

            Options:
              --tools LIST        tools, comma-separated (ib_send_lat,...; 'lat', 'bw', 'all'; default all)
              --sizes LIST        sizes in bytes, comma-separated (k, m suffixes), or A..B for the
                                  powers of two from A to B (default 2..65536)
              -n, --iters N       iterations per run, perftest's -n (default 100)
              --max-ratio X       exit 1 when a ratio is above X
              --min-ratio X       exit 1 when a ratio is below X
              --csv FILE          CSV output (default verbs4j-compare.csv)
              --plot FILE         PNG chart (default verbs4j-compare.png)
              --from-csv FILE     no measurement: table, chart and bound check from an earlier CSV
              --retries N         extra attempts of a C run without a usable value (default 3)
              --timeout SEC       limit per run (default 180)
              --no-warmup         no discarded Java warm-up run
              -e, --events        completion events (-e) on both sides
              --polling           on an emulated CPU too, poll as asked (no -e unless given)
              --no-pin            no CPU pinning (by default, with two CPUs or more and taskset
                                  on PATH, every server runs on CPU 1 and every client on CPU 0,
                                  C and Java alike, so that two peers spinning on completions
                                  never share a CPU)
              --server-dev DEV    server's device (default: rxe_b of the test bed, else the first device)
              --client-dev DEV    client's device (default: rxe_a of the test bed, else the server's)
              --host ADDR         server address for the client (default 198.18.0.2 on the test bed,
                                  else 127.0.0.1)
              --port P            first TCP port; each run takes the next ones (default 18600)
              --raw FILE          measure only and write the CSV there (what the VM side does)
              -h, --help          this text

            On an emulated CPU (the Soft-RoCE VM under qemu's TCG) busy polling and timer reads cost what
            they cost the emulator, not a CPU: there both sides sleep on completion events (-e) and
            ib_write_lat (it polls memory) is left out, and compare says so; --polling runs everything as
            asked. Absolute figures mean something on real hardware only.

            Exit status: 0 all ratios within the bounds, 1 a ratio outside them or a side without a
            result, 2 usage or setup error.
            """;

    /** Parses {@code args}; null when they are valid, else the message to print. */
    String parse(String[] args) {
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            String value = null;
            int eq = a.indexOf('=');
            if (a.startsWith("--") && eq > 0) {
                value = a.substring(eq + 1);
                a = a.substring(0, eq);
            }
            switch (a) {
                case "-h", "--help" -> help = true;
                case "--no-warmup" -> warmup = false;
                case "--no-pin" -> pin = false;
                case "-e", "--events" -> events = true;
                case "--polling" -> polling = true;
                case "--tools", "--sizes", "-n", "--iters", "--max-ratio", "--min-ratio", "--csv", "--plot",
                     "--from-csv", "--retries", "--timeout", "--server-dev", "--client-dev", "--host", "--port",
                     "--raw" -> {
                    if (value == null) {
                        if (i + 1 >= args.length) {
                            return "option " + a + " needs a value";
                        }
                        value = args[++i];
                    }
                    String bad = option(a, value);
                    if (bad != null) {
                        return bad;
                    }
                }
                default -> {
                    return "unknown option '" + args[i] + "'";
                }
            }
        }
        if (minRatio > maxRatio) {
            return "--min-ratio is above --max-ratio";
        }
        return null;
    }

    private String option(String name, String v) {
        try {
            switch (name) {
                case "--tools" -> tools = tools(v);
                case "--sizes" -> sizes = sizes(v);
                case "-n", "--iters" -> iters = positive(v, 5);
                case "--max-ratio" -> maxRatio = ratio(v);
                case "--min-ratio" -> minRatio = ratio(v);
                case "--csv" -> csv = Path.of(v);
                case "--plot" -> plot = Path.of(v);
                case "--from-csv" -> fromCsv = Path.of(v);
                case "--raw" -> raw = Path.of(v);
                case "--retries" -> retries = positive(v, 0);
                case "--timeout" -> timeoutSeconds = positive(v, 1);
                case "--server-dev" -> serverDev = v;
                case "--client-dev" -> clientDev = v;
                case "--host" -> host = v;
                case "--port" -> {
                    port = positive(v, 1);
                    if (port > 60000) {
                        throw new IllegalArgumentException("above 60000");
                    }
                }
                default -> throw new IllegalStateException(name);
            }
            return null;
        } catch (IllegalArgumentException e) {
            return "bad value '" + v + "' for " + name + ": " + e.getMessage();
        }
    }

    private static int positive(String v, int min) {
        int n = Integer.parseInt(v.strip());
        if (n < min) {
            throw new IllegalArgumentException("at least " + min);
        }
        return n;
    }

    private static double ratio(String v) {
        double d = Double.parseDouble(v.strip());
        if (!(d >= 0) || Double.isInfinite(d)) {
            throw new IllegalArgumentException("not a ratio");
        }
        return d;
    }

    /** A tool list: program names, or {@code all}, {@code lat}, {@code bw}. */
    static List<Tool> tools(String v) {
        List<Tool> out = new ArrayList<>();
        for (String name : v.split(",")) {
            String n = name.strip().toLowerCase(Locale.ROOT);
            List<Tool> add = switch (n) {
                case "all" -> List.of(Tool.values());
                case "lat" -> List.of(Tool.values()).stream().filter(Tool::latency).toList();
                case "bw" -> List.of(Tool.values()).stream().filter(t -> !t.latency()).toList();
                default -> {
                    Tool t = Tool.byProgram(n);
                    if (t == null) {
                        throw new IllegalArgumentException("no tool " + n);
                    }
                    yield List.of(t);
                }
            };
            for (Tool t : add) {
                if (!out.contains(t)) {
                    out.add(t);
                }
            }
        }
        return List.copyOf(out);
    }

    /** A size list: {@code 2,64,4K} or {@code A..B} (powers of two from A to B), sorted, without duplicates. */
    static List<Long> sizes(String v) {
        List<Long> out = new ArrayList<>();
        for (String part : v.split(",")) {
            String p = part.strip();
            int dots = p.indexOf("..");
            if (dots >= 0) {
                long from = size(p.substring(0, dots));
                long to = size(p.substring(dots + 2));
                if (Long.bitCount(from) != 1 || to < from) {
                    throw new IllegalArgumentException("a range A..B needs A a power of two and B >= A");
                }
                for (long s = from; s <= to; s *= 2) {
                    out.add(s);
                }
            } else {
                out.add(size(p));
            }
        }
        return out.stream().distinct().sorted().toList();
    }

    private static long size(String text) {
        long s = Sizes.parse(text);
        if (s < 1 || s > 8L * 1024 * 1024) {
            throw new IllegalArgumentException("sizes are 1 B to 8 MiB (perftest's limit)");
        }
        return s;
    }

    void usage(PrintStream out) {
        out.print(USAGE);
    }
}
