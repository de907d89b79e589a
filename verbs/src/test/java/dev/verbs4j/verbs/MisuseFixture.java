package dev.verbs4j.verbs;


import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.EnumMap;
import java.util.Map;
import java.util.function.BooleanSupplier;

/**
 * A fresh set of live verbs objects on the test bed's loopback device for one misuse case, each
 * made when first asked for and the same object afterwards: a protection domain, a completion
 * channel, a classic send CQ on it and a classic receive CQ, an extended CQ on the channel, RC, UC
 * and UD queue pairs created for the extended send API and ready to send (RC and UC connected to
 * themselves), an RC queue pair on a shared receive queue, a memory region, memory windows, an
 * address handle, request batches and a polled completion. Closing the fixture closes the
 * context and the batches; objects a case closed already are fine.
 */
final class MisuseFixture implements AutoCloseable {

    static final int ACCESS = Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE | Access.REMOTE_ATOMIC
            | Access.MW_BIND;
    static final int REGION = 64 * 1024;
    static final int INLINE = 64;

    private static final long RC_OPS = SendOps.RDMA_WRITE | SendOps.RDMA_WRITE_WITH_IMM | SendOps.SEND
            | SendOps.SEND_WITH_IMM | SendOps.RDMA_READ | SendOps.ATOMIC_CMP_AND_SWP | SendOps.ATOMIC_FETCH_AND_ADD
            | SendOps.LOCAL_INV | SendOps.BIND_MW | SendOps.SEND_WITH_INV;
    private static final long UC_OPS = SendOps.RDMA_WRITE | SendOps.RDMA_WRITE_WITH_IMM | SendOps.SEND
            | SendOps.SEND_WITH_IMM;
    private static final long UD_OPS = SendOps.SEND | SendOps.SEND_WITH_IMM;

    final TestBed.Host host = TestBed.loopback();
    final Context ctx = Context.open(host.device());
    private final Arena arena = Arena.ofShared();
    private ProtectionDomain pd;
    private CompletionChannel channel;
    private CompletionQueue cq;
    private CompletionQueue recvCq;
    private CompletionQueue ecq;
    private final Map<QpType, QueuePair> qps = new EnumMap<>(QpType.class);
    private QueuePair srqQp;
    private MemoryRegion mr;
    private final Map<MemoryWindow.Type, MemoryWindow> mws = new EnumMap<>(MemoryWindow.Type.class);
    private SharedReceiveQueue srq;
    private AddressHandle ah;
    private SendRequests sends;
    private ReceiveRequests recvs;
    private WorkCompletions wcs;
    private WorkCompletions flushed;
    private MemorySegment segment;
    private RdmaArena rdmaArena;
    private MemoryRegion arenaRegion;

    ProtectionDomain pd() {
        if (pd == null) {
            pd = ctx.allocateProtectionDomain();
        }
        return pd;
    }

    CompletionChannel channel() {
        if (channel == null) {
            channel = ctx.createCompletionChannel();
        }
        return channel;
    }

    /** The classic completion queue on {@link #channel()}: the send CQ of the queue pairs. */
    CompletionQueue cq() {
        if (cq == null) {
            cq = ctx.createCompletionQueue(64, channel(), 0);
        }
        return cq;
    }

    /** A classic completion queue without a channel: the receive CQ of the queue pairs. */
    CompletionQueue recvCq() {
        if (recvCq == null) {
            recvCq = ctx.createCompletionQueue(64);
        }
        return recvCq;
    }

    /** The extended completion queue, on {@link #channel()}. */
    CompletionQueue ecq() {
        if (ecq == null) {
            ecq = ctx.createExtendedCompletionQueue(64, channel(), 0, ExtendedPoller.STANDARD);
        }
        return ecq;
    }

    ExtendedPoller poller() {
        return ecq().extended();
    }

    /** A queue pair of {@code type} (RC, UC or UD) for the extended send API, ready to send. */
    QueuePair qp(QpType type) {
        QueuePair qp = qps.get(type);
        if (qp == null) {
            long ops = switch (type) {
                case RC -> RC_OPS;
                case UC -> UC_OPS;
                case UD -> UD_OPS;
                default -> throw new IllegalArgumentException(type.toString());
            };
            qp = pd().createQueuePair(QueuePairInit.of(type, cq(), recvCq()).sendOps(ops).maxInlineData(INLINE)
                    .maxSendWr(32).maxRecvWr(32).maxSendSge(2).maxRecvSge(2));
            ready(qp);
            qps.put(type, qp);
        }
        return qp;
    }

    ExtendedQueuePair xqp(QpType type) {
        return qp(type).extended();
    }

    /** An RC queue pair that takes its receive buffers from {@link #srq()}, connected to itself. */
    QueuePair srqQp() {
        if (srqQp == null) {
            srqQp = pd().createQueuePair(QueuePairInit.of(QpType.RC, cq(), recvCq()).sharedReceiveQueue(srq()));
            ready(srqQp);
        }
        return srqQp;
    }

    private void ready(QueuePair qp) {
        if (qp.type() == QpType.UD) {
            qp.init(1);
            qp.readyToReceive();
            qp.readyToSend(0);
        } else {
            qp.connect(1, qp.localEndpoint(host.gidIndex(), 0x10), host.gidIndex(), 0x10);
        }
    }

    /** A region of {@link #REGION} bytes the library allocated (its memory is freed with it). */
    MemoryRegion mr() {
        if (mr == null) {
            mr = pd().allocateRegion(REGION, ACCESS);
        }
        return mr;
    }

    /** An {@link RdmaArena} that lives as long as the fixture unless a case closes it. */
    RdmaArena rdmaArena() {
        if (rdmaArena == null) {
            rdmaArena = RdmaArena.ofShared();
        }
        return rdmaArena;
    }

    /** A region registered over 64 KiB of {@link #rdmaArena()}. */
    MemoryRegion arenaRegion() {
        if (arenaRegion == null) {
            arenaRegion = pd().register(rdmaArena().allocate(REGION, 4096), ACCESS);
        }
        return arenaRegion;
    }

    MemoryWindow mw(MemoryWindow.Type type) {
        return mws.computeIfAbsent(type, t -> pd().allocateMemoryWindow(t));
    }

    SharedReceiveQueue srq() {
        if (srq == null) {
            srq = pd().createSharedReceiveQueue(16, 2);
        }
        return srq;
    }

    /** An address handle to this device's own GID. */
    AddressHandle ah() {
        if (ah == null) {
            ah = pd().createAddressHandle(destination());
        }
        return ah;
    }

    AddressVector destination() {
        return AddressVector.global(1, ctx.queryGid(1, host.gidIndex()), host.gidIndex());
    }

    SendRequests sends() {
        if (sends == null) {
            sends = new SendRequests(4, 2);
        }
        return sends;
    }

    ReceiveRequests recvs() {
        if (recvs == null) {
            recvs = new ReceiveRequests(4, 2);
        }
        return recvs;
    }

    WorkCompletions wcs() {
        if (wcs == null) {
            wcs = new WorkCompletions(8);
        }
        return wcs;
    }

    /** 4 KiB of native memory of an arena that lives as long as the fixture. */
    MemorySegment segment() {
        if (segment == null) {
            segment = arena.allocate(4096, 4096);
            segment.fill((byte) 's');
        }
        return segment;
    }

    /**
     * The completions array that holds one polled completion: a receive flushed (WR_FLUSH_ERR) by
     * moving a fresh RC queue pair to the error state.
     */
    WorkCompletions flushedCompletions() {
        if (flushed == null) {
            CompletionQueue fcq = ctx.createCompletionQueue(4);
            flushOneReceive(pd().createQueuePair(QueuePairInit.of(QpType.RC, fcq)), 77, 64);
            WorkCompletions w = new WorkCompletions(4);
            try {
                awaitFlushed(() -> fcq.poll(w) != 0);
            } catch (AssertionError e) {
                w.close();
                throw e;
            }
            flushed = w;
        }
        return flushed;
    }

    /**
     * The poller of {@link #ecq()} in the middle of polling: {@code start()} returned true on a
     * receive flushed into it.
     */
    ExtendedPoller pollingPoller() {
        flushOneReceive(pd().createQueuePair(QueuePairInit.of(QpType.RC, cq(), ecq())), 78, 64);
        ExtendedPoller poller = poller();
        awaitFlushed(poller::start);
        return poller;
    }

    /**
     * Posts one receive (work request {@code wrId}, the first {@code length} bytes of {@link
     * #mr()}) on the fresh queue pair {@code qp} and moves it to the error state, which flushes
     * the receive.
     */
    void flushOneReceive(QueuePair qp, long wrId, int length) {
        qp.init(1);
        try (ReceiveRequests r = new ReceiveRequests(1, 1)) {
            r.get(0).wrId(wrId).sge(mr(), 0, length);
            qp.postReceive(r, 1);
        }
        qp.toError();
    }

    /** Spins until {@code polled} is true (it took the flushed completion), for at most 5 s. */
    static void awaitFlushed(BooleanSupplier polled) {
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (!polled.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no flush completion within 5 s");
            }
            Thread.onSpinWait();
        }
    }

    /** The polled completion of {@link #flushedCompletions()}. */
    WorkCompletion flushedCompletion() {
        return flushedCompletions().get(0);
    }

    @Override
    public void close() {
        RuntimeException failure = null;
        for (AutoCloseable c : new AutoCloseable[]{sends, recvs, wcs, flushed, ctx, rdmaArena, arena}) {
            try {
                if (c != null) {
                    c.close();
                }
            } catch (IllegalStateException alreadyClosed) {
                // a case closed it
            } catch (Exception e) {
                if (failure == null) {
                    failure = new IllegalStateException("closing the fixture failed", e);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }
}
