package dev.verbs4j.perf.jmh;

import dev.verbs4j.verbs.CompletionQueue;
import dev.verbs4j.verbs.QueuePair;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;

/**
 * What every benchmark on the {@link NullProvider} has: the JMH settings (inherited by the
 * subclasses), the provider with its queue pair and completion queue ({@link #open}), the last
 * wr_id posted, and for a bare-downcall baseline the native objects and an arena for its bad-wr
 * slot and completions ({@link #openRaw}). Thread-scoped state: each subclass's set-up and
 * tear-down ({@link #close}) run on the benchmark thread, which owns all of it.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public abstract class NullProviderState {

    NullProvider provider;
    QueuePair qp;
    CompletionQueue cq;
    /** The last wr_id posted: the count {@link #close} holds the provider's counters against. */
    long id;

    /** The bare-downcall baseline's memory, or null without one. */
    Arena arena;
    MemorySegment rawQp;
    MemorySegment rawCq;
    MemorySegment rawPostSend;
    MemorySegment rawPollCq;
    MemorySegment rawBadWr;
    MemorySegment rawWc;

    /** Opens the provider and takes its queue pair and completion queue. */
    final void open() {
        provider = NullProvider.open();
        qp = provider.queuePair();
        cq = provider.completionQueue();
    }

    /**
     * After {@link #open}: the native queue pair, queue, post_send and poll_cq (see {@link
     * NullProvider#nativeObject}), and in a confined arena the bad-wr slot and room for {@code
     * completions} {@code ibv_wc}.
     */
    final void openRaw(int completions) {
        arena = Arena.ofConfined();
        rawCq = provider.nativeObject(2);
        rawQp = provider.nativeObject(3);
        rawPostSend = provider.nativeObject(5);
        rawPollCq = provider.nativeObject(6);
        rawBadWr = arena.allocate(ValueLayout.ADDRESS);
        rawWc = arena.allocate(NullProvider.WC_SIZE * completions, 8);
    }

    /**
     * The tear-down: closes {@code resources} and the arena of {@link #openRaw}, then the provider,
     * checking its counts against {@link #id} ({@link NullProvider#closeCounted}).
     */
    final void close(AutoCloseable... resources) {
        if (arena == null) {
            provider.closeCounted(id, resources);
        } else {
            AutoCloseable[] all = Arrays.copyOf(resources, resources.length + 1);
            all[resources.length] = arena;
            provider.closeCounted(id, all);
        }
    }
}
