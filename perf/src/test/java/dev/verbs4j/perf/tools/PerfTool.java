package dev.verbs4j.perf.tools;

import dev.verbs4j.verbs.ToolRunner;

/** The eight perftest tools as the tests drive them: Java entry point, C program, kind. */
enum PerfTool {
    SEND_LAT(PerftestProgram.IB_SEND_LAT::run, "ib_send_lat", false),
    SEND_BW(PerftestProgram.IB_SEND_BW::run, "ib_send_bw", true),
    WRITE_LAT(PerftestProgram.IB_WRITE_LAT::run, "ib_write_lat", false),
    WRITE_BW(PerftestProgram.IB_WRITE_BW::run, "ib_write_bw", true),
    READ_LAT(PerftestProgram.IB_READ_LAT::run, "ib_read_lat", false),
    READ_BW(PerftestProgram.IB_READ_BW::run, "ib_read_bw", true),
    ATOMIC_LAT(PerftestProgram.IB_ATOMIC_LAT::run, "ib_atomic_lat", false),
    ATOMIC_BW(PerftestProgram.IB_ATOMIC_BW::run, "ib_atomic_bw", true);

    final ToolRunner.JavaTool java;
    final String c;
    final boolean bw;

    PerfTool(ToolRunner.JavaTool java, String c, boolean bw) {
        this.java = java;
        this.c = c;
        this.bw = bw;
    }

    boolean atomic() {
        return this == ATOMIC_LAT || this == ATOMIC_BW;
    }

    boolean send() {
        return this == SEND_LAT || this == SEND_BW;
    }

    /** Only the client measures: the server of read/atomic latency prints no table. */
    boolean passiveLatencyServer() {
        return this == READ_LAT || this == ATOMIC_LAT;
    }

    /** The server prints the client's report (non-duplex write/read/atomic bandwidth). */
    boolean serverEchoesClient() {
        return this == WRITE_BW || this == READ_BW || this == ATOMIC_BW;
    }

    /** The default message size. */
    long defaultSize() {
        return atomic() ? 8 : bw ? 65536 : 2;
    }
}
