package dev.verbs4j.verbs;

import java.util.ArrayList;
import java.util.List;

import static dev.verbs4j.verbs.MisuseSubject.itself;
import static dev.verbs4j.verbs.MisuseSubject.via;

/**
 * Every public verbs type the misuse suite calls methods on, with the ways each ends up closed:
 * contexts, protection domains, regions, windows, completion queues (classic and extended) and
 * channels, queue pairs (RC, UC, UD, on an SRQ), the extended QP and CQ APIs, shared receive
 * queues, address handles, XRC domains, and the request and completion batches with their views.
 */
final class MisuseSubjects {

    private static final MisuseSubject.Closer CONTEXT = via("its context", f -> f.ctx);
    private static final MisuseSubject.Closer PD = via("its protection domain", MisuseFixture::pd);
    private static final MisuseSubject.Closer CHANNEL = via("its completion channel", MisuseFixture::channel);
    private static final MisuseSubject.Closer SEND_CQ = via("its send CQ", MisuseFixture::cq);
    private static final MisuseSubject.Closer RECV_CQ = via("its receive CQ", MisuseFixture::recvCq);

    private MisuseSubjects() {
    }

    /** The subjects of the after-close cases. */
    static List<MisuseSubject> all() {
        List<MisuseSubject> all = new ArrayList<>();
        all.add(new MisuseSubject("Context", Context.class, f -> f.ctx, List.of(itself())));
        all.add(new MisuseSubject("ProtectionDomain", ProtectionDomain.class, MisuseFixture::pd, List.of(itself(), CONTEXT)));
        all.add(new MisuseSubject("MemoryRegion", MemoryRegion.class, MisuseFixture::mr, List.of(itself(), PD, CONTEXT)));
        all.add(new MisuseSubject("MemoryRegion[RdmaArena]", MemoryRegion.class, MisuseFixture::arenaRegion,
                List.of(itself(), via("its RdmaArena", MisuseFixture::rdmaArena), PD)));
        for (MemoryWindow.Type t : MemoryWindow.Type.values()) {
            all.add(new MisuseSubject("MemoryWindow[" + t + "]", MemoryWindow.class, f -> f.mw(t), List.of(itself(), PD, CONTEXT)));
        }
        all.add(new MisuseSubject("CompletionQueue[classic]", CompletionQueue.class, MisuseFixture::cq,
                List.of(itself(), CHANNEL, CONTEXT)));
        all.add(new MisuseSubject("CompletionQueue[extended]", CompletionQueue.class, MisuseFixture::ecq,
                List.of(itself(), CHANNEL, CONTEXT)));
        all.add(new MisuseSubject("CompletionChannel", CompletionChannel.class, MisuseFixture::channel, List.of(itself(), CONTEXT)));
        for (QpType t : List.of(QpType.RC, QpType.UC, QpType.UD)) {
            all.add(new MisuseSubject("QueuePair[" + t + "]", QueuePair.class, f -> f.qp(t),
                    List.of(itself(), PD, SEND_CQ, RECV_CQ, CONTEXT)));
        }
        all.add(new MisuseSubject("QueuePair[RC on an SRQ]", QueuePair.class, MisuseFixture::srqQp,
                List.of(via("its shared receive queue", MisuseFixture::srq))));
        for (QpType t : List.of(QpType.RC, QpType.UC, QpType.UD)) {
            all.add(new MisuseSubject("ExtendedQueuePair[" + t + "]", ExtendedQueuePair.class, f -> f.xqp(t),
                    List.of(via("its queue pair", f -> f.qp(t)), PD, SEND_CQ, CONTEXT)));
        }
        all.add(new MisuseSubject("ExtendedQueuePair[RC, batch open]", ExtendedQueuePair.class, f -> openBatch(f, QpType.RC),
                List.of(via("its queue pair", f -> f.qp(QpType.RC)), CONTEXT)));
        all.add(new MisuseSubject("ExtendedPoller", ExtendedPoller.class, MisuseFixture::poller,
                List.of(via("its completion queue", MisuseFixture::ecq), CHANNEL, CONTEXT)));
        all.add(new MisuseSubject("ExtendedPoller[polling]", ExtendedPoller.class, MisuseFixture::pollingPoller,
                List.of(via("its completion queue", MisuseFixture::ecq), CONTEXT)));
        all.add(new MisuseSubject("SharedReceiveQueue", SharedReceiveQueue.class, MisuseFixture::srq, List.of(itself(), PD, CONTEXT)));
        all.add(new MisuseSubject("AddressHandle", AddressHandle.class, MisuseFixture::ah, List.of(itself(), PD, CONTEXT)));
        // XrcDomain: not a generated subject (Soft-RoCE has no XRC, and a case may not skip); see MisuseCases.xrc
        all.add(new MisuseSubject("SendRequests", SendRequests.class, MisuseFixture::sends, List.of(itself())));
        all.add(new MisuseSubject("ReceiveRequests", ReceiveRequests.class, MisuseFixture::recvs, List.of(itself())));
        all.add(new MisuseSubject("WorkCompletions", WorkCompletions.class, MisuseFixture::wcs, List.of(itself())));
        all.add(new MisuseSubject("SendRequest", SendRequest.class, f -> f.sends().reset(0),
                List.of(via("its batch", MisuseFixture::sends))));
        all.add(new MisuseSubject("ReceiveRequest", ReceiveRequest.class, f -> f.recvs().get(0),
                List.of(via("its batch", MisuseFixture::recvs))));
        all.add(new MisuseSubject("WorkCompletion", WorkCompletion.class, MisuseFixture::flushedCompletion,
                List.of(via("its batch", MisuseFixture::flushedCompletions))));
        return all;
    }

    /** The subjects whose methods take objects that can be closed, live, for the closed-argument cases. */
    static List<MisuseSubject> withArguments() {
        List<MisuseSubject> all = new ArrayList<>();
        for (MisuseSubject s : all()) {
            if (s.type() == ExtendedQueuePair.class) {
                continue; // below, with a batch open so that the setters get as far as their arguments
            }
            if (s.name().equals("MemoryRegion[RdmaArena]") || s.name().equals("ExtendedPoller[polling]")) {
                continue;
            }
            all.add(s);
        }
        for (QpType t : List.of(QpType.RC, QpType.UC, QpType.UD)) {
            all.add(new MisuseSubject("ExtendedQueuePair[" + t + ", batch open]", ExtendedQueuePair.class,
                    f -> openBatch(f, t), List.of()));
        }
        return all;
    }

    /** The extended QP of {@code type} with a batch started and a SEND added. */
    private static ExtendedQueuePair openBatch(MisuseFixture f, QpType type) {
        ExtendedQueuePair x = f.xqp(type);
        x.start();
        x.wrId(1).flags(0).send();
        return x;
    }
}
