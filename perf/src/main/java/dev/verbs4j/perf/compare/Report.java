package dev.verbs4j.perf.compare;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.TreeSet;

/** The results of a comparison: the printed tables, the CSV file, and the check against a bound. */
final class Report {

    static final String CSV_HEADER = "tool,bytes,metric,c,java,ratio,c_runs";

    static final String RATIO_MEANING = "ratio = Java slowdown: latency tools Java t_typical / C t_typical,"
            + " bandwidth tools C MsgRate / Java MsgRate (= C BW average / Java BW average);"
            + " above 1 = Java slower, below 1 = Java faster";

    private Report() {
    }

    /** Both tables: one line per tool and size with both values, then the ratios as a size x tool matrix. */
    static void print(List<Result> results, PrintStream out) {
        out.println(RATIO_MEANING);
        out.printf(Locale.ROOT, "%-14s %8s  %-16s %12s %12s %8s  %s%n", "tool", "bytes", "metric", "C", "Java", "ratio",
                "C runs");
        for (Result r : results) {
            out.printf(Locale.ROOT, "%-14s %8d  %-16s %12s %12s %8s  %d%n", r.tool().program(), r.size(),
                    r.tool().metric(), value(r.c()), value(r.java()), ratio(r.ratio()), r.cRuns());
        }
        out.println();
        List<Tool> tools = results.stream().map(Result::tool).distinct().toList();
        TreeSet<Long> sizes = new TreeSet<>();
        results.forEach(r -> sizes.add(r.size()));
        out.println("Java/C ratio (Java slowdown) by size and tool; '-' = not measured, 'fail' = no usable value");
        StringBuilder head = new StringBuilder(String.format(Locale.ROOT, "%8s", "bytes"));
        for (Tool t : tools) {
            head.append(String.format(Locale.ROOT, " %13s", t.program()));
        }
        out.println(head);
        for (long size : sizes) {
            StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "%8d", size));
            for (Tool t : tools) {
                String cell = "-";
                for (Result r : results) {
                    if (r.tool() == t && r.size() == size) {
                        cell = ratio(r.ratio());
                    }
                }
                line.append(String.format(Locale.ROOT, " %13s", cell));
            }
            out.println(line);
        }
    }

    private static String value(double v) {
        return ResultParser.usable(v) ? String.format(Locale.ROOT, v < 1 ? "%.6f" : "%.2f", v) : "fail";
    }

    private static String ratio(double v) {
        return Double.isNaN(v) ? "fail" : String.format(Locale.ROOT, "%.2f", v);
    }

    /** The CSV: a header line, then one line per result; a value that is missing is an empty field. */
    static List<String> csv(List<Result> results) {
        List<String> lines = new ArrayList<>();
        lines.add(CSV_HEADER);
        for (Result r : results) {
            lines.add(String.join(",", r.tool().program(), Long.toString(r.size()), r.tool().metric(), field(r.c()),
                    field(r.java()), field(r.ratio()), Integer.toString(r.cRuns())));
        }
        return lines;
    }

    private static String field(double v) {
        return Double.isFinite(v) ? String.format(Locale.ROOT, "%.6f", v) : "";
    }

    static void writeCsv(List<Result> results, Path file) throws IOException {
        Path dir = file.toAbsolutePath().getParent();
        if (dir != null) {
            Files.createDirectories(dir);
        }
        Files.write(file, csv(results), StandardCharsets.UTF_8);
    }

    /** Reads a CSV written by {@link #csv}; the ratio is recomputed from the two values. */
    static List<Result> readCsv(List<String> lines) {
        if (lines.isEmpty() || !lines.get(0).equals(CSV_HEADER)) {
            throw new IllegalArgumentException("not a compare CSV (first line is not '" + CSV_HEADER + "')");
        }
        List<Result> out = new ArrayList<>();
        for (String line : lines.subList(1, lines.size())) {
            if (line.isBlank()) {
                continue;
            }
            String[] f = line.split(",", -1);
            Tool tool = f.length == 7 ? Tool.byProgram(f[0]) : null;
            if (tool == null) {
                throw new IllegalArgumentException("bad compare CSV line: " + line);
            }
            out.add(new Result(tool, Long.parseLong(f[1]), parse(f[3]), parse(f[4]), Integer.parseInt(f[6])));
        }
        return out;
    }

    private static double parse(String field) {
        return field.isEmpty() ? Double.NaN : Double.parseDouble(field);
    }

    /**
     * The results outside {@code [min, max]}, one readable line each; a result without a ratio (a
     * side failed) is always outside.
     */
    static List<String> outsideBound(List<Result> results, double min, double max) {
        List<String> bad = new ArrayList<>();
        for (Result r : results) {
            double q = r.ratio();
            String where = r.tool().program() + " " + r.size() + " B";
            if (Double.isNaN(q)) {
                bad.add(where + ": no ratio (" + (ResultParser.usable(r.c()) ? "Java" : "C") + " gave no usable value)");
            } else if (q > max) {
                bad.add(String.format(Locale.ROOT, "%s: ratio %.2f above the bound %s", where, q, bound(max)));
            } else if (q < min) {
                bad.add(String.format(Locale.ROOT, "%s: ratio %.2f below the bound %s", where, q, bound(min)));
            }
        }
        return bad;
    }

    private static String bound(double b) {
        return String.format(Locale.ROOT, "%s", b);
    }
}
