package dev.verbs4j.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

import static dev.verbs4j.verbs.MisuseRace.After.ENDS;
import static dev.verbs4j.verbs.MisuseRace.After.REFUSED;
import static dev.verbs4j.verbs.MisuseRace.After.UNAFFECTED;

/**
 * The concurrent-close family of the misuse suite: every data-path call (post send and receive,
 * SRQ receive, poll, request notify, the extended QP and CQ APIs, waiting on a completion channel
 * and for asynchronous events) loops on one thread while another closes the call's object, its
 * parent, or an object the call refers to (region, address handle, window, the batch, the source
 * of inline data); see {@link MisuseRace}. And one shared batch posted, or filled, from two
 * threads at once: one of them is refused ("being posted").
 */
final class MisuseConcurrentCloseCases {

    static final String FAMILY = "concurrent close";

    private MisuseConcurrentCloseCases() {
    }

    /** The objects of one round, to pick the target from by name. */
    private record Made(MisuseRace.Round round, Map<String, AutoCloseable> targets) {
    }

    static List<MisuseCase> all() {
        List<MisuseCase> cases = new ArrayList<>();
        // classic posts
        add(cases, "RC postSend (RDMA WRITE)", List.of("the queue pair", "its protection domain", "its send CQ", "its context"),
                List.of("the MemoryRegion of its entry", "the SendRequests batch"), List.of(), MisuseConcurrentCloseCases::rcWrite);
        add(cases, "UD postSend (SEND)", List.of("the queue pair", "its context"),
                List.of("its AddressHandle", "the MemoryRegion of its entry"), List.of(), MisuseConcurrentCloseCases::udSend);
        add(cases, "RC postSend of inline data filled each time", List.of(), List.of("the inline source's arena"), List.of(),
                f -> inlineSend(f, true));
        add(cases, "RC postSend of inline data filled once", List.of(), List.of(), List.of("the inline source's arena"),
                f -> inlineSend(f, false));
        add(cases, "RC postSend (BIND_MW)", List.of(), List.of("its MemoryWindow", "its MemoryRegion"), List.of(),
                MisuseConcurrentCloseCases::bindLoop);
        add(cases, "RC postReceive", List.of("the queue pair", "its receive CQ", "its protection domain", "its context"),
                List.of("the MemoryRegion of its entry", "the ReceiveRequests batch"), List.of(), MisuseConcurrentCloseCases::receive);
        add(cases, "SRQ postReceive", List.of("the shared receive queue", "its protection domain", "its context"),
                List.of("the MemoryRegion of its entry", "the ReceiveRequests batch"), List.of(), MisuseConcurrentCloseCases::srqReceive);
        // completion queues and channels
        add(cases, "poll", List.of("the completion queue", "its completion channel", "its context"),
                List.of("the WorkCompletions batch"), List.of(), MisuseConcurrentCloseCases::poll);
        add(cases, "requestNotify", List.of("the completion queue", "its completion channel", "its context"), List.of(), List.of(),
                MisuseConcurrentCloseCases::requestNotify);
        add(cases, "CompletionChannel.await", List.of("the completion channel", "its context"), List.of(), List.of(),
                f -> channelWait(f, true));
        add(cases, "CompletionChannel.tryGetEvent", List.of("the completion channel", "its context"), List.of(), List.of(),
                f -> channelWait(f, false));
        add(cases, "Context.awaitAsyncEvent", List.of("its context"), List.of(), List.of(), MisuseConcurrentCloseCases::asyncEvents);
        // the extended APIs
        add(cases, "ExtendedQueuePair RC start/rdmaWrite/setSge/complete", List.of("the queue pair", "its send CQ",
                        "its protection domain", "its context"), List.of("the MemoryRegion of its entry"), List.of(),
                MisuseConcurrentCloseCases::extendedWrite);
        add(cases, "ExtendedQueuePair UD start/send/setUdAddress/complete", List.of("the queue pair"), List.of("its AddressHandle"),
                List.of(), MisuseConcurrentCloseCases::extendedUd);
        add(cases, "ExtendedQueuePair RC start/send/setInlineData/complete", List.of(), List.of(), List.of("the inline source's arena"),
                MisuseConcurrentCloseCases::extendedInline);
        add(cases, "ExtendedPoller start/next/reads/end", List.of("the completion queue", "its completion channel", "its context"),
                List.of(), List.of(), MisuseConcurrentCloseCases::extendedPoll);
        add(cases, "RC postSend with the INLINE flag over a MemoryRegion", List.of(), List.of("the MemoryRegion of its entry"),
                List.of(), MisuseConcurrentCloseCases::inlineFlagSend);
        add(cases, "completion events (requestNotify, a signaled SEND, CompletionChannel.await)", List.of("its context"),
                List.of("the completion queue", "the queue pair"), List.of(), f -> events(f, false));
        add(cases, "extended completion events (requestNotify, a signaled SEND, CompletionChannel.await, a polling pass)",
                List.of("its context"), List.of("the completion queue", "the queue pair"), List.of(), f -> events(f, true));
        add(cases, "QueuePair reset and connect", List.of("the queue pair", "its protection domain", "its context"), List.of(),
                List.of(), MisuseConcurrentCloseCases::reconnect);
        creations(cases);
        cases.add(sharedBatch(true));
        cases.add(sharedBatch(false));
        return cases;
    }

    private static void add(List<MisuseCase> cases, String call, List<String> ends, List<String> refused, List<String> unaffected,
                            Function<String, Made> make) {
        for (String t : ends) {
            cases.add(race(call, t, ENDS, make));
        }
        for (String t : refused) {
            cases.add(race(call, t, REFUSED, make));
        }
        for (String t : unaffected) {
            cases.add(race(call, t, UNAFFECTED, make));
        }
    }

    private static MisuseCase race(String call, String target, MisuseRace.After after, Function<String, Made> make) {
        String name = call + " in a loop while closing " + target;
        return MisuseCase.of(FAMILY, name, () -> MisuseRace.run(name, name.hashCode(), after, () -> {
            Made o = make.apply(target);
            AutoCloseable t = o.targets().get(target);
            if (t == null) {
                MisuseRace.quietly(o.round().cleanup());
                throw new AssertionError("no target '" + target + "' for " + call);
            }
            return new MisuseRace.Round(o.round().call(), t, o.round().cleanup(), o.round().check());
        }));
    }

    private static Made rcWrite(String target) {
        MisuseLink link = MisuseLink.open(QpType.RC);
        MemoryRegion x = link.pd.allocateRegion(4096, MisuseFixture.ACCESS);
        SendRequests sends = new SendRequests(1, 1);
        sends.reset(0).opcode(Opcode.RDMA_WRITE).sge(x, 0, 64).rdma(link.mrB.remoteAddress(), link.mrB.rkey());
        return new Made(new MisuseRace.Round(() -> link.a.postSend(sends, 1), null, closing(sends, link)), Map.of(
                "the queue pair", link.a, "its protection domain", link.pd, "its send CQ", link.sendCq, "its context", link.ctx,
                "the MemoryRegion of its entry", x, "the SendRequests batch", sends));
    }

    private static Made udSend(String target) {
        MisuseLink link = MisuseLink.open(QpType.UD);
        MemoryRegion x = link.pd.allocateRegion(4096, MisuseFixture.ACCESS);
        AddressHandle ah = link.pd.createAddressHandle(link.destination());
        SendRequests sends = new SendRequests(1, 1);
        sends.reset(0).opcode(Opcode.SEND).sge(x, 0, 64).ud(ah, link.b.qpNum(), QueuePair.DEFAULT_QKEY);
        return new Made(new MisuseRace.Round(() -> link.a.postSend(sends, 1), null, closing(sends, link)), Map.of(
                "the queue pair", link.a, "its context", link.ctx, "its AddressHandle", ah, "the MemoryRegion of its entry", x));
    }

    private static Made inlineSend(String target, boolean refill) {
        MisuseLink link = MisuseLink.open(QpType.RC);
        Arena source = Arena.ofShared();
        MemorySegment data = source.allocate(1 << 20).asSlice((1 << 20) - 48, 48);
        data.fill((byte) 'i');
        SendRequests sends = new SendRequests(1, 1);
        MisuseExpect.Action fill = () -> sends.reset(0).opcode(Opcode.RDMA_WRITE).inline(data)
                .rdma(link.mrB.remoteAddress(), link.mrB.rkey());
        unchecked(fill);
        MisuseExpect.Action call = refill ? () -> {
            fill.run();
            link.a.postSend(sends, 1);
        } : () -> link.a.postSend(sends, 1);
        return new Made(new MisuseRace.Round(call, null, closing(sends, link, source)), Map.of("the inline source's arena", source));
    }

    private static Made inlineFlagSend(String target) {
        MisuseLink link = MisuseLink.open(QpType.RC);
        // 1 MiB: its memory is unmapped when the region closes, so a read after that faults
        MemoryRegion x = link.pd.allocateRegion(1 << 20, MisuseFixture.ACCESS);
        SendRequests sends = new SendRequests(1, 1);
        sends.reset(0).opcode(Opcode.RDMA_WRITE).flags(SendFlags.INLINE).sge(x, (1 << 20) - 48, 48)
                .rdma(link.mrB.remoteAddress(), link.mrB.rkey());
        return new Made(new MisuseRace.Round(() -> link.a.postSend(sends, 1), null, closing(sends, link)),
                Map.of("the MemoryRegion of its entry", x));
    }

    /**
     * Completion events in a loop: arm the sender's queue, send signaled, wait on the channel for
     * the event and poll; closing the queue must not wait for ever for an event taken meanwhile.
     */
    private static Made events(String target, boolean extended) {
        MisuseLink link = MisuseLink.open(QpType.RC, init -> { }, c -> extended
                ? c.createExtendedCompletionQueue(256, c.createCompletionChannel(), 0, ExtendedPoller.STANDARD)
                : c.createCompletionQueue(256, c.createCompletionChannel(), 0));
        CompletionChannel channel = link.sendCq.channel();
        WorkCompletions wcs = new WorkCompletions(8);
        SendRequests sends = new SendRequests(1, 1);
        sends.reset(0).opcode(Opcode.RDMA_WRITE).flags(SendFlags.SIGNALED).sge(link.mrA, 0, 64)
                .rdma(link.mrB.remoteAddress(), link.mrB.rkey());
        MisuseExpect.Action call = () -> {
            try {
                link.sendCq.requestNotify(false);
                link.a.postSend(sends, 1);
            } finally {
                channel.await(Duration.ofMillis(5));
                if (extended && !link.sendCq.isClosed()) {
                    ExtendedPoller p = link.sendCq.extended();
                    if (p.start()) {
                        p.end();
                    }
                } else if (!link.sendCq.isClosed()) {
                    link.sendCq.poll(wcs);
                }
            }
        };
        return new Made(new MisuseRace.Round(call, null, closing(sends, wcs, link)), Map.of("its context", link.ctx,
                "the completion queue", link.sendCq, "the queue pair", link.a));
    }

    private static Made reconnect(String target) {
        MisuseLink link = MisuseLink.open(QpType.RC);
        int gid = link.host.gidIndex();
        QueuePairEndpoint eb = link.b.localEndpoint(gid, 2);
        MisuseExpect.Action call = () -> {
            link.a.reset();
            link.a.connect(1, eb, gid, 1);
        };
        return new Made(new MisuseRace.Round(call, null, link), Map.of("the queue pair", link.a, "its protection domain", link.pd,
                "its context", link.ctx));
    }

    /** A creation of a child object from the fixture's objects. */
    private record Creation(String name, String parent, Function<MisuseFixture, AutoCloseable> parentOf,
                            Function<MisuseFixture, NativeResource> create) {
    }

    /**
     * Objects created in a loop while their parent closes: the creation holds the parent open or is
     * refused, and once the close returned every object created is closed, none left over closed
     * native parents.
     */
    private static void creations(List<MisuseCase> cases) {
        List<Creation> all = List.of(
                new Creation("ProtectionDomain.allocateRegion", "its protection domain", MisuseFixture::pd,
                        f -> f.pd().allocateRegion(4096, MisuseFixture.ACCESS)),
                new Creation("ProtectionDomain.register of RdmaArena memory", "its protection domain", MisuseFixture::pd,
                        f -> f.pd().register(f.rdmaArena().allocate(4096, 4096), MisuseFixture.ACCESS)),
                new Creation("ProtectionDomain.createQueuePair", "its protection domain", MisuseFixture::pd,
                        f -> f.pd().createQueuePair(QueuePairInit.of(QpType.RC, f.cq(), f.recvCq()))),
                new Creation("ProtectionDomain.createQueuePair", "its completion queue", MisuseFixture::recvCq,
                        f -> f.pd().createQueuePair(QueuePairInit.of(QpType.RC, f.cq(), f.recvCq()))),
                new Creation("ProtectionDomain.createAddressHandle", "its protection domain", MisuseFixture::pd,
                        f -> f.pd().createAddressHandle(f.destination())),
                new Creation("ProtectionDomain.allocateMemoryWindow", "its protection domain", MisuseFixture::pd,
                        f -> f.pd().allocateMemoryWindow(MemoryWindow.Type.TYPE_2)),
                new Creation("ProtectionDomain.createSharedReceiveQueue", "its protection domain", MisuseFixture::pd,
                        f -> f.pd().createSharedReceiveQueue(4, 1)),
                new Creation("Context.allocateProtectionDomain", "its context", f -> f.ctx, f -> f.ctx.allocateProtectionDomain()),
                new Creation("Context.createCompletionQueue", "its context", f -> f.ctx, f -> f.ctx.createCompletionQueue(4)),
                new Creation("Context.createCompletionQueue on a channel", "the channel", MisuseFixture::channel,
                        f -> f.ctx.createCompletionQueue(4, f.channel(), 0)),
                new Creation("Context.createExtendedCompletionQueue on a channel", "the channel", MisuseFixture::channel,
                        f -> f.ctx.createExtendedCompletionQueue(4, f.channel(), 0, ExtendedPoller.STANDARD)),
                new Creation("Context.createCompletionChannel", "its context", f -> f.ctx, f -> f.ctx.createCompletionChannel()));
        for (Creation c : all) {
            String name = c.name() + " in a loop while closing " + c.parent();
            cases.add(MisuseCase.of(FAMILY, name, () -> MisuseRace.run(name, name.hashCode(), REFUSED, () -> {
                MisuseFixture f = new MisuseFixture();
                AutoCloseable parent = c.parentOf().apply(f);
                c.create().apply(f).close(); // the parent's own objects exist before the race
                List<NativeResource> created = new java.util.concurrent.CopyOnWriteArrayList<>();
                MisuseExpect.Action check = () -> {
                    for (NativeResource r : created) {
                        if (!r.isClosed()) {
                            throw new AssertionError(name + ": " + r + " was created but is still open after closing " + c.parent());
                        }
                    }
                };
                return new MisuseRace.Round(() -> created.add(c.create().apply(f)), parent, f, check);
            })));
        }
    }

    private static Made bindLoop(String target) {
        MisuseLink link = MisuseLink.open(QpType.RC);
        MemoryRegion region = link.pd.allocateRegion(8192, MisuseFixture.ACCESS);
        MemoryWindow mw = link.pd.allocateMemoryWindow(MemoryWindow.Type.TYPE_2);
        SendRequests sends = new SendRequests(1, 1);
        AtomicInteger rkey = new AtomicInteger(mw.rkey());
        MisuseExpect.Action call = () -> {
            sends.reset(0).bindMemoryWindow(mw, rkey.updateAndGet(MemoryWindow::nextRkey), region, 0, 4096, Access.REMOTE_WRITE);
            link.a.postSend(sends, 1);
        };
        return new Made(new MisuseRace.Round(call, null, closing(sends, link)), Map.of("its MemoryWindow", mw,
                "its MemoryRegion", region));
    }

    private static Made receive(String target) {
        MisuseLink link = MisuseLink.open(QpType.RC);
        MemoryRegion x = link.pd.allocateRegion(4096, MisuseFixture.ACCESS);
        ReceiveRequests recvs = new ReceiveRequests(1, 1);
        recvs.get(0).sge(x, 0, 64);
        return new Made(new MisuseRace.Round(() -> link.b.postReceive(recvs, 1), null, closing(recvs, link)), Map.of(
                "the queue pair", link.b, "its receive CQ", link.recvCq, "its protection domain", link.pd, "its context", link.ctx,
                "the MemoryRegion of its entry", x, "the ReceiveRequests batch", recvs));
    }

    private static Made srqReceive(String target) {
        MisuseLink link = MisuseLink.openWithSrq();
        MemoryRegion x = link.pd.allocateRegion(4096, MisuseFixture.ACCESS);
        ReceiveRequests recvs = new ReceiveRequests(1, 1);
        recvs.get(0).sge(x, 0, 64);
        return new Made(new MisuseRace.Round(() -> link.srq.postReceive(recvs, 1), null, closing(recvs, link)), Map.of(
                "the shared receive queue", link.srq, "its protection domain", link.pd, "its context", link.ctx,
                "the MemoryRegion of its entry", x, "the ReceiveRequests batch", recvs));
    }

    /** A link whose sender completes on a classic CQ with a channel; the sender writes now and then. */
    private static MisuseLink withChannel() {
        return MisuseLink.open(QpType.RC, init -> { }, c -> c.createCompletionQueue(256, c.createCompletionChannel(), 0));
    }

    private static Made poll(String target) {
        MisuseLink link = withChannel();
        WorkCompletions wcs = new WorkCompletions(8);
        SendRequests sends = new SendRequests(1, 1);
        sends.reset(0).opcode(Opcode.RDMA_WRITE).flags(SendFlags.SIGNALED).sge(link.mrA, 0, 64)
                .rdma(link.mrB.remoteAddress(), link.mrB.rkey());
        AtomicInteger n = new AtomicInteger();
        MisuseExpect.Action call = () -> {
            if (n.incrementAndGet() % 8 == 0) {
                link.a.postSend(sends, 1);
            }
            link.sendCq.poll(wcs);
        };
        return new Made(new MisuseRace.Round(call, null, closing(wcs, sends, link)), Map.of("the completion queue", link.sendCq,
                "its completion channel", link.sendCq.channel(), "its context", link.ctx, "the WorkCompletions batch", wcs));
    }

    private static Made requestNotify(String target) {
        MisuseLink link = withChannel();
        return new Made(new MisuseRace.Round(() -> link.sendCq.requestNotify(false), null, link), Map.of(
                "the completion queue", link.sendCq, "its completion channel", link.sendCq.channel(), "its context", link.ctx));
    }

    private static Made channelWait(String target, boolean await) {
        MisuseLink link = withChannel();
        CompletionChannel channel = link.sendCq.channel();
        MisuseExpect.Action call = await ? () -> channel.await(Duration.ofMillis(10)) : channel::tryGetEvent;
        return new Made(new MisuseRace.Round(call, null, link), Map.of("the completion channel", channel, "its context", link.ctx));
    }

    private static Made asyncEvents(String target) {
        Context ctx = Context.open(TestBed.loopback().device());
        return new Made(new MisuseRace.Round(() -> ctx.awaitAsyncEvent(Duration.ofMillis(10)), null, ctx),
                Map.of("its context", ctx));
    }

    private static final long RC_OPS = SendOps.SEND | SendOps.RDMA_WRITE;

    /** One batch of the extended API, aborted when a call in it is refused. */
    private static void batch(ExtendedQueuePair q, MisuseExpect.Action ops) throws Throwable {
        q.start();
        try {
            ops.run();
        } catch (Throwable t) {
            try {
                q.abort();
            } catch (RuntimeException closed) {
                t.addSuppressed(closed);
            }
            throw t;
        }
        q.complete();
    }

    private static Made extendedWrite(String target) {
        MisuseLink link = MisuseLink.open(QpType.RC, init -> init.sendOps(RC_OPS));
        MemoryRegion x = link.pd.allocateRegion(4096, MisuseFixture.ACCESS);
        ExtendedQueuePair q = link.a.extended();
        MisuseExpect.Action call = () -> batch(q, () -> q.wrId(1).flags(0).rdmaWrite(link.mrB.rkey(), link.mrB.remoteAddress())
                .setSge(x, 0, 64));
        return new Made(new MisuseRace.Round(call, null, link), Map.of("the queue pair", link.a, "its send CQ", link.sendCq,
                "its protection domain", link.pd, "its context", link.ctx, "the MemoryRegion of its entry", x));
    }

    private static Made extendedUd(String target) {
        MisuseLink link = MisuseLink.open(QpType.UD, init -> init.sendOps(SendOps.SEND));
        AddressHandle ah = link.pd.createAddressHandle(link.destination());
        ExtendedQueuePair q = link.a.extended();
        MisuseExpect.Action call = () -> batch(q, () -> q.wrId(1).flags(0).send()
                .setUdAddress(ah, link.b.qpNum(), QueuePair.DEFAULT_QKEY).setSge(link.mrA, 0, 64));
        return new Made(new MisuseRace.Round(call, null, link), Map.of("the queue pair", link.a, "its AddressHandle", ah));
    }

    private static Made extendedInline(String target) {
        MisuseLink link = MisuseLink.open(QpType.RC, init -> init.sendOps(RC_OPS));
        Arena source = Arena.ofShared();
        MemorySegment data = source.allocate(48);
        ExtendedQueuePair q = link.a.extended();
        // the inline bytes are copied by setInlineData: once its source is freed, setInlineData is
        // refused, so the loop sends a copy it made before
        MemorySegment copy = Arena.ofAuto().allocate(48);
        MisuseExpect.Action call = () -> {
            MemorySegment from = data.scope().isAlive() ? data : copy;
            try {
                batch(q, () -> q.wrId(1).flags(SendFlags.INLINE).rdmaWrite(link.mrB.rkey(), link.mrB.remoteAddress())
                        .setInlineData(from));
            } catch (IllegalStateException freedMeanwhile) {
                if (data.scope().isAlive()) {
                    throw freedMeanwhile;
                }
            }
        };
        return new Made(new MisuseRace.Round(call, null, closing(link, source)), Map.of("the inline source's arena", source));
    }

    private static Made extendedPoll(String target) {
        MisuseLink link = MisuseLink.open(QpType.RC, init -> { },
                c -> c.createExtendedCompletionQueue(256, c.createCompletionChannel(), 0, ExtendedPoller.STANDARD));
        ExtendedPoller poller = link.sendCq.extended();
        SendRequests sends = new SendRequests(1, 1);
        sends.reset(0).wrId(5).opcode(Opcode.RDMA_WRITE).flags(SendFlags.SIGNALED).sge(link.mrA, 0, 64)
                .rdma(link.mrB.remoteAddress(), link.mrB.rkey());
        AtomicInteger n = new AtomicInteger();
        MisuseExpect.Action call = () -> {
            if (n.incrementAndGet() % 4 == 0) {
                link.a.postSend(sends, 1);
            }
            if (poller.start()) {
                try {
                    do {
                        poller.wrId();
                        poller.status();
                        if (poller.status() == WcStatus.SUCCESS) {
                            poller.opcode();
                            poller.byteLength();
                            poller.qpNum();
                        }
                    } while (poller.next());
                } finally {
                    poller.end();
                }
            }
        };
        return new Made(new MisuseRace.Round(call, null, closing(sends, link)), Map.of("the completion queue", link.sendCq,
                "its completion channel", link.sendCq.channel(), "its context", link.ctx));
    }

    /**
     * One shared batch posted by two threads at once ({@code fill}: one fills it while the other
     * posts): one of them must be refused with an IllegalStateException saying it is being posted,
     * and nothing else may go wrong, for up to 5 s until that happened.
     */
    private static MisuseCase sharedBatch(boolean twoPosters) {
        String name = twoPosters ? "two threads post one shared SendRequests batch at once"
                : "one thread fills a shared SendRequests batch while another posts it";
        return MisuseCase.of(FAMILY, name, () -> {
            try (MisuseLink link = MisuseLink.open(QpType.RC); SendRequests sends = new SendRequests(1, 1)) {
                sends.reset(0).opcode(Opcode.RDMA_WRITE).sge(link.mrA, 0, 64).rdma(link.mrB.remoteAddress(), link.mrB.rkey());
                AtomicInteger beingPosted = new AtomicInteger();
                AtomicReference<Throwable> failure = new AtomicReference<>();
                long deadline = System.nanoTime() + 5_000_000_000L;
                MisuseExpect.Action post = () -> link.a.postSend(sends, 1);
                MisuseExpect.Action fill = () -> sends.get(0).opcode(Opcode.RDMA_WRITE).sge(link.mrA, 0, 64);
                Thread[] threads = new Thread[2];
                for (int i = 0; i < 2; i++) {
                    MisuseExpect.Action call = i == 0 || twoPosters ? post : fill;
                    threads[i] = Thread.ofPlatform().daemon().start(() -> {
                        while (beingPosted.get() == 0 && failure.get() == null && System.nanoTime() < deadline) {
                            try {
                                call.run();
                            } catch (VerbsException full) {
                                Thread.onSpinWait();
                            } catch (IllegalStateException e) {
                                if (e.getMessage() != null && e.getMessage().contains("being posted")) {
                                    beingPosted.incrementAndGet();
                                } else {
                                    failure.compareAndSet(null, e);
                                }
                            } catch (Throwable t) {
                                failure.compareAndSet(null, t);
                            }
                        }
                    });
                }
                for (Thread t : threads) {
                    t.join(10_000);
                    if (t.isAlive()) {
                        throw new AssertionError("a thread using the shared batch did not return within 10 s");
                    }
                }
                if (failure.get() != null) {
                    throw new AssertionError("using one batch from two threads threw " + failure.get(), failure.get());
                }
                if (beingPosted.get() == 0) {
                    throw new AssertionError("in 5 s neither thread was refused with \"being posted\": the two never overlapped,"
                            + " or a concurrent post of one batch is not refused");
                }
            }
        });
    }

    private static void unchecked(MisuseExpect.Action a) {
        try {
            a.run();
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** Closes all of {@code cs}, in order, ignoring those closed already. */
    private static AutoCloseable closing(AutoCloseable... cs) {
        return () -> {
            for (AutoCloseable c : cs) {
                MisuseRace.quietly(c);
            }
        };
    }
}
