package dev.verbs4j.perf.tools;


import dev.verbs4j.tools.ToolExit;

import java.io.PrintStream;

/**
 * The base of the measurement loops of a run ({@link LatencyLoops}, {@link BandwidthLoops},
 * {@link DurationMode}): the run's {@link RunParts} as fields, and the printed end of a failure.
 */
abstract class MeasurementLoops {

    final PerfOptions o;
    final PrintStream out;
    final PrintStream err;
    final PerftestResources res;
    final DataPath path;
    final KeyExchange keys;
    final PerfReport report;

    MeasurementLoops(RunParts run) {
        this.o = run.o();
        this.out = run.out();
        this.err = run.err();
        this.res = run.res();
        this.path = run.path();
        this.keys = run.keys();
        this.report = run.report();
    }

    /** Prints {@code message} to the error stream; the end with {@code status} that follows it. */
    final ToolExit exit(String message, int status) {
        return ToolExit.printed(err, message, status);
    }
}
