package dev.verbs4j.perf.tools;

import dev.verbs4j.tools.ToolExit;
import dev.verbs4j.verbs.SendFlags;
import dev.verbs4j.verbs.WorkCompletion;


/**
 * The bandwidth tests: streams of operations on every queue pair, at most {@code -t} outstanding
 * each, posted in lists of {@code -l} with a completion every {@code -Q} (CQ moderation). The
 * client streams SENDs, RDMA WRITEs, READs or atomics; the ib_send_bw server receives; with
 * {@code -b} both sides stream and their results are added. With {@code -D} the streams are
 * {@link DurationMode}'s.
 */
final class BandwidthLoops extends MeasurementLoops {

    private final DurationMode duration;
    private final RunParts run;
    /** perftest's watchdog of ib_send_bw's receiving loops. */
    private final AliveCheck alive;

    BandwidthLoops(RunParts run, DurationMode duration) {
        super(run);
        this.duration = duration;
        this.run = run;
        this.alive = new AliveCheck(run.o().checkAliveSeconds);
    }

    // ---- the tests ----

    /** ib_write_bw, ib_read_bw, ib_atomic_bw: the server only reports (the client's result, or with -b both). */
    int rdmaBandwidth() throws ToolExit {
        report.bwHeader();
        if (!o.isClient() && !o.duplex) {
            keys.barrierIndented();
            report.bw(keys.exchangeReport(new PerfOutput.Bw(0, 0, 0, 0, 0)));
            keys.closeExchange();
            report.endTable();
            return 0;
        }
        PerfOutput.Bw last = null;
        for (long size : res.device().sizes()) {
            if (o.performWarmUp) {
                warmUp(size);
            }
            // (with --run_infinitely perftest goes straight to the stream)
            if (o.duplex && !o.runInfinitely) {
                keys.barrierBetweenSizes();
            }
            if (o.runInfinitely) {
                new InfiniteMode(run).stream(size, o.duplex && o.verb == PerfOptions.Verb.SEND);
            }
            last = stream(size, false);
            if (o.duplex) {
                if (o.all) {
                    keys.barrierBetweenSizes();
                }
                PerfOutput.Bw theirs = keys.exchangeReport(last);
                report.bw(last.plus(theirs));
                if (!o.all) {
                    report.both(last, theirs);
                }
            } else {
                report.bw(last);
            }
        }
        report.endTable();
        if (!o.duplex) {
            keys.barrierIndented();
            keys.exchangeReport(last);
        }
        keys.closeExchange();
        return report.limits(last);
    }

    /** ib_send_bw: the client streams SENDs and the server receives them; with -b both do both. */
    int sendBandwidth() throws ToolExit {
        report.bwHeader();
        PerfOutput.Bw last = null;
        for (long size : res.device().sizes()) {
            if (!o.isClient() || o.duplex) {
                path.postInitialReceives(size);
            }
            keys.barrier();
            if (o.runInfinitely) {
                InfiniteMode forever = new InfiniteMode(run);
                if (o.isClient()) {
                    forever.stream(size, false);
                } else {
                    forever.receive(size);
                }
            }
            if (o.duplex && o.duration > 0) {
                // perftest exchanges no reports in duration mode: each side prints its own count
                last = stream(size, true);
                report.bw(last);
            } else if (o.duplex) {
                last = stream(size, true);
                PerfOutput.Bw theirs = keys.exchangeReport(last);
                report.bw(last.plus(theirs));
                if (!o.all) {
                    report.both(last, theirs);
                }
            } else if (o.isClient()) {
                last = stream(size, false);
                report.bw(last);
            } else {
                last = receiveStream(size);
                report.bw(last);
            }
            if (o.all) {
                keys.barrier();
            }
        }
        report.endTable();
        keys.closeExchangeLenient();
        return o.isClient() ? report.limits(last) : 0;
    }

    /**
     * --perform_warm_up (write, read and atomic): before each size, on every queue pair in turn, a
     * send queue's worth of requests ({@code -t}, or one post list) posted and completed, unmeasured.
     */
    private void warmUp(long size) throws ToolExit {
        int list = Math.max(1, o.postList);
        int session = list == 1 ? o.txDepth : list;
        int unsignaled = path.prepareStream(size);
        for (int i = 0; i < o.numQps; i++) {
            // one completion per post: the list's last request is signaled
            path.flags(i, list - 1, unsignaled | SendFlags.SIGNALED);
            int outstanding = 0;
            for (int w = 0; w < session; w += list) {
                path.post(i, list, w);
                outstanding++;
            }
            int idle = 0;
            while (outstanding > 0) {
                int ne = path.poll(path.sendCq());
                for (int k = 0; k < ne; k++) {
                    path.check(path.completion(k), false, 0, 0);
                }
                outstanding -= ne;
                if (ne == 0 && path.events()) {
                    path.awaitEvent();
                } else if (ne == 0 && (++idle & 0xfff) == 0 && Thread.currentThread().isInterrupted()) {
                    throw exit(" Interrupted", 1);
                }
            }
            path.flags(i, list - 1, unsignaled);
        }
    }

    // ---- the streams ----

    /**
     * The client's side of a bandwidth test: {@code iters} operations of {@code size} bytes on every
     * queue pair, at most {@code txDepth} outstanding per queue pair, a completion every
     * {@code cqMod}. With {@code alsoReceive} (send -b) the receives of the peer's stream are
     * consumed and re-posted in the same loop.
     */
    private PerfOutput.Bw stream(long size, boolean alsoReceive) throws ToolExit {
        if (o.duration > 0) {
            return duration.stream(size, alsoReceive);
        }
        int q = o.numQps;
        int iters = o.iters;
        int n = iters * q;
        int list = Math.max(1, o.postList);
        int cqMod = Math.max(1, o.cqMod);
        long[] tposted = new long[n];
        long[] tcompleted = new long[n];
        int[] scnt = new int[q];
        int[] ccnt = new int[q];
        int baseFlags = path.prepareStream(size);
        int totScnt = 0;
        int totCcnt = 0;
        int rcnt = 0;
        int rTarget = alsoReceive ? n : 0;
        boolean started = o.isClient() || !alsoReceive;
        RateLimiter limiter = RateLimiter.of(o, size);
        int idle = 0;
        if (alsoReceive) {
            alive.arm(n, System.nanoTime());
        }
        while (totCcnt < n || rcnt < rTarget) {
            if (started) {
                for (int i = 0; i < q; i++) {
                    if (!limiter.open(System.nanoTime())) {
                        continue;
                    }
                    while (scnt[i] < iters && scnt[i] - ccnt[i] + list <= o.txDepth && limiter.sending()) {
                        for (int k = 0; k < list; k++) {
                            int idx = scnt[i] + k + 1;
                            boolean signal = idx % cqMod == 0 || idx == iters;
                            path.flags(i, k, signal ? baseFlags | SendFlags.SIGNALED : baseFlags);
                        }
                        long now = System.nanoTime();
                        for (int k = 0; k < list; k++) {
                            tposted[totScnt + k] = now;
                        }
                        path.post(i, list, totScnt);
                        scnt[i] += list;
                        totScnt += list;
                        limiter.posted();
                    }
                }
            }
            int ne = path.poll(path.sendCq());
            for (int w = 0; w < ne; w++) {
                WorkCompletion wc = path.completion(w);
                path.check(wc, false, totScnt, totCcnt);
                int i = (int) wc.wrId();
                int next = Math.min((ccnt[i] / cqMod + 1) * cqMod, iters);
                int covered = next - ccnt[i];
                ccnt[i] = next;
                long now = System.nanoTime();
                for (int k = 0; k < covered; k++) {
                    tcompleted[totCcnt++] = now;
                }
            }
            if (alsoReceive && rcnt < rTarget) {
                int nr = path.poll(path.recvCq());
                for (int w = 0; w < nr; w++) {
                    WorkCompletion wc = path.completion(w);
                    path.check(wc, true, rcnt, 0);
                    int i = (int) wc.wrId();
                    rcnt++;
                    alive.received(rcnt);
                    started = true;
                    path.received(i, iters);
                }
                ne += nr;
            }
            if (ne == 0 && path.events()) {
                path.awaitEvent();
                if (alsoReceive && alive.silent(System.nanoTime())) {
                    throw silent();
                }
            } else if (ne == 0 && (++idle & 0xfff) == 0) {
                if (Thread.currentThread().isInterrupted()) {
                    throw exit(" Interrupted", 1);
                }
                if (alsoReceive && alive.silent(System.nanoTime())) {
                    throw silent();
                }
            }
        }
        if (alsoReceive) {
            alive.loopEnded();
        }
        return PerfOutput.bandwidth(o, size, n, tposted, tcompleted, o.peakOff());
    }

    /**
     * The end of a receiving loop that {@link AliveCheck} found silent, as perftest's: its words and
     * counts; with events perftest cannot even report (status 1), else the run ends with 17.
     */
    private ToolExit silent() {
        err.print(" Did not get Message for 120 Seconds, exiting..\n Total Received=" + alive.current()
                + ", Total Iters Required=" + alive.total() + "\n");
        if (path.events()) {
            return exit(" Due to this issue, Perftest cannot produce a report when in event mode.", 1);
        }
        return new ToolExit(17);
    }

    /** The ib_send_bw server: receives every message, timed from the first to the last receive. */
    private PerfOutput.Bw receiveStream(long size) throws ToolExit {
        if (o.duration > 0) {
            return duration.receiveStream(size);
        }
        int q = o.numQps;
        int n = o.iters * q;
        long first = 0;
        long last = 0;
        int rcnt = 0;
        int idle = 0;
        alive.arm(n, System.nanoTime());
        while (rcnt < n) {
            int ne = path.poll(path.recvCq());
            if (ne == 0) {
                if (path.events()) {
                    path.awaitEvent();
                } else if ((++idle & 0xfff) != 0) {
                    continue;
                } else if (Thread.currentThread().isInterrupted()) {
                    throw exit(" Interrupted", 1);
                }
                if (alive.silent(System.nanoTime())) {
                    throw silent();
                }
                continue;
            }
            long now = System.nanoTime();
            for (int w = 0; w < ne; w++) {
                WorkCompletion wc = path.completion(w);
                path.check(wc, true, rcnt, 0);
                if (rcnt == 0) {
                    first = now;
                }
                rcnt++;
                int i = (int) wc.wrId();
                path.received(i, o.iters);
            }
            alive.received(rcnt);
            last = now;
        }
        alive.loopEnded();
        long[] tp = {first};
        long[] tc = new long[n];
        tc[n - 1] = last;
        return PerfOutput.bandwidth(o, size, n, tp, tc, true);
    }
}
