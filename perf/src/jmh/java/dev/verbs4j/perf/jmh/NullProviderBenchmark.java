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
 * The binding's own cost per operation: one signaled SEND posted ({@link QueuePair#postSend})
 * and its completion polled ({@link CompletionQueue#poll}), status and wr_id checked, on the
 * {@link NullProvider}, whose provider functions return at once. {@code null_bench.c} is the
 * same loop in C through the same functions; the difference is what Java adds. Run with {@code
 * -prof gc}: {@code gc.alloc.rate.norm} is the bytes allocated per operation (0 expected).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class NullProviderBenchmark {

    private NullProvider provider;
    private QueuePair qp;
    private CompletionQueue cq;
    private SendRequests sends;
    private SendRequest wr;
    private WorkCompletions wcs;
    private long id;

    @Setup(Level.Trial)
    public void setUp() {
        provider = NullProvider.open();
        qp = provider.queuePair();
        cq = provider.completionQueue();
        sends = new SendRequests(1, 1);
        wr = sends.get(0).opcode(Opcode.SEND).flags(SendFlags.SIGNALED).sge(provider.memoryRegion(), 0, 64);
        wcs = new WorkCompletions(1);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        long posted = provider.posted();
        long polled = provider.polled();
        sends.close();
        wcs.close();
        provider.close();
        if (posted != id || polled != id) {
            throw new IllegalStateException("the provider counted " + posted + " posted and " + polled
                    + " polled, the benchmark " + id);
        }
    }

    /** post_send + poll_cq of one signaled SEND. */
    @Benchmark
    public long postSendPollCq() {
        long wrId = ++id;
        wr.wrId(wrId);
        qp.postSend(sends, 1);
        if (cq.poll(wcs) != 1) {
            throw new IllegalStateException("no completion for wr_id " + wrId);
        }
        WorkCompletion wc = wcs.get(0);
        if (!wc.isSuccess() || wc.wrId() != wrId) {
            throw new IllegalStateException("bad completion " + wc + " for wr_id " + wrId);
        }
        return wrId;
    }
}
