package dev.verbs4j.rdmacm;

import dev.verbs4j.verbs.CompletionQueue;
import dev.verbs4j.verbs.ProtectionDomain;
import dev.verbs4j.verbs.QpType;
import dev.verbs4j.verbs.QueuePair;
import dev.verbs4j.verbs.QueuePairInit;

import java.net.InetSocketAddress;
import java.time.Duration;

import static dev.verbs4j.rdmacm.CmIdDeviceTest.expect;

/** Test fixture: an id with a protection domain, one completion queue and an RC queue pair on its device. */
record RcEnd(CmId id, ProtectionDomain pd, CompletionQueue cq, QueuePair qp) implements AutoCloseable {

    /** Gives {@code id} (bound to a device) an RC queue pair of {@code depth} sends and receives. */
    static RcEnd on(CmId id, int depth) {
        ProtectionDomain pd = id.context().allocateProtectionDomain();
        CompletionQueue cq = id.context().createCompletionQueue(2 * depth);
        QueuePair qp = id.createQueuePair(pd, QueuePairInit.of(QpType.RC, cq).maxSendWr(depth).maxRecvWr(depth));
        return new RcEnd(id, pd, cq, qp);
    }

    /** A new id on {@code channel} with address and route to {@code destination} resolved, from {@code source} (or any). */
    static CmId resolved(EventChannel channel, InetSocketAddress source, InetSocketAddress destination, Duration wait) {
        CmId id = channel.createId(PortSpace.TCP);
        id.resolveAddress(source, destination, wait);
        expect(channel, CmEventType.ADDR_RESOLVED);
        id.resolveRoute(wait);
        expect(channel, CmEventType.ROUTE_RESOLVED);
        return id;
    }

    @Override
    public void close() {
        id.close();
        pd.close();
        cq.close();
    }
}
