package dev.verbs4j.perf.jmh;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.OperationsPerInvocation;

/**
 * The list benchmarks that {@link NullProviderBatchBenchmark} and {@link
 * NullProviderConfinedBenchmark} both run, per message, each on its own queue pair, completion
 * queue and descriptors: sends in lists of 8 and 32, sends through the extended API
 * ({@code ibv_wr_*}) in batches of 1, 8 and 32, receives in lists of 1, 8 and 32. JMH names them
 * after the subclass ({@code NullProviderBatchBenchmark.send8}).
 */
public abstract class NullProviderLists extends NullProviderState {

    /** Posts {@code n} signaled SENDs as one list and polls their completions, checked; returns the last wr_id. */
    abstract long send(int n);

    /** The same as one batch of the extended API. */
    abstract long sendExtended(int n);

    /** Posts {@code n} receives as one list. */
    abstract void receive(int n);

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
        receive(1);
    }

    @Benchmark
    @OperationsPerInvocation(8)
    public void receive8() {
        receive(8);
    }

    @Benchmark
    @OperationsPerInvocation(32)
    public void receive32() {
        receive(32);
    }
}
