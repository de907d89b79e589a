package dev.verbs4j.perf.jmh;

import dev.verbs4j.verbs.CompletionQueue;
import dev.verbs4j.verbs.ExtendedQueuePair;
import dev.verbs4j.verbs.MemoryRegion;
import dev.verbs4j.verbs.Opcode;
import dev.verbs4j.verbs.QueuePair;
import dev.verbs4j.verbs.SendRequests;

import java.util.concurrent.atomic.AtomicLong;

/**
 * A child JVM for {@link ProviderLockRaceTest}: for a few seconds one thread runs extended send
 * batches on the null provider's extended queue pair (whose {@code wr_start} holds the send queue
 * lock until {@code wr_complete}, as providers do), another posts classic sends on the same queue
 * pair, a third forces safepoints with {@code System.gc()}. A classic post let into the provider
 * while a batch holds the lock would spin there, inside a downcall that keeps its thread in the
 * Java state, and so hold up every safepoint: the JVM would freeze. Prints the counts and exits 0.
 */
public final class ProviderLockRace {

    private ProviderLockRace() {
    }

    public static void main(String[] args) throws Exception {
        long until = System.nanoTime() + Long.parseLong(args[0]) * 1_000_000L;
        AtomicLong batches = new AtomicLong();
        AtomicLong posts = new AtomicLong();
        AtomicLong refused = new AtomicLong();
        AtomicLong gcs = new AtomicLong();
        try (NullProvider np = NullProvider.open(); SendRequests sends = new SendRequests(1, 1)) {
            QueuePair qp = np.extendedQueuePair();
            ExtendedQueuePair x = qp.extended();
            MemoryRegion mr = np.memoryRegion();
            sends.reset(0).opcode(Opcode.SEND).flags(0).sge(mr, 0, 8);
            Thread batcher = Thread.ofPlatform().start(() -> {
                long id = 0;
                while (System.nanoTime() < until) {
                    x.start();
                    x.wrId(++id).flags(0).send().setSge(mr, 0, 8);
                    if (new byte[256 + (int) (id & 63)].length == 0) { // code that may stop at a safepoint
                        throw new AssertionError();
                    }
                    x.complete();
                    batches.incrementAndGet();
                }
            });
            Thread poster = Thread.ofPlatform().start(() -> {
                while (System.nanoTime() < until) {
                    try {
                        qp.postSend(sends, 1);
                        posts.incrementAndGet();
                    } catch (IllegalStateException e) {
                        refused.incrementAndGet();
                    }
                }
            });
            Thread collector = Thread.ofPlatform().start(() -> {
                while (System.nanoTime() < until) {
                    System.gc();
                    gcs.incrementAndGet();
                }
            });
            batcher.join();
            poster.join();
            collector.join();
            CompletionQueue unused = np.completionQueue();
            System.out.println("batches=" + batches + " posts=" + posts + " refused=" + refused + " gcs=" + gcs
                    + " cq=" + (unused != null));
        }
    }
}
