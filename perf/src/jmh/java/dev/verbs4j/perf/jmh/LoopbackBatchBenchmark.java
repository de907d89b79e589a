package dev.verbs4j.perf.jmh;

import dev.verbs4j.verbs.CompletionQueue;
import dev.verbs4j.verbs.Opcode;
import dev.verbs4j.verbs.QueuePair;
import dev.verbs4j.verbs.SendFlags;
import dev.verbs4j.verbs.SendRequests;
import dev.verbs4j.verbs.WorkCompletion;
import dev.verbs4j.verbs.WorkCompletions;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.util.concurrent.TimeUnit;

/**
 * The message rate of what {@code ib_write_bw -s 64 -l 32 -Q 32 -t 128} does, on the loopback
 * device ({@code rxe_lo} under {@code bin/softroce}): 64-byte RDMA WRITEs posted in lists of
 * {@value #LIST} of which only the last is signaled, up to {@value #DEPTH} in flight, a list's
 * completion polled before its slots are used again; on the fast path (queue pair, completion
 * queue and descriptors confined to the benchmark thread). The score is ns per message;
 * {@code bin/bench} prints it next to the rate of the perftest tool run with those options in the
 * same VM, so that the two can be held against each other.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 2)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class LoopbackBatchBenchmark {

    static final int SIZE = 64;
    static final int LIST = 32;
    static final int DEPTH = 128;

    private LoopbackPair loopback;
    private QueuePair a;
    private CompletionQueue cq;
    private SendRequests sends;
    private WorkCompletions wcs;
    private int outstanding;
    private long lists;

    @Setup(Level.Trial)
    public void setUp() {
        loopback = new LoopbackPair(DEPTH, DEPTH, 16, 1);
        cq = loopback.cqA.confine();
        a = loopback.a.confine();
        sends = SendRequests.confined(LIST, 1);
        for (int i = 0; i < LIST; i++) {
            sends.reset(i).opcode(Opcode.RDMA_WRITE).flags(i == LIST - 1 ? SendFlags.SIGNALED : 0)
                    .sge(loopback.mrA, 0, SIZE).rdma(loopback.mrB.remoteAddress(), loopback.mrB.rkey());
        }
        wcs = WorkCompletions.confined(DEPTH / LIST);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        while (outstanding > 0) {
            reap();
        }
        sends.close();
        wcs.close();
        loopback.close();
    }

    /** One list of {@value #LIST} WRITEs, after reaping a list's completion when the send queue is full. */
    @Benchmark
    @OperationsPerInvocation(LIST)
    public long writeList() {
        while (outstanding == DEPTH / LIST) {
            reap();
        }
        sends.get(LIST - 1).wrId(++lists);
        a.postSend(sends, LIST);
        outstanding++;
        return lists;
    }

    private void reap() {
        int n = cq.poll(wcs);
        for (int i = 0; i < n; i++) {
            WorkCompletion wc = wcs.get(i);
            if (!wc.isSuccess()) {
                throw new IllegalStateException("bad completion " + wc);
            }
        }
        if (n == 0) {
            Thread.onSpinWait();
        }
        outstanding -= n;
    }
}
