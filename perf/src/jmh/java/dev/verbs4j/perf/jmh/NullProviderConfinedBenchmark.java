package dev.verbs4j.perf.jmh;

import dev.verbs4j.verbs.CompletionQueue;
import dev.verbs4j.verbs.ExtendedQueuePair;
import dev.verbs4j.verbs.Opcode;
import dev.verbs4j.verbs.QueuePair;
import dev.verbs4j.verbs.ReceiveRequests;
import dev.verbs4j.verbs.SendFlags;
import dev.verbs4j.verbs.SendRequests;
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
 * The thread-confined fast path: the same loops as {@link NullProviderBenchmark} (one request per
 * post and poll) and {@link NullProviderBatchBenchmark} (lists of n, per message) on a queue pair
 * and completion queue {@linkplain QueuePair#confine() confined} to the benchmark thread, with
 * confined descriptors: no atomic operation on the data path. A class of its own because
 * confinement is one-way and the null provider is one per process.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class NullProviderConfinedBenchmark {

    private static final int MAX = NullProvider.MAX_BATCH;

    private NullProvider provider;
    private QueuePair qp;
    private ExtendedQueuePair xqp;
    private CompletionQueue cq;
    private SendRequests sends;
    private ReceiveRequests receives;
    private final WorkCompletions[] wcs = new WorkCompletions[MAX + 1];
    private long id;

    /** Runs on the benchmark thread (thread-scoped state), which the queue pair and queue are confined to. */
    @Setup(Level.Trial)
    public void setUp() {
        provider = NullProvider.open();
        qp = provider.queuePair().confine();
        xqp = provider.extendedQueuePair().confine().extended();
        cq = provider.completionQueue().confine();
        sends = SendRequests.confined(MAX, 1);
        receives = ReceiveRequests.confined(MAX, 1);
        for (int i = 0; i < MAX; i++) {
            sends.reset(i).opcode(Opcode.SEND).flags(SendFlags.SIGNALED).sge(provider.memoryRegion(), 0, 64);
            receives.reset(i).sge(provider.memoryRegion(), 0, 64);
        }
        for (int n : new int[]{1, 8, 32}) {
            wcs[n] = WorkCompletions.confined(n);
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        long posted = provider.posted();
        long polled = provider.polled();
        sends.close();
        receives.close();
        for (int n : new int[]{1, 8, 32}) {
            wcs[n].close();
        }
        provider.close();
        if (posted != id || polled != id) {
            throw new IllegalStateException("the provider counted " + posted + " posted and " + polled
                    + " polled, the benchmark " + id);
        }
    }

    /** post_send + poll_cq of one signaled SEND, as {@link NullProviderBenchmark#postSendPollCq}. */
    @Benchmark
    public long postSendPollCq() {
        return send(1);
    }

    @Benchmark
    @OperationsPerInvocation(8)
    public long send8() {
        return send(8);
    }

    @Benchmark
    @OperationsPerInvocation(32)
    public long send32() {
        return send(32);
    }

    @Benchmark
    public long sendExtended1() {
        return sendExtended(1);
    }

    @Benchmark
    @OperationsPerInvocation(8)
    public long sendExtended8() {
        return sendExtended(8);
    }

    @Benchmark
    @OperationsPerInvocation(32)
    public long sendExtended32() {
        return sendExtended(32);
    }

    @Benchmark
    public void receive1() {
        qp.postReceive(receives, 1);
    }

    @Benchmark
    @OperationsPerInvocation(8)
    public void receive8() {
        qp.postReceive(receives, 8);
    }

    @Benchmark
    @OperationsPerInvocation(32)
    public void receive32() {
        qp.postReceive(receives, 32);
    }

    private long sendExtended(int n) {
        id = NullProviderBatchBenchmark.sendExtended(xqp, provider.memoryRegion(), cq, wcs[n], n, id);
        return id;
    }

    private long send(int n) {
        id = NullProviderBatchBenchmark.send(qp, cq, sends, wcs[n], n, id);
        return id;
    }
}
