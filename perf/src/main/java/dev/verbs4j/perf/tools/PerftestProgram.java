package dev.verbs4j.perf.tools;

import java.io.PrintStream;
import java.util.Locale;

/**
 * The eight perftest programs that verbs4j has Java twins of. Each has perftest 4.5's options,
 * output and exit statuses, and its wire protocol, so either side can be the C program (TCP
 * exchange by default, RDMA CM with {@code -R}). Without a host argument a run is the server;
 * with one, the client. Each run owns and frees the verbs objects it creates.
 */
public enum PerftestProgram {
    /** {@code ib_send_lat}: SEND latency, a ping-pong of messages, half the round trip. */
    IB_SEND_LAT(PerfOptions.Verb.SEND, PerfOptions.Kind.LAT),
    /** {@code ib_send_bw}: SEND bandwidth, a stream of messages into posted receives. */
    IB_SEND_BW(PerfOptions.Verb.SEND, PerfOptions.Kind.BW),
    /** {@code ib_write_lat}: RDMA WRITE latency, a ping-pong of writes, half the round trip. */
    IB_WRITE_LAT(PerfOptions.Verb.WRITE, PerfOptions.Kind.LAT),
    /** {@code ib_write_bw}: RDMA WRITE bandwidth, a stream of writes to the server's buffer. */
    IB_WRITE_BW(PerfOptions.Verb.WRITE, PerfOptions.Kind.BW),
    /** {@code ib_read_lat}: RDMA READ latency, one read at a time from the server's buffer. */
    IB_READ_LAT(PerfOptions.Verb.READ, PerfOptions.Kind.LAT),
    /** {@code ib_read_bw}: RDMA READ bandwidth, a stream of reads from the server's buffer. */
    IB_READ_BW(PerfOptions.Verb.READ, PerfOptions.Kind.BW),
    /** {@code ib_atomic_lat}: atomic latency, one fetch-and-add or compare-and-swap at a time. */
    IB_ATOMIC_LAT(PerfOptions.Verb.ATOMIC, PerfOptions.Kind.LAT),
    /** {@code ib_atomic_bw}: atomic bandwidth, a stream of 8-byte atomics on the server's buffer. */
    IB_ATOMIC_BW(PerfOptions.Verb.ATOMIC, PerfOptions.Kind.BW);

    private final PerfOptions.Verb verb;
    private final PerfOptions.Kind kind;

    PerftestProgram(PerfOptions.Verb verb, PerfOptions.Kind kind) {
        this.verb = verb;
        this.kind = kind;
    }

    /** The program's name, {@code ib_send_lat} ...: the C binary's and the {@code bin/verbs4j} tool's. */
    public String program() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Whether it measures latency (else bandwidth). */
    public boolean latency() {
        return kind == PerfOptions.Kind.LAT;
    }

    /** Whether it is one of the atomic tools (fixed 8-byte messages). */
    public boolean atomic() {
        return verb == PerfOptions.Verb.ATOMIC;
    }

    /** Whether it is one of the SEND tools. */
    public boolean send() {
        return verb == PerfOptions.Verb.SEND;
    }

    /**
     * Runs the program, writing to {@code out} and {@code err}; returns the status the C program
     * exits with. Interrupting the calling thread ends a waiting run with status 1.
     */
    public int run(String[] args, PrintStream out, PrintStream err) {
        return Perftest.run(program(), verb, kind, args, out, err);
    }

    /** The program called {@code name}, or null. */
    public static PerftestProgram named(String name) {
        for (PerftestProgram p : values()) {
            if (p.program().equals(name)) {
                return p;
            }
        }
        return null;
    }
}
