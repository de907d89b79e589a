package dev.verbs4j.perf.jmh;

import dev.verbs4j.verbs.ExtendedQueuePair;
import dev.verbs4j.verbs.QueuePair;
import dev.verbs4j.verbs.ReceiveRequests;
import dev.verbs4j.verbs.SendRequests;
import dev.verbs4j.verbs.WorkCompletions;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The thread-confined fast path: the same loops as {@link NullProviderBenchmark} (one request per
 * post and poll) and {@link NullProviderBatchBenchmark} (lists of n, per message) on a queue pair
 * and completion queue {@linkplain QueuePair#confine() confined} to the benchmark thread, with
 * confined descriptors: no atomic operation on the data path. A class of its own because
 * confinement is one-way and the null provider is one per process.
 */
public class NullProviderConfinedBenchmark extends NullProviderLists {

    private static final int MAX = NullProvider.MAX_BATCH;

    private ExtendedQueuePair xqp;
    private SendRequests sends;
    private ReceiveRequests receives;
    private final WorkCompletions[] wcs = new WorkCompletions[MAX + 1];

    /** Runs on the benchmark thread (thread-scoped state), which the queue pair and queue are confined to. */
    @Setup(Level.Trial)
    public void setUp() {
        open();
        qp.confine();
        xqp = provider.extendedQueuePair().confine().extended();
        cq.confine();
        sends = provider.signaledSends(SendRequests.confined(MAX, 1));
        receives = provider.receives(ReceiveRequests.confined(MAX, 1));
        for (int n : new int[]{1, 8, 32}) {
            wcs[n] = WorkCompletions.confined(n);
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        close(sends, receives, wcs[1], wcs[8], wcs[32]);
    }

    /** post_send + poll_cq of one signaled SEND, as {@link NullProviderBenchmark#postSendPollCq}. */
    @Benchmark
    public long postSendPollCq() {
        return send(1);
    }

    @Override
    void receive(int n) {
        qp.postReceive(receives, n);
    }

    @Override
    long sendExtended(int n) {
        id = NullProviderBatchBenchmark.sendExtended(xqp, provider.memoryRegion(), cq, wcs[n], n, id);
        return id;
    }

    @Override
    long send(int n) {
        id = NullProviderBatchBenchmark.send(qp, cq, sends, wcs[n], n, id);
        return id;
    }
}
