package dev.verbs4j.perf.tools;


import dev.verbs4j.tools.ToolExit;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * The latency tests, one operation in flight at a time on QP 0: the SEND and RDMA WRITE
 * ping-pongs (both sides measure; a WRITE is seen arriving by its last byte changing) and the
 * RDMA READ and atomic round trips (the client measures; the server waits in the final exchange).
 * Every size of the run is measured in turn, with {@code -D} by {@link DurationMode}.
 */
final class LatencyLoops extends MeasurementLoops {

    private static final VarHandle BYTE = ValueLayout.JAVA_BYTE.varHandle();

    private final DurationMode duration;

    LatencyLoops(RunParts run, DurationMode duration) {
        super(run);
        this.duration = duration;
    }

    /** One step of a latency table for a message size. */
    private interface SizeStep {
        void run(long size) throws ToolExit;
    }

    /** The counted measurement of one size: the post time of every iteration into {@code tposted}. */
    private interface CountedStep {
        void run(long size, long[] tposted) throws ToolExit;
    }

    /**
     * The table of a latency test: for every size {@code prepare}, then with {@code -D} the
     * {@code timed} measurement (which reports itself), else the {@code counted} one and its line.
     */
    private void latencyTable(SizeStep prepare, SizeStep timed, CountedStep counted) throws ToolExit {
        report.latencyHeader();
        long[] tposted = new long[o.iters];
        for (long size : res.device().sizes()) {
            prepare.run(size);
            if (o.duration > 0) {
                timed.run(size);
                continue;
            }
            counted.run(size, tposted);
            report.latency(size, tposted);
        }
        report.endTable();
    }

    // ---- ib_send_lat ----

    int sendLatency() throws ToolExit {
        latencyTable(size -> {
            path.postInitialReceives(size);
            keys.barrier();
        }, duration::pingPongSend, this::pingPongSend);
        keys.closeExchangeLenient();
        return 0;
    }

    private void pingPongSend(long size, long[] tposted) throws ToolExit {
        int iters = o.iters;
        path.prepareSend(size);
        int scnt = 0;
        int rcnt = 0;
        while (scnt < iters || rcnt < iters) {
            if (rcnt < iters && !(scnt < 1 && o.isClient())) {
                path.awaitOne(path.recvCq(), true, rcnt, 0);
                rcnt++;
                if (path.receivesPosted(0) < iters) {
                    path.postReceive(0);
                }
            }
            if (scnt < iters) {
                gap();
                tposted[scnt] = System.nanoTime();
                path.post(0, 1, scnt);
                scnt++;
                path.awaitOne(path.sendCq(), false, scnt, scnt);
            }
        }
    }

    // ---- ib_write_lat ----

    int writeLatency() throws ToolExit {
        latencyTable(size -> { }, duration::pingPongWrite, this::pingPongWrite);
        // ib_write_lat ends without a final exchange
        keys.finishWithoutKey();
        return 0;
    }

    private void pingPongWrite(long size, long[] tposted) throws ToolExit {
        int iters = o.iters;
        path.prepareWrite(size);
        MemorySegment buf = res.buffer();
        long pollAt = res.remoteOffset(0) + size - 1;
        long postAt = res.localOffset(0) + size - 1;
        int scnt = 0;
        int rcnt = 0;
        int ccnt = 0;
        while (scnt < iters || ccnt < iters || rcnt < iters) {
            if (rcnt < iters && !(scnt < 1 && !o.isClient())) {
                rcnt++;
                byte want = (byte) rcnt;
                int spins = 0;
                while ((byte) BYTE.getVolatile(buf, pollAt) != want) {
                    if ((++spins & 0xfff) == 0 && Thread.currentThread().isInterrupted()) {
                        throw exit(" Interrupted", 1);
                    }
                    Thread.onSpinWait();
                }
            }
            if (scnt < iters) {
                gap();
                tposted[scnt] = System.nanoTime();
                BYTE.setVolatile(buf, postAt, (byte) ++scnt);
                path.post(0, 1, scnt);
            }
            if (ccnt < iters) {
                path.awaitOne(path.sendCq(), false, scnt, ccnt);
                ccnt++;
            }
        }
    }

    // ---- ib_read_lat, ib_atomic_lat ----

    int readLatency() throws ToolExit {
        if (!o.isClient()) {
            // the server is passive: it waits in the final exchange while the client measures
            keys.closeExchange();
            out.print(PerfOutput.RESULT_LINE);
            return 0;
        }
        latencyTable(size -> { }, duration::readLatency, this::roundTrips);
        keys.closeExchange();
        return 0;
    }

    private void roundTrips(long size, long[] tposted) throws ToolExit {
        path.prepareRead(size);
        for (int scnt = 0; scnt < o.iters; scnt++) {
            gap();
            tposted[scnt] = System.nanoTime();
            path.post(0, 1, scnt);
            path.awaitOne(path.sendCq(), false, scnt + 1, scnt + 1);
        }
    }

    /** --latency_gap: perftest spins this many microseconds before each post (and times the post after it). */
    private void gap() {
        if (o.latencyGap > 0) {
            long end = System.nanoTime() + o.latencyGap * 1000L;
            while (System.nanoTime() < end) {
                Thread.onSpinWait();
            }
        }
    }
}
