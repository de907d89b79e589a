package dev.verbs4j.perf.tools;

import dev.verbs4j.tools.ToolExit;
import dev.verbs4j.verbs.WorkCompletion;

import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code --run_infinitely} (bandwidth tests): the stream never ends; every {@code -D} seconds
 * (perftest's default 5) a row is printed for the operations completed (or, on the ib_send_bw
 * server, the messages received) since the previous row, as perftest's printing thread does. The
 * run ends when its thread is interrupted (the process is stopped). The printer is a virtual
 * thread that only reads a counter; the loop on the calling thread owns every verbs object.
 */
final class InfiniteMode extends MeasurementLoops {

    /** perftest's interval without -D. */
    private static final int DEFAULT_SECONDS = 5;

    private final AtomicLong done = new AtomicLong();

    InfiniteMode(RunParts run) {
        super(run);
    }

    /** The printing thread: a row per interval for {@code size}-byte operations, doubled for -b of the RDMA verbs. */
    private Thread printer(long size) {
        int seconds = o.duration > 0 ? o.duration : DEFAULT_SECONDS;
        int factor = o.duplex && o.verb != PerfOptions.Verb.SEND ? 2 : 1;
        return Thread.ofVirtual().name("perftest-run-infinitely").start(() -> {
            long last = 0;
            long since = System.nanoTime();
            try {
                while (true) {
                    Thread.sleep(seconds * 1000L);
                    long now = System.nanoTime();
                    long total = done.get();
                    long n = total - last;
                    PerfOutput.Bw b = PerfOutput.bandwidthDuration(o, size * factor, n, now - since);
                    report.bw(new PerfOutput.Bw(size, n, 0, b.avg(), b.msgRate() * factor));
                    out.flush();
                    last = total;
                    since = now;
                }
            } catch (InterruptedException e) {
                // the run ended
            }
        });
    }

    /** Operations in flight on every queue pair for ever (with {@code alsoReceive}, the peer's messages taken too). */
    void stream(long size, boolean alsoReceive) throws ToolExit {
        int q = o.numQps;
        int list = Math.max(1, o.postList);
        int cqMod = Math.max(1, o.cqMod);
        int baseFlags = path.prepareStream(size);
        long[] scnt = new long[q];
        long[] ccnt = new long[q];
        Thread printer = printer(size);
        try {
            while (true) {
                for (int i = 0; i < q; i++) {
                    while (scnt[i] - ccnt[i] + list <= o.txDepth) {
                        path.postStreamList(i, list, scnt[i], cqMod, baseFlags);
                        scnt[i] += list;
                    }
                }
                int ne = path.poll(path.sendCq());
                for (int w = 0; w < ne; w++) {
                    WorkCompletion wc = path.completion(w);
                    int i = (int) wc.wrId();
                    path.check(wc, false, (int) scnt[i], (int) ccnt[i]);
                    ccnt[i] += cqMod;
                    done.addAndGet(cqMod);
                }
                if (alsoReceive) {
                    int nr = path.poll(path.recvCq());
                    for (int w = 0; w < nr; w++) {
                        WorkCompletion wc = path.completion(w);
                        path.check(wc, true, 0, 0);
                        path.received((int) wc.wrId(), -1);
                    }
                    ne += nr;
                }
                // every turn (a field read): a busy turn posts as many requests as the poll completed,
                // so a count of turns, or of empty polls (which -b's peer stream keeps rare), could
                // leave an interrupt unseen for many seconds
                if (Thread.currentThread().isInterrupted()) {
                    throw exit(" Interrupted", 1);
                }
            }
        } finally {
            printer.interrupt();
        }
    }

    /** The ib_send_bw server: every message received and its receive posted again, for ever. */
    void receive(long size) throws ToolExit {
        Thread printer = printer(size);
        try {
            int idle = 0;
            while (true) {
                int ne = path.poll(path.recvCq());
                if (ne == 0) {
                    if ((++idle & 0xfff) == 0 && Thread.currentThread().isInterrupted()) {
                        throw exit(" Interrupted", 1);
                    }
                    continue;
                }
                for (int w = 0; w < ne; w++) {
                    WorkCompletion wc = path.completion(w);
                    path.check(wc, true, 0, 0);
                    path.received((int) wc.wrId(), -1);
                }
                done.addAndGet(ne);
            }
        } finally {
            printer.interrupt();
        }
    }
}
