package dev.verbs4j.perf.compare;

import dev.verbs4j.perf.tools.AtomicBw;
import dev.verbs4j.perf.tools.AtomicLat;
import dev.verbs4j.perf.tools.ReadBw;
import dev.verbs4j.perf.tools.ReadLat;
import dev.verbs4j.perf.tools.SendBw;
import dev.verbs4j.perf.tools.SendLat;
import dev.verbs4j.perf.tools.WriteBw;
import dev.verbs4j.perf.tools.WriteLat;

import java.io.PrintStream;
import java.util.Locale;

/** The eight perftest tools that {@code compare} runs: the C program's name and the Java twin's entry point. */
enum Tool {
    IB_SEND_LAT(SendLat::run),
    IB_SEND_BW(SendBw::run),
    IB_WRITE_LAT(WriteLat::run),
    IB_WRITE_BW(WriteBw::run),
    IB_READ_LAT(ReadLat::run),
    IB_READ_BW(ReadBw::run),
    IB_ATOMIC_LAT(AtomicLat::run),
    IB_ATOMIC_BW(AtomicBw::run);

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
