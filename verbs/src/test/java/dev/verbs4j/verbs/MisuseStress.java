package dev.verbs4j.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * A seeded random stress of shared verbs objects: several threads post sends (RDMA WRITE and READ
 * on RC pairs, SEND on UD), post receives, poll, refill their batches and a shared one, close and
 * replace regions, address handles and whole queue pairs, and reconnect queue pairs, all at once;
 * at the end the context is closed while they still run. Every exception must be a clear refusal;
 * every thread must end. The choices of each thread follow from the seed (the interleaving does
 * not). Prints what it did on standard error.
 */
final class MisuseStress implements AutoCloseable {

    private static final int PAIRS = 2;
    private static final int REGIONS = 4;
    private static final int HANDLES = 2;

    private final long seed;
    private final TestBed.Host host = TestBed.loopback();
    private final Context ctx = Context.open(host.device());
    private final ProtectionDomain pd = ctx.allocateProtectionDomain();
    private final CompletionQueue[] cqs = {ctx.createCompletionQueue(4096), ctx.createCompletionQueue(4096)};
    /** Per RC pair: {a, b}, replaced as a whole. */
    private final AtomicReferenceArray<QueuePair[]> pairs = new AtomicReferenceArray<>(PAIRS);
    private final MemoryRegion target = pd.allocateRegion(1 << 16, MisuseFixture.ACCESS);
    private final QueuePair udA;
    private final QueuePair udB;
    private final AtomicReferenceArray<MemoryRegion> regions = new AtomicReferenceArray<>(REGIONS);
    private final List<RdmaArena> arenas = java.util.Collections.synchronizedList(new ArrayList<>());
    private final AtomicReferenceArray<AddressHandle> handles = new AtomicReferenceArray<>(HANDLES);
    private final SendRequests shared = new SendRequests(2, 2);
    private final Map<String, AtomicLong> counts = new ConcurrentHashMap<>();
    private final AtomicBoolean stop = new AtomicBoolean();
    private final List<Throwable> failures = java.util.Collections.synchronizedList(new ArrayList<>());

    MisuseStress(long seed) {
        this.seed = seed;
        for (int k = 0; k < PAIRS; k++) {
            pairs.set(k, newPair());
        }
        udA = newQp(QpType.UD);
        udB = newQp(QpType.UD);
        for (QueuePair qp : new QueuePair[]{udA, udB}) {
            qp.init(1);
            qp.readyToReceive();
            qp.readyToSend(0);
        }
        for (int i = 0; i < REGIONS; i++) {
            regions.set(i, newRegion(i % 2 == 0));
        }
        for (int i = 0; i < HANDLES; i++) {
            handles.set(i, pd.createAddressHandle(AddressVector.global(1, ctx.queryGid(1, host.gidIndex()), host.gidIndex())));
        }
        shared.reset(0).opcode(Opcode.RDMA_WRITE).sge(regions.get(0), 0, 64).rdma(target.remoteAddress(), target.rkey());
    }

    private QueuePair newQp(QpType type) {
        return pd.createQueuePair(QueuePairInit.of(type, cqs[0], cqs[1]).maxSendWr(64).maxRecvWr(64).maxSendSge(2)
                .maxRecvSge(2).maxInlineData(MisuseFixture.INLINE));
    }

    private QueuePair[] newPair() {
        QueuePair a = newQp(QpType.RC);
        QueuePair b = newQp(QpType.RC);
        connect(a, b);
        return new QueuePair[]{a, b};
    }

    private void connect(QueuePair a, QueuePair b) {
        MisuseLink.connectToEachOther(a, b, host.gidIndex(), 1, 2);
    }

    private MemoryRegion newRegion(boolean viaArena) {
        if (!viaArena) {
            return pd.allocateRegion(8192, MisuseFixture.ACCESS);
        }
        RdmaArena arena = RdmaArena.ofShared();
        arenas.add(arena);
        return pd.register(arena.allocate(8192, 4096), MisuseFixture.ACCESS);
    }

    /** Runs {@code threads} threads for {@code duration}, then closes the context under them. */
    void run(int threads, Duration duration) throws Throwable {
        List<Thread> all = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            Random random = new Random(seed * 1_000_003L + i);
            all.add(Thread.ofPlatform().daemon().name("misuse-stress-" + i).start(() -> work(random)));
        }
        Thread.sleep(duration.toMillis());
        count("close the context under the threads");
        Throwable t = MisuseExpect.thrownBy(() -> {
            ctx.close();
            return null;
        });
        if (t != null && !MisuseExpect.isClearRefusal(t)) {
            failures.add(new AssertionError("closing the context threw " + t, t));
        }
        Thread.sleep(20);
        stop.set(true);
        for (Thread th : all) {
            th.join(10_000);
            if (th.isAlive()) {
                StringBuilder stack = new StringBuilder();
                for (StackTraceElement e : th.getStackTrace()) {
                    stack.append("\n\tat ").append(e);
                }
                throw new AssertionError(th.getName() + " still runs 10 s after the stress ended:" + stack);
            }
        }
        System.err.println("stress seed " + seed + ": " + new TreeMap<>(counts));
        if (!failures.isEmpty()) {
            AssertionError e = new AssertionError(failures.size() + " unclear exception(s), the first: " + failures.get(0), failures.get(0));
            failures.stream().skip(1).limit(4).forEach(e::addSuppressed);
            throw e;
        }
    }

    private void count(String what) {
        counts.computeIfAbsent(what, k -> new AtomicLong()).incrementAndGet();
    }

    private void work(Random r) {
        try (SendRequests mine = new SendRequests(2, 2); ReceiveRequests recvs = new ReceiveRequests(2, 2);
             WorkCompletions wcs = new WorkCompletions(16); Arena scratch = Arena.ofConfined()) {
            MemorySegment inline = scratch.allocate(48);
            while (!stop.get()) {
                int op = r.nextInt(1000);
                String name = op < 300 ? "post send" : op < 450 ? "post receive" : op < 700 ? "poll" : op < 750 ? "close region"
                        : op < 780 ? "close address handle" : op < 850 ? "refill" : op < 930 ? "post the shared batch"
                        : op < 960 ? "request notify" : op < 990 ? "reconnect a pair" : "replace a pair";
                try {
                    switch (name) {
                        case "post send" -> postSend(r, mine, inline);
                        case "post receive" -> postReceive(r, recvs);
                        case "poll" -> cqs[r.nextInt(2)].poll(wcs);
                        case "close region" -> replaceRegion(r);
                        case "close address handle" -> replaceHandle(r);
                        case "refill" -> fill(r, mine.reset(r.nextInt(2)), inline, pairs.get(r.nextInt(PAIRS))[0]);
                        case "post the shared batch" -> {
                            if (r.nextInt(4) == 0) {
                                fill(r, shared.reset(0), inline, pairs.get(0)[0]);
                            }
                            pairs.get(r.nextInt(PAIRS))[0].postSend(shared, 1);
                        }
                        case "request notify" -> cqs[r.nextInt(2)].requestNotify(r.nextBoolean());
                        case "reconnect a pair" -> {
                            QueuePair[] p = pairs.get(r.nextInt(PAIRS));
                            p[0].reset();
                            p[1].reset();
                            connect(p[0], p[1]);
                        }
                        default -> {
                            int k = r.nextInt(PAIRS);
                            QueuePair[] old = pairs.getAndSet(k, newPair());
                            old[0].close();
                            old[1].close();
                        }
                    }
                    count(name);
                } catch (Throwable t) {
                    if (MisuseExpect.isClearRefusal(t)) {
                        count(name + ": " + t.getClass().getSimpleName());
                    } else {
                        failures.add(new AssertionError(name + " threw " + t, t));
                        if (failures.size() > 20) {
                            return;
                        }
                    }
                }
            }
        } catch (Throwable t) {
            if (!MisuseExpect.isClearRefusal(t)) {
                failures.add(t);
            }
        }
    }

    private void fill(Random r, SendRequest req, MemorySegment inline, QueuePair qp) {
        MemoryRegion mr = regions.get(r.nextInt(REGIONS));
        int op = r.nextInt(4);
        req.wrId(r.nextLong()).flags(r.nextInt(3) == 0 ? SendFlags.SIGNALED : 0);
        if (op == 0) {
            req.opcode(Opcode.RDMA_WRITE).inline(inline).rdma(target.remoteAddress(), target.rkey());
        } else {
            req.opcode(op == 1 ? Opcode.RDMA_READ : Opcode.RDMA_WRITE).sge(mr, r.nextInt(4) * 1024L, 64 + r.nextInt(512))
                    .rdma(target.remoteAddress() + r.nextInt(8) * 1024L, target.rkey());
        }
    }

    private void postSend(Random r, SendRequests mine, MemorySegment inline) {
        if (r.nextInt(4) == 0) {
            mine.reset(0).wrId(7).opcode(Opcode.SEND).flags(r.nextBoolean() ? SendFlags.SIGNALED : 0)
                    .sge(regions.get(r.nextInt(REGIONS)), 0, 256).ud(handles.get(r.nextInt(HANDLES)), udB.qpNum(), QueuePair.DEFAULT_QKEY);
            udA.postSend(mine, 1);
            return;
        }
        QueuePair qp = pairs.get(r.nextInt(PAIRS))[0];
        int n = 1 + r.nextInt(2);
        for (int i = 0; i < n; i++) {
            fill(r, mine.reset(i), inline, qp);
        }
        qp.postSend(mine, n);
    }

    private void postReceive(Random r, ReceiveRequests recvs) {
        boolean ud = r.nextInt(3) == 0;
        recvs.get(0).wrId(r.nextLong()).sge(regions.get(r.nextInt(REGIONS)), 0, ud ? 40 + 256 : 1024);
        (ud ? udB : pairs.get(r.nextInt(PAIRS))[1]).postReceive(recvs, 1);
    }

    private void replaceRegion(Random r) {
        int i = r.nextInt(REGIONS);
        MemoryRegion old = regions.getAndSet(i, newRegion(r.nextBoolean()));
        old.close();
    }

    private void replaceHandle(Random r) {
        int i = r.nextInt(HANDLES);
        AddressHandle old = handles.getAndSet(i,
                pd.createAddressHandle(AddressVector.global(1, ctx.queryGid(1, host.gidIndex()), host.gidIndex())));
        old.close();
    }

    @Override
    public void close() {
        ctx.close();
        shared.close();
        synchronized (arenas) {
            for (RdmaArena a : arenas) {
                a.close();
            }
        }
    }
}
