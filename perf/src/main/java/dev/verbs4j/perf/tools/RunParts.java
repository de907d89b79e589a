package dev.verbs4j.perf.tools;

import java.io.PrintStream;

/**
 * The collaborators of one perftest run that its measurement loops share: the options, the output
 * streams, the verbs resources, the data path on them, the out-of-band exchanges and the report.
 */
record RunParts(PerfOptions o, PrintStream out, PrintStream err, PerftestResources res, DataPath path, KeyExchange keys,
        PerfReport report) {
}
