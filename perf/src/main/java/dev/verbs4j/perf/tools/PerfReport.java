package dev.verbs4j.perf.tools;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * What a perftest run prints of its measurements, in the form {@code -o}/{@code --output} asks
 * for: the table's header, a row (or the single value) per size, the closing line, the
 * {@code --out_json} file, and the client's verdict on {@code --limit_bw}/{@code --limit_msgrate}.
 * The texts themselves come from {@link PerfOutput}.
 */
final class PerfReport {

    private final PerfOptions o;
    private final PrintStream out;
    private final PrintStream err;
    private final PerftestResources res;
    private final CpuUtil cpu = new CpuUtil();
    /** The counters of -W, printed after every row; or null. */
    private PortCounters counters;

    PerfReport(PerfOptions o, PrintStream out, PrintStream err, PerftestResources res) {
        this.o = o;
        this.out = out;
        this.err = err;
        this.res = res;
    }

    // ---- latency ----

    /** Round trips per measured time: 2 for the ping-pong tests (send, write), 1 otherwise. */
    private int rttFactor() {
        return o.verb == PerfOptions.Verb.SEND || o.verb == PerfOptions.Verb.WRITE ? 2 : 1;
    }

    void latencyHeader() {
        if (o.output == PerfOptions.Output.FULL) {
            out.print(PerfOutput.RESULT_LINE);
            out.print(withCpu(o.duration > 0 ? PerfOutput.LAT_DURATION_HEADER : PerfOutput.LAT_HEADER));
        }
    }

    void counters(PortCounters c) {
        this.counters = c;
    }

    private void printCounters() {
        if (counters != null) {
            counters.print(out);
        }
    }

    /** The CPU readings of --cpu_util (taken in duration mode only). */
    CpuUtil cpu() {
        return cpu;
    }

    /** Whether the rows end with the CPU use (perftest: --cpu_util in duration mode). */
    private boolean cpuColumn() {
        return o.cpuUtil && o.duration > 0;
    }

    /** A table head ending in a newline, with the CPU column when there is one. */
    private String withCpu(String head) {
        return cpuColumn() ? head.substring(0, head.length() - 1) + "    CPU_Util[%]\n" : head;
    }

    /** A row ending in a newline, with the CPU use when there is a CPU column. */
    private String rowWithCpu(String row) {
        return cpuColumn() ? row.substring(0, row.length() - 1) + "\t    " + PerfOutput.fixedLeft(cpu.percent(), 2, 3) + "\n"
                : row;
    }

    /** The row of {@code size} from the post times of {@code iters} iterations. */
    void latency(long size, long[] tposted) {
        // -U: every sample as measured; -H: sorted, less the two largest; then the table's head again
        if (o.unsorted) {
            PerfOutput.histogram(out, tposted, o.iters, rttFactor(), o.reportCycles, false);
        }
        if (o.histogram) {
            PerfOutput.histogram(out, tposted, o.iters, rttFactor(), o.reportCycles, true);
        }
        if ((o.unsorted || o.histogram) && o.output == PerfOptions.Output.FULL) {
            out.print(PerfOutput.RESULT_LINE);
            out.print(PerfOutput.LAT_HEADER);
        }
        PerfOutput.Latency l = PerfOutput.latency(tposted, o.iters, rttFactor(), o.reportCycles);
        writeJson(PerfOutput.jsonLatency(o, size, o.iters, l));
        String single = PerfOutput.single(o, null, l);
        if (single != null) {
            out.print(single);
        } else if (o.output == PerfOptions.Output.FULL) {
            out.print(PerfOutput.latencyRow(size, o.iters, l));
        }
        printCounters();
    }

    /** The row of duration mode: {@code iters} round trips counted in the window of {@code phases}. */
    void latencyDuration(long size, long iters, DurationMode.Phases phases) {
        double[] v = PerfOutput.latencyDuration(phases.window(), iters, rttFactor());
        writeJson(PerfOutput.jsonLatencyDuration(o, size, iters, v[0], v[1]));
        if (o.output == PerfOptions.Output.LATENCY) {
            out.print(PerfOutput.fixed(v[0], 6) + "\n");
        } else if (o.output == PerfOptions.Output.FULL) {
            out.print(rowWithCpu(PerfOutput.latencyDurationRow(size, iters, v[0], v[1])));
        }
        printCounters();
    }

    // ---- bandwidth ----

    void bwHeader() {
        if (o.output == PerfOptions.Output.FULL) {
            out.print(PerfOutput.RESULT_LINE);
            out.print(withCpu(PerfOutput.bwHeader(o)));
        }
    }

    void bw(PerfOutput.Bw b) {
        writeJson(PerfOutput.jsonBw(o, b));
        String single = PerfOutput.single(o, b, null);
        if (single != null) {
            out.print(single);
        } else if (o.output == PerfOptions.Output.FULL) {
            out.print(rowWithCpu(PerfOutput.bwRow(o, b)));
        }
        printCounters();
    }

    /** --report-both with -b: this side's and the peer's own rows, each under its title and the table head. */
    void both(PerfOutput.Bw mine, PerfOutput.Bw theirs) {
        if (!o.reportBoth || !o.duplex) {
            return;
        }
        for (int k = 0; k < 2; k++) {
            out.print(PerfOutput.RESULT_LINE);
            out.print(k == 0 ? "\n Local results: \n" : "\n Remote results: \n");
            out.print(PerfOutput.RESULT_LINE);
            out.print(withCpu(PerfOutput.bwHeader(o)));
            bw(k == 0 ? mine : theirs);
        }
    }

    /** The client's exit status after its last result {@code b}: 1 below a limit (said on stderr), else 0. */
    int limits(PerfOutput.Bw b) {
        if (b == null || !o.isClient()) {
            return 0;
        }
        if (o.limitBw > 0 && b.avg() < o.limitBw) {
            err.print("Error: BW result is below bw limit\n");
            return 1;
        }
        if (o.limitMsgRate > 0 && b.msgRate() < o.limitMsgRate) {
            err.print("Error: Msg rate  is below msg_rate limit\n");
            return 1;
        }
        return 0;
    }

    // ---- both ----

    /** The line under the table (full output only). */
    void endTable() {
        if (o.output == PerfOptions.Output.FULL) {
            out.print(PerfOutput.RESULT_LINE);
        }
    }

    /**
     * With --out_json: the file written anew for every row printed (so it holds the last one), as
     * perftest writes it; a file that cannot be opened is reported and the run goes on.
     */
    private void writeJson(String results) {
        if (!o.outJson) {
            return;
        }
        Path file = Path.of(o.outJsonFile);
        String text = PerfOutput.json(o, res.headerInfo(), results);
        try {
            if (!Files.exists(file)) {
                try {
                    Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
                } catch (UnsupportedOperationException | FileAlreadyExistsException e) {
                    // created meanwhile, or no POSIX permissions here: written below all the same
                }
            }
            Files.writeString(file, text, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                    StandardOpenOption.WRITE);
        } catch (IOException | RuntimeException e) {
            err.print("failed to open " + o.outJsonFile + "\n");
        }
    }
}
