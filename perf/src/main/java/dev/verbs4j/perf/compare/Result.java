package dev.verbs4j.perf.compare;

/**
 * One tool at one message size: the C and the Java value of the tool's metric (NaN when that side
 * produced none) and how many C runs it took.
 *
 * <p>The ratio is the Java slowdown, so that above 1 always means Java is slower: for a latency
 * tool Java's t_typical over C's, for a bandwidth tool C's MsgRate over Java's (at one size the
 * same as C's BW average over Java's).
 */
record Result(Tool tool, long size, double c, double java, int cRuns) {

    /** Java slowdown: latency Java/C, bandwidth C/Java; NaN when either side has no usable value. */
    double ratio() {
        if (!ResultParser.usable(c) || !ResultParser.usable(java)) {
            return Double.NaN;
        }
        return tool.latency() ? java / c : c / java;
    }
}
