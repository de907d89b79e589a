package dev.verbs4j.perf.compare;

import dev.verbs4j.tools.Cli;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * {@code bin/verbs4j compare}: perftest's C tools against their Java twins, tool by tool and size
 * by size, as a table of Java/C ratios, a CSV file and a PNG chart, with an optional bound on the
 * ratios for the exit status. {@link CompareOptions#USAGE} describes it.
 */
public final class Compare {

    private Compare() {
    }

    public static void main(String[] args) {
        Cli.main(args, Compare::run);
    }

    /** Runs {@code compare}; returns its exit status (0 within the bounds, 1 outside, 2 usage or setup). */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        CompareOptions o = new CompareOptions();
        String bad = o.parse(args);
        if (bad != null) {
            err.println("compare: " + bad);
            err.println("compare: --help lists the options");
            return 2;
        }
        if (o.help) {
            o.usage(out);
            return 0;
        }
        try {
            List<Result> results;
            long start = System.nanoTime();
            if (o.fromCsv != null) {
                results = Report.readCsv(Files.readAllLines(o.fromCsv, StandardCharsets.UTF_8));
            } else if (Testbed.hasDevices() || o.raw != null) {
                Emulation.apply(o, Emulation.detect(), out);
                Measure m = new Measure(o, Testbed.sides(o), out, err);
                results = m.run();
                if (o.raw != null) {
                    Report.writeCsv(results, o.raw);
                    return 0;
                }
            } else {
                results = inVm(args, o, out, err);
                if (results == null) {
                    return 2;
                }
            }
            if (o.fromCsv == null) {
                out.printf(Locale.ROOT, "compare: %d results in %.0f s%n", results.size(),
                        (System.nanoTime() - start) / 1e9);
            }
            out.println();
            Report.print(results, out);
            Report.writeCsv(results, o.csv);
            Plot.writePng(results, o.plot, o.minRatio, o.maxRatio);
            out.println();
            out.println("compare: CSV " + o.csv + ", chart " + o.plot);
            List<String> outside = Report.outsideBound(results, o.minRatio, o.maxRatio);
            if (!outside.isEmpty()) {
                for (String s : outside) {
                    err.println("compare: " + s);
                }
                err.printf(Locale.ROOT, "compare: %d of %d results outside the bounds [%s, %s]%n", outside.size(),
                        results.size(), o.minRatio, o.maxRatio);
                return 1;
            }
            out.printf(Locale.ROOT, "compare: all %d ratios within [%s, %s]%n", results.size(), o.minRatio, o.maxRatio);
            return 0;
        } catch (SetupException e) {
            err.println("compare: " + e.getMessage());
            return 2;
        } catch (IOException e) {
            err.println("compare: " + e);
            return 2;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            err.println("compare: interrupted");
            return 2;
        }
    }

    /**
     * No RDMA device here: the measurement runs in the Soft-RoCE VM ({@code bin/softroce bin/verbs4j
     * compare --raw FILE ...}, FILE under the repository's target/, which the VM shares); the table,
     * CSV and chart are made here from FILE.
     */
    private static List<Result> inVm(String[] args, CompareOptions o, PrintStream out, PrintStream err)
            throws IOException, InterruptedException {
        String home = System.getProperty("verbs4j.home");
        if (home == null || !Files.isExecutable(Path.of(home, "bin", "softroce"))) {
            throw new SetupException("no RDMA device on this machine (/sys/class/infiniband is empty); run it"
                    + " inside the test bed: bin/softroce bin/verbs4j compare ...");
        }
        Path dir = Path.of(home, "target", "compare");
        Files.createDirectories(dir);
        Path raw = dir.resolve("measured-" + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss"))
                + ".csv");
        List<String> cmd = new ArrayList<>(List.of(Path.of(home, "bin", "softroce").toString(),
                Path.of(home, "bin", "verbs4j").toString(), "compare"));
        cmd.addAll(List.of(args));
        cmd.addAll(List.of("--raw", raw.toString()));
        out.println("compare: no RDMA device here; measuring in the Soft-RoCE VM (bin/softroce), results to " + raw);
        out.flush();
        Process p = new ProcessBuilder(cmd).directory(Path.of(home).toFile()).inheritIO().start();
        int rc = p.waitFor();
        if (!Files.exists(raw)) {
            err.println("compare: the measurement in the VM ended with status " + rc + " and no results");
            return null;
        }
        return Report.readCsv(Files.readAllLines(raw, StandardCharsets.UTF_8));
    }

    /** A setup problem: no device, no C tools, no JVM to start. */
    static final class SetupException extends RuntimeException {
        SetupException(String message) {
            super(message);
        }
    }
}
