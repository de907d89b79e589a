package dev.verbs4j.perf.jmh;

import dev.verbs4j.naaice.ReferenceKernels;
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

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;

/**
 * The software NAA's reference kernel "add 1 to every byte" over one MiB of native memory, as
 * {@link ReferenceKernels#addBytes} runs it on a parameter region (memory of a shared arena, as an
 * {@code RdmaArena}'s). {@code kernel_bench.c} is the same byte loop in C (gcc -O2): the score is
 * ns per MiB.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1)
public class NaaiceKernelBenchmark {

    static final int MIB = 1 << 20;

    private Arena arena;
    private MemorySegment region;

    @Setup(Level.Trial)
    public void setUp() {
        arena = Arena.ofShared();
        region = arena.allocate(MIB, 4096);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        arena.close();
    }

    /** The kernel as the NAA runs it. */
    @Benchmark
    public MemorySegment addOne() {
        ReferenceKernels.addBytes(region, 1);
        return region;
    }
}
