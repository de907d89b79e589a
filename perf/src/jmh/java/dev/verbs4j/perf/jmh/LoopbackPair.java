package dev.verbs4j.perf.jmh;

import dev.verbs4j.verbs.Access;
import dev.verbs4j.verbs.CompletionQueue;
import dev.verbs4j.verbs.Context;
import dev.verbs4j.verbs.MemoryRegion;
import dev.verbs4j.verbs.ProtectionDomain;
import dev.verbs4j.verbs.QpType;
import dev.verbs4j.verbs.QueuePair;
import dev.verbs4j.verbs.QueuePairInit;

/**
 * The loopback benchmarks' fixture: two RC queue pairs of one context on the loopback device
 * ({@code VERBS4J_LO_DEV}, else {@code rxe_lo}) connected to each other, each with its own
 * completion queue, and two regions of 4096 bytes: {@link #mrA} for a's requests, {@link #mrB}
 * (also remotely writable) the target of a's RDMA WRITEs. The context owns every object here;
 * {@link #close} closes it and with it the rest.
 */
final class LoopbackPair implements AutoCloseable {

    final Context context;
    /** The sending queue pair and its completion queue. */
    final QueuePair a;
    final CompletionQueue cqA;
    final MemoryRegion mrA;
    final MemoryRegion mrB;

    /**
     * Opens the device and connects a (a queue of {@code cqA} entries, {@code sendDepth} sends)
     * to b (a queue of {@code cqB} entries, {@code recvDepthB} receives); each holds one request
     * of the other kind.
     */
    LoopbackPair(int cqA, int sendDepth, int cqB, int recvDepthB) {
        String device = System.getenv().getOrDefault("VERBS4J_LO_DEV", "rxe_lo");
        context = Context.open(device);
        ProtectionDomain pd = context.allocateProtectionDomain();
        this.cqA = context.createCompletionQueue(cqA);
        CompletionQueue queueB = context.createCompletionQueue(cqB);
        a = pd.createQueuePair(QueuePairInit.of(QpType.RC, this.cqA).maxSendWr(sendDepth).maxRecvWr(1));
        QueuePair b = pd.createQueuePair(QueuePairInit.of(QpType.RC, queueB).maxSendWr(1).maxRecvWr(recvDepthB));
        a.connect(1, b.localEndpoint(0), 0);
        b.connect(1, a.localEndpoint(0), 0);
        mrA = pd.allocateRegion(4096, Access.LOCAL_WRITE);
        mrB = pd.allocateRegion(4096, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
    }

    @Override
    public void close() {
        context.close();
    }
}
