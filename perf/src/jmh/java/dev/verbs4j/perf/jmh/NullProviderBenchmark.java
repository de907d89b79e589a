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
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The binding's own cost per operation: one signaled SEND posted ({@link QueuePair#postSend})
 * and its completion polled ({@link CompletionQueue#poll}), status and wr_id checked, on the
 * {@link NullProvider}, whose provider functions return at once. {@code null_bench.c} is the
 * same loop in C through the same functions; the difference is what Java adds. {@link
 * #rawDowncalls} is the floor under the verbs layer: the same two calls as bare FFM downcalls
 * (built once, {@code critical(false)}) on the native objects, with the same checks. Run with
 * {@code -prof gc}: {@code gc.alloc.rate.norm} is the bytes allocated per operation (0 expected).
 */
public class NullProviderBenchmark extends NullProviderState {

    private SendRequests sends;
    private SendRequest wr;
    private WorkCompletions wcs;
    private SendRequests confinedSends;
    private SendRequest confinedWr;
    private WorkCompletions confinedWcs;
    private MemorySegment rawWr;

    @Setup(Level.Trial)
    public void setUp() {
        open();
        sends = new SendRequests(1, 1);
        wr = sends.reset(0).opcode(Opcode.SEND).flags(SendFlags.SIGNALED).sge(provider.memoryRegion(), 0, 64);
        wcs = new WorkCompletions(1);
        confinedSends = SendRequests.confined(1, 1);
        confinedWr = confinedSends.reset(0).opcode(Opcode.SEND).flags(SendFlags.SIGNALED).sge(provider.memoryRegion(), 0, 64);
        confinedWcs = WorkCompletions.confined(1);
        openRaw(1);
        rawWr = provider.nativeObject(7).reinterpret(8);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        close(sends, wcs, confinedSends, confinedWcs);
    }

    /** post_send + poll_cq of one signaled SEND. */
    @Benchmark
    public long postSendPollCq() {
        return postSendPollCq(sends, wr, wcs);
    }

    /**
     * The same through descriptors of one thread ({@link SendRequests#confined}, {@link
     * WorkCompletions#confined}): their memory needs no atomic lifetime bookkeeping per downcall.
     */
    @Benchmark
    public long postSendPollCqConfined() {
        return postSendPollCq(confinedSends, confinedWr, confinedWcs);
    }

    /** Posts {@code request} of {@code list} with the next wr_id, polls into {@code completions} and checks. */
    private long postSendPollCq(SendRequests list, SendRequest request, WorkCompletions completions) {
        long wrId = ++id;
        request.wrId(wrId);
        qp.postSend(list, 1);
        if (cq.poll(completions) != 1) {
            throw new IllegalStateException("no completion for wr_id " + wrId);
        }
        WorkCompletion wc = completions.get(0);
        if (!wc.isSuccess() || wc.wrId() != wrId) {
            throw new IllegalStateException("bad completion " + wc + " for wr_id " + wrId);
        }
        return wrId;
    }

    /** The same two calls and checks as bare FFM downcalls, without the verbs layer. */
    @Benchmark
    public long rawDowncalls() throws Throwable {
        long wrId = ++id;
        rawWr.set(ValueLayout.JAVA_LONG, 0, wrId);
        int rc = (int) NullProvider.POST.invokeExact(rawPostSend, rawQp, rawWr, rawBadWr);
        if (rc != 0) {
            throw new IllegalStateException("post_send returned " + rc);
        }
        if ((int) NullProvider.POLL_CQ.invokeExact(rawPollCq, rawCq, 1, rawWc) != 1
                || rawWc.get(ValueLayout.JAVA_INT, NullProvider.WC_STATUS) != 0 || rawWc.get(ValueLayout.JAVA_LONG, 0) != wrId) {
            throw new IllegalStateException("no good completion for wr_id " + wrId);
        }
        return wrId;
    }
}
