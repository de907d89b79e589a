package dev.verbs4j.perf.tools;

import dev.verbs4j.tools.ToolExit;
import dev.verbs4j.verbs.WorkCompletion;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * The measurements of duration mode ({@code -D}): instead of {@code -n} iterations each loop runs
 * until this side's clock ({@link Phases}) ends, and only what completes in the sample window
 * counts. What is still in flight at the end is left to the tear-down.
 */
final class DurationMode extends MeasurementLoops {

    /**
     * The clock of duration mode, perftest's alarm states by the time: a warm-up margin
     * ({@code -f}; by default a quarter of the duration in whole seconds, rounded down), the
     * sample window in which completions are counted, the same margin again, the end. Each side
     * runs its own clock; nothing about it goes over the wire.
     */
    static final class Phases {

        final long sampleStart;
        final long sampleEnd;
        final long end;

        Phases(int durationSeconds, int marginSeconds, long now) {
            long margin = marginSeconds * 1_000_000_000L;
            sampleStart = now + margin;
            sampleEnd = sampleStart + (durationSeconds * 1_000_000_000L - 2 * margin);
            end = sampleEnd + margin;
        }

        boolean sampling(long now) {
            return now - sampleStart >= 0 && now - sampleEnd < 0;
        }

        boolean over(long now) {
            return now - end >= 0;
        }

        /** The length of the sample window in nanoseconds. */
        long window() {
            return sampleEnd - sampleStart;
        }
    }

    private static final VarHandle BYTE = ValueLayout.JAVA_BYTE.varHandle();

    DurationMode(RunParts run) {
        super(run);
    }

    private Phases startClock(long now) {
        Phases p = new Phases(o.duration, o.margin, now);
        if (o.cpuUtil) {
            report.cpu().watch(p);
        }
        return p;
    }

    // ---- latency ----

    /**
     * ib_send_lat -D: the ping-pong until this side's clock ends; the clock starts at the first
     * receive, and the receives of the window are counted.
     */
    void pingPongSend(long size) throws ToolExit {
        path.prepareSend(size);
        Phases phases = null;
        long counted = 0;
        int scnt = 0;
        int rcnt = 0;
        int spins = 0;
        while (phases == null || !phases.over(System.nanoTime())) {
            if (!(scnt < 1 && o.isClient())) {
                int ne;
                while ((ne = path.poll(path.recvCq())) == 0) {
                    if (phases != null && phases.over(System.nanoTime())) {
                        break;
                    }
                    if (path.events()) {
                        path.awaitEvent();
                    } else if ((++spins & 0xfff) == 0 && Thread.currentThread().isInterrupted()) {
                        throw exit(" Interrupted", 1);
                    }
                }
                if (ne == 0) {
                    break;
                }
                long now = System.nanoTime();
                if (phases == null) {
                    phases = startClock(now);
                }
                for (int w = 0; w < ne; w++) {
                    path.check(path.completion(w), true, rcnt, 0);
                    rcnt++;
                    if (phases.sampling(now)) {
                        counted++;
                    }
                    path.postReceive(0);
                }
            }
            if (phases != null && phases.over(System.nanoTime())) {
                break;
            }
            path.post(0, 1, scnt);
            scnt++;
            path.awaitOne(path.sendCq(), false, scnt, scnt);
        }
        report.latencyDuration(size, counted, phases);
    }

    /** ib_write_lat -D: the ping-pong until this side's clock (started here) ends; the writes completed in the window count. */
    void pingPongWrite(long size) throws ToolExit {
        path.prepareWrite(size);
        MemorySegment buf = res.buffer();
        long pollAt = res.remoteOffset(0) + size - 1;
        long postAt = res.localOffset(0) + size - 1;
        Phases phases = startClock(System.nanoTime());
        long counted = 0;
        int scnt = 0;
        int rcnt = 0;
        loop:
        while (!phases.over(System.nanoTime())) {
            if (!(scnt < 1 && !o.isClient())) {
                rcnt++;
                byte want = (byte) rcnt;
                int spins = 0;
                while ((byte) BYTE.getVolatile(buf, pollAt) != want) {
                    if ((++spins & 0xff) == 0) {
                        if (phases.over(System.nanoTime())) {
                            break loop;
                        }
                        if (Thread.currentThread().isInterrupted()) {
                            throw exit(" Interrupted", 1);
                        }
                    }
                    Thread.onSpinWait();
                }
            }
            BYTE.setVolatile(buf, postAt, (byte) ++scnt);
            path.post(0, 1, scnt);
            if (phases.over(System.nanoTime())) {
                break;
            }
            path.awaitOne(path.sendCq(), false, scnt, scnt);
            if (phases.sampling(System.nanoTime())) {
                counted++;
            }
        }
        report.latencyDuration(size, counted, phases);
    }

    /** ib_read_lat/ib_atomic_lat -D: one operation at a time until the clock ends; those completed in the window count. */
    void readLatency(long size) throws ToolExit {
        path.prepareRead(size);
        Phases phases = startClock(System.nanoTime());
        long counted = 0;
        for (int scnt = 0; !phases.over(System.nanoTime()); scnt++) {
            path.post(0, 1, scnt);
            if (phases.over(System.nanoTime())) {
                break;
            }
            path.awaitOne(path.sendCq(), false, scnt + 1, scnt + 1);
            if (phases.sampling(System.nanoTime())) {
                counted++;
            }
        }
        report.latencyDuration(size, counted, phases);
    }

    // ---- bandwidth ----

    /**
     * A stream in duration mode: operations kept in flight on every queue pair until this side's
     * clock ends (started at once, or by the first receive for the ib_send_bw -b server), a
     * completion every {@code cqMod}; the operations completed (and with {@code alsoReceive} the
     * messages received) in the sample window count.
     */
    PerfOutput.Bw stream(long size, boolean alsoReceive) throws ToolExit {
        int q = o.numQps;
        int list = Math.max(1, o.postList);
        int cqMod = Math.max(1, o.cqMod);
        int baseFlags = path.prepareStream(size);
        long[] scnt = new long[q];
        long[] ccnt = new long[q];
        long counted = 0;
        boolean started = o.isClient() || !alsoReceive;
        Phases phases = started ? startClock(System.nanoTime()) : null;
        RateLimiter limiter = RateLimiter.of(o, size);
        int idle = 0;
        while (phases == null || !phases.over(System.nanoTime())) {
            if (started) {
                for (int i = 0; i < q; i++) {
                    if (!limiter.open(System.nanoTime())) {
                        continue;
                    }
                    while (scnt[i] - ccnt[i] + list <= o.txDepth && limiter.sending()) {
                        path.postStreamList(i, list, scnt[i], cqMod, baseFlags);
                        scnt[i] += list;
                        limiter.posted();
                    }
                }
            }
            int ne = path.poll(path.sendCq());
            long now = System.nanoTime();
            for (int w = 0; w < ne; w++) {
                WorkCompletion wc = path.completion(w);
                int i = (int) wc.wrId();
                path.check(wc, false, (int) scnt[i], (int) ccnt[i]);
                ccnt[i] += cqMod;
                if (phases != null && phases.sampling(now)) {
                    counted += cqMod;
                }
            }
            if (alsoReceive) {
                int nr = path.poll(path.recvCq());
                now = System.nanoTime();
                if (nr > 0 && phases == null) {
                    phases = startClock(now);
                    started = true;
                }
                for (int w = 0; w < nr; w++) {
                    WorkCompletion wc = path.completion(w);
                    path.check(wc, true, (int) counted, 0);
                    if (phases.sampling(now)) {
                        counted++;
                    }
                    path.received((int) wc.wrId(), -1);
                }
                ne += nr;
            }
            if (ne == 0 && (++idle & 0xfff) == 0 && Thread.currentThread().isInterrupted()) {
                throw exit(" Interrupted", 1);
            }
        }
        return PerfOutput.bandwidthDuration(o, size, counted, phases.window());
    }

    /**
     * The ib_send_bw server in duration mode: its clock starts at the first receive; the messages
     * received in the sample window count; every receive is posted again.
     */
    PerfOutput.Bw receiveStream(long size) throws ToolExit {
        Phases phases = null;
        long counted = 0;
        int rcnt = 0;
        int idle = 0;
        while (phases == null || !phases.over(System.nanoTime())) {
            int ne = path.poll(path.recvCq());
            if (ne == 0) {
                if ((++idle & 0xfff) == 0 && Thread.currentThread().isInterrupted()) {
                    throw exit(" Interrupted", 1);
                }
                continue;
            }
            long now = System.nanoTime();
            if (phases == null) {
                phases = startClock(now);
            }
            for (int w = 0; w < ne; w++) {
                WorkCompletion wc = path.completion(w);
                path.check(wc, true, rcnt, 0);
                rcnt++;
                if (phases.sampling(now)) {
                    counted++;
                }
                path.received((int) wc.wrId(), -1);
            }
        }
        return PerfOutput.bandwidthDuration(o, size, counted, phases.window());
    }
}
