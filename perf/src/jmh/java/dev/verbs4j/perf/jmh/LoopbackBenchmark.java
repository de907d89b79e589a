package dev.verbs4j.perf.jmh;

import dev.verbs4j.verbs.CompletionQueue;
import dev.verbs4j.verbs.Opcode;
import dev.verbs4j.verbs.QueuePair;
import dev.verbs4j.verbs.SendFlags;
import dev.verbs4j.verbs.SendRequest;
import dev.verbs4j.verbs.SendRequests;
import dev.verbs4j.verbs.WorkCompletion;
import dev.verbs4j.verbs.WorkCompletions;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.util.concurrent.TimeUnit;

/**
 * One signaled 64-byte RDMA WRITE per operation between two RC queue pairs of one context on
 * the loopback device (Soft-RoCE {@code rxe_lo} under {@code bin/softroce}; {@code
 * VERBS4J_LO_DEV} names it), posted and then polled for until its completion arrives. {@code
 * loopback_bench.c} is the same loop in C. Here the device's own work dominates; the null
 * provider benchmark isolates the binding.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 2)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class LoopbackBenchmark {

    private static final int SIZE = 64;

    private LoopbackPair loopback;
    private QueuePair a;
    private CompletionQueue cqA;
    private SendRequests sends;
    private SendRequest wr;
    private WorkCompletions wcs;
    private long id;

    @Setup(Level.Trial)
    public void setUp() {
        loopback = new LoopbackPair(64, 16, 64, 16);
        a = loopback.a;
        cqA = loopback.cqA;
        sends = new SendRequests(1, 1);
        wr = sends.reset(0).opcode(Opcode.RDMA_WRITE).flags(SendFlags.SIGNALED).sge(loopback.mrA, 0, SIZE)
                .rdma(loopback.mrB.remoteAddress(), loopback.mrB.rkey());
        wcs = new WorkCompletions(1);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        sends.close();
        wcs.close();
        loopback.close();
    }

    /** post_send of one signaled RDMA WRITE, then poll_cq until its completion. */
    @Benchmark
    public long rdmaWritePostAndPoll() {
        long wrId = ++id;
        wr.wrId(wrId);
        a.postSend(sends, 1);
        while (cqA.poll(wcs) == 0) {
            Thread.onSpinWait();
        }
        WorkCompletion wc = wcs.get(0);
        if (!wc.isSuccess() || wc.wrId() != wrId) {
            throw new IllegalStateException("bad completion " + wc + " for wr_id " + wrId);
        }
        return wrId;
    }
}
