package dev.verbs4j.perf.compare;

import dev.verbs4j.perf.tools.PerftestProgram;

import java.io.PrintStream;
import java.util.Locale;

/** The eight perftest tools that {@code compare} runs: the C program's name and the Java twin's entry point. */
enum Tool {
    IB_SEND_LAT(PerftestProgram.IB_SEND_LAT::run),
    IB_SEND_BW(PerftestProgram.IB_SEND_BW::run),
    IB_WRITE_LAT(PerftestProgram.IB_WRITE_LAT::run),
    IB_WRITE_BW(PerftestProgram.IB_WRITE_BW::run),
    IB_READ_LAT(PerftestProgram.IB_READ_LAT::run),
    IB_READ_BW(PerftestProgram.IB_READ_BW::run),
    IB_ATOMIC_LAT(PerftestProgram.IB_ATOMIC_LAT::run),
    IB_ATOMIC_BW(PerftestProgram.IB_ATOMIC_BW::run);

    /** The size of every atomic operation; the atomic tools refuse {@code -s} and {@code -a}. */
    static final long ATOMIC_SIZE = 8;

    /** A Java tool's {@code run(args, out, err)}: its exit status. */
    @FunctionalInterface
    interface Entry {
        int run(String[] args, PrintStream out, PrintStream err);
    }

    final Entry entry;

    Tool(Entry entry) {
        this.entry = entry;
    }

    /** The program name, {@code ib_send_lat} ... (the C binary and the {@code bin/verbs4j} tool). */
    String program() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** A latency tool (compared on t_typical), else a bandwidth tool (compared on MsgRate, that is BW average). */
    boolean latency() {
        return name().endsWith("_LAT");
    }

    /** Whether the message size can be chosen (all but the atomic tools). */
    boolean sized() {
        return !name().startsWith("IB_ATOMIC");
    }

    /** The compared quantity, as named in the table and the CSV. */
    String metric() {
        return latency() ? "t_typical[usec]" : "MsgRate[Mpps]";
    }

    /** The tool called {@code program}, or null. */
    static Tool byProgram(String program) {
        for (Tool t : values()) {
            if (t.program().equals(program)) {
                return t;
            }
        }
        return null;
    }
}
