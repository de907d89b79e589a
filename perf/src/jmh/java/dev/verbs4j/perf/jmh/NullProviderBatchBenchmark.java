package dev.verbs4j.perf.jmh;

import dev.verbs4j.verbs.CompletionQueue;
import dev.verbs4j.verbs.ExtendedQueuePair;
import dev.verbs4j.verbs.MemoryRegion;
import dev.verbs4j.verbs.QueuePair;
import dev.verbs4j.verbs.ReceiveRequests;
import dev.verbs4j.verbs.SendFlags;
import dev.verbs4j.verbs.SendRequests;
import dev.verbs4j.verbs.WorkCompletion;
import dev.verbs4j.verbs.WorkCompletions;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The binding's cost <em>per message</em> when work requests are posted in lists and completions
 * polled in batches, as high-rate programs do: {@code n} signaled SENDs linked in one {@link
 * QueuePair#postSend} and their completions taken by {@link CompletionQueue#poll} into {@code n}
 * entries at a time (n = 1, 8, 32; the score is per message), and {@code n} receives posted in one
 * {@link QueuePair#postReceive}. Each on the {@link NullProvider}, through verbs4j's shared and
 * confined descriptors and, as the floor, bare FFM downcalls on the provider's own linked
 * requests; and the same sends through the extended API ({@link ExtendedQueuePair}: {@code
 * ibv_wr_start()}, per request {@code ibv_wr_send()} and {@code ibv_wr_set_sge()}, {@code
 * ibv_wr_complete()}), through verbs4j and as bare downcalls. {@code null_batch_bench.c} runs the
 * same loops in C.
 */
public class NullProviderBatchBenchmark extends NullProviderLists {

    private static final int MAX = NullProvider.MAX_BATCH;
    /** {@code next} of a work request lies at offset 8. */
    private static final long WR_NEXT = 8;

    private SendRequests sends;
    private SendRequests confinedSends;
    private ReceiveRequests receives;
    private ReceiveRequests confinedReceives;
    private final WorkCompletions[] wcs = new WorkCompletions[MAX + 1];
    private final WorkCompletions[] confinedWcs = new WorkCompletions[MAX + 1];

    private MemorySegment rawPostRecv;
    private MemorySegment rawSendWrs;
    private MemorySegment rawRecvWrs;
    private long sendWrSize;
    private long recvWrSize;
    private ExtendedQueuePair xqp;
    private MemoryRegion mr;
    private MemorySegment rawQpx;
    private MemorySegment rawWrStart;
    private MemorySegment rawWrSend;
    private MemorySegment rawWrSetSge;
    private MemorySegment rawWrComplete;
    private long qpxWrId;
    private long qpxWrFlags;
    private long bufferAddress;

    @Setup(Level.Trial)
    public void setUp() {
        open();
        sends = provider.signaledSends(new SendRequests(MAX, 1));
        confinedSends = provider.signaledSends(SendRequests.confined(MAX, 1));
        receives = provider.receives(new ReceiveRequests(MAX, 1));
        confinedReceives = provider.receives(ReceiveRequests.confined(MAX, 1));
        for (int n : new int[]{1, 8, 32}) {
            wcs[n] = new WorkCompletions(n);
            confinedWcs[n] = WorkCompletions.confined(n);
        }
        openRaw(MAX);
        sendWrSize = provider.sendWrSize();
        recvWrSize = provider.recvWrSize();
        // np.send_wrs and np.recv_wrs are static arrays of the null provider's library, which stays
        // loaded for the process (NullProvider): the sizes are theirs (NP_MAX_BATCH entries)
        rawSendWrs = provider.nativeObject(8).reinterpret(sendWrSize * MAX);
        rawRecvWrs = provider.nativeObject(9).reinterpret(recvWrSize * MAX);
        rawPostRecv = provider.nativeObject(10);
        xqp = provider.extendedQueuePair().extended();
        mr = provider.memoryRegion();
        // a plain address for wr_set_sge: np.buffer, the region's memory, is a static of the null
        // provider's library, loaded for the process, so it outlives every use here
        bufferAddress = mr.address();
        // the ibv_qp_ex is a static of the null provider's library (loaded for the process)
        long[] layout = provider.qpExLayout();
        rawQpx = provider.nativeObject(11).reinterpret(layout[5] + ValueLayout.ADDRESS.byteSize());
        qpxWrId = layout[0];
        qpxWrFlags = layout[1];
        rawWrStart = rawQpx.get(ValueLayout.ADDRESS, layout[2]);
        rawWrSend = rawQpx.get(ValueLayout.ADDRESS, layout[3]);
        rawWrSetSge = rawQpx.get(ValueLayout.ADDRESS, layout[4]);
        rawWrComplete = rawQpx.get(ValueLayout.ADDRESS, layout[5]);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        close(sends, confinedSends, receives, confinedReceives, wcs[1], confinedWcs[1], wcs[8], confinedWcs[8], wcs[32],
                confinedWcs[32]);
    }

    // ---- sends: n per post, n completions per poll; per message

    @Benchmark
    public long send1() {
        return send(sends, wcs[1], 1);
    }

    @Benchmark
    public long sendConfined1() {
        return send(confinedSends, confinedWcs[1], 1);
    }

    @Benchmark
    @OperationsPerInvocation(8)
    public long sendConfined8() {
        return send(confinedSends, confinedWcs[8], 8);
    }

    @Benchmark
    @OperationsPerInvocation(32)
    public long sendConfined32() {
        return send(confinedSends, confinedWcs[32], 32);
    }

    @Benchmark
    public long sendRaw1() throws Throwable {
        return sendRaw(1);
    }

    @Benchmark
    @OperationsPerInvocation(8)
    public long sendRaw8() throws Throwable {
        return sendRaw(8);
    }

    @Benchmark
    @OperationsPerInvocation(32)
    public long sendRaw32() throws Throwable {
        return sendRaw(32);
    }

    // ---- sends through the extended API (ibv_wr_*): n per batch, n completions per poll; per message

    @Benchmark
    public long sendExtendedRaw1() throws Throwable {
        return sendExtendedRaw(1);
    }

    @Benchmark
    @OperationsPerInvocation(8)
    public long sendExtendedRaw8() throws Throwable {
        return sendExtendedRaw(8);
    }

    @Benchmark
    @OperationsPerInvocation(32)
    public long sendExtendedRaw32() throws Throwable {
        return sendExtendedRaw(32);
    }

    // ---- receives: n per post; per receive

    @Benchmark
    public void receiveConfined1() {
        qp.postReceive(confinedReceives, 1);
    }

    @Benchmark
    @OperationsPerInvocation(8)
    public void receiveConfined8() {
        qp.postReceive(confinedReceives, 8);
    }

    @Benchmark
    @OperationsPerInvocation(32)
    public void receiveConfined32() {
        qp.postReceive(confinedReceives, 32);
    }

    @Benchmark
    public void receiveRaw1() throws Throwable {
        receiveRaw(1);
    }

    @Benchmark
    @OperationsPerInvocation(8)
    public void receiveRaw8() throws Throwable {
        receiveRaw(8);
    }

    @Benchmark
    @OperationsPerInvocation(32)
    public void receiveRaw32() throws Throwable {
        receiveRaw(32);
    }

    @Override
    long send(int n) {
        return send(sends, wcs[n], n);
    }

    @Override
    void receive(int n) {
        qp.postReceive(receives, n);
    }

    private long send(SendRequests list, WorkCompletions completions, int n) {
        id = send(qp, cq, list, completions, n, id);
        return id;
    }

    /**
     * Gives the first {@code n} requests of {@code list} the ids after {@code id}, posts them as one
     * list, polls {@code n} at a time and checks each; returns the last id.
     */
    static long send(QueuePair qp, CompletionQueue cq, SendRequests list, WorkCompletions completions, int n, long id) {
        long first = id + 1;
        for (int i = 0; i < n; i++) {
            list.get(i).wrId(++id);
        }
        qp.postSend(list, n);
        pollChecked(cq, completions, first, n);
        return id;
    }

    /** The same with bare downcalls on the provider's linked requests, cut after {@code n}. */
    private long sendRaw(int n) throws Throwable {
        long first = id + 1;
        for (int i = 0; i < n; i++) {
            rawSendWrs.set(ValueLayout.JAVA_LONG, i * sendWrSize, ++id);
        }
        long lastNext = (n - 1) * sendWrSize + WR_NEXT;
        if (n < MAX) {
            rawSendWrs.set(ValueLayout.JAVA_LONG, lastNext, 0L);
        }
        int rc = (int) NullProvider.POST.invokeExact(rawPostSend, rawQp, rawSendWrs, rawBadWr);
        if (n < MAX) {
            rawSendWrs.set(ValueLayout.JAVA_LONG, lastNext, rawSendWrs.address() + n * sendWrSize);
        }
        if (rc != 0) {
            throw new IllegalStateException("post_send returned " + rc);
        }
        pollRaw(first, n);
        return id;
    }

    @Override
    long sendExtended(int n) {
        id = sendExtended(xqp, mr, cq, wcs[n], n, id);
        return id;
    }

    /**
     * {@code n} signaled SENDs of 64 bytes from {@code mr} with the ids after {@code id} in one
     * batch of the extended API, then polled and checked as {@link #send}; returns the last id.
     */
    static long sendExtended(ExtendedQueuePair xqp, MemoryRegion mr, CompletionQueue cq, WorkCompletions completions,
                             int n, long id) {
        long first = id + 1;
        xqp.start();
        for (int i = 0; i < n; i++) {
            xqp.wrId(++id).flags(SendFlags.SIGNALED).send().setSge(mr, 0, 64);
        }
        xqp.complete();
        pollChecked(cq, completions, first, n);
        return id;
    }

    /** The same with bare downcalls through the {@code ibv_qp_ex} function pointers. */
    private long sendExtendedRaw(int n) throws Throwable {
        long first = id + 1;
        NullProvider.WR_VOID.invokeExact(rawWrStart, rawQpx);
        for (int i = 0; i < n; i++) {
            rawQpx.set(ValueLayout.JAVA_LONG, qpxWrId, ++id);
            rawQpx.set(ValueLayout.JAVA_INT, qpxWrFlags, SendFlags.SIGNALED);
            NullProvider.WR_VOID.invokeExact(rawWrSend, rawQpx);
            NullProvider.WR_SET_SGE.invokeExact(rawWrSetSge, rawQpx, NullProvider.LKEY, bufferAddress, 64);
        }
        int rc = (int) NullProvider.WR_COMPLETE.invokeExact(rawWrComplete, rawQpx);
        if (rc != 0) {
            throw new IllegalStateException("wr_complete returned " + rc);
        }
        pollRaw(first, n);
        return id;
    }

    /** Polls the {@code n} completions of the ids from {@code first} on, checking each. */
    static void pollChecked(CompletionQueue cq, WorkCompletions completions, long first, int n) {
        int got = 0;
        while (got < n) {
            int k = cq.poll(completions);
            if (k == 0) {
                throw new IllegalStateException("no completion for wr_id " + (first + got));
            }
            for (int j = 0; j < k; j++) {
                WorkCompletion wc = completions.get(j);
                if (!wc.isSuccess() || wc.wrId() != first + got + j) {
                    throw new IllegalStateException("bad completion " + wc + " for wr_id " + (first + got + j));
                }
            }
            got += k;
        }
    }

    /** Polls the {@code n} completions of the ids from {@code first} on with bare downcalls, checking each. */
    private void pollRaw(long first, int n) throws Throwable {
        int got = 0;
        while (got < n) {
            int k = (int) NullProvider.POLL_CQ.invokeExact(rawPollCq, rawCq, n, rawWc);
            if (k <= 0) {
                throw new IllegalStateException("no completion for wr_id " + (first + got));
            }
            for (int j = 0; j < k; j++) {
                if (rawWc.get(ValueLayout.JAVA_INT, j * NullProvider.WC_SIZE + NullProvider.WC_STATUS) != 0
                        || rawWc.get(ValueLayout.JAVA_LONG, j * NullProvider.WC_SIZE) != first + got + j) {
                    throw new IllegalStateException("bad completion for wr_id " + (first + got + j));
                }
            }
            got += k;
        }
    }

    private void receiveRaw(int n) throws Throwable {
        long lastNext = (n - 1) * recvWrSize + WR_NEXT;
        if (n < MAX) {
            rawRecvWrs.set(ValueLayout.JAVA_LONG, lastNext, 0L);
        }
        int rc = (int) NullProvider.POST.invokeExact(rawPostRecv, rawQp, rawRecvWrs, rawBadWr);
        if (n < MAX) {
            rawRecvWrs.set(ValueLayout.JAVA_LONG, lastNext, rawRecvWrs.address() + n * recvWrSize);
        }
        if (rc != 0) {
            throw new IllegalStateException("post_recv returned " + rc);
        }
    }
}
