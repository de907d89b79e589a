package dev.verbs4j.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * The descriptor-lifetime family of the misuse suite: a request filled with a reference (a
 * scatter/gather entry's region, a UD address handle, a window and region to bind, inline data)
 * whose object is closed at each point of the request's life: after it was filled and before the
 * post, after the post before its completion, after the completion before it is filled again.
 * Then it is posted (again), polled, and filled again. A request naming a closed object must be
 * refused at the post (an IllegalStateException naming the object) or complete with an error;
 * inline data is copied when set, so closing its source never matters.
 */
final class MisuseDescriptorCases {

    static final String FAMILY = "descriptor lifetime";

    /** When the referenced object is closed. */
    enum Point {
        AFTER_FILL("after fill, before post"),
        AFTER_POST("after post, before completion"),
        AFTER_COMPLETION("after completion, before refill");

        final String words;

        Point(String words) {
            this.words = words;
        }
    }

    private static final int LEN = 64;

    private MisuseDescriptorCases() {
    }

    static List<MisuseCase> all() {
        List<MisuseCase> cases = new ArrayList<>();
        for (Point p : Point.values()) {
            for (QpType t : List.of(QpType.RC, QpType.UC, QpType.UD)) {
                cases.add(sendRegion(t, p, false));
                cases.add(sendRegion(t, p, true));
            }
            for (String on : List.of("RC", "UC", "UD", "SRQ")) {
                cases.add(receiveRegion(on, p, false));
                cases.add(receiveRegion(on, p, true));
            }
            cases.add(addressHandle(p));
            cases.add(bind(p, true));
            cases.add(bind(p, false));
            for (QpType t : List.of(QpType.RC, QpType.UC, QpType.UD)) {
                cases.add(inline(t, p));
            }
            cases.add(inlineFlagOverRegion(p));
        }
        cases.add(udWithoutDestination(false));
        cases.add(udWithoutDestination(true));
        cases.add(extendedSgeRegionClosedBeforeComplete());
        cases.add(extendedInlineSourceClosedBeforeComplete(QpType.RC));
        cases.add(extendedInlineSourceClosedBeforeComplete(QpType.UD));
        cases.add(extendedAddressHandleClosedBeforeComplete());
        return cases;
    }

    /** A SEND whose scatter/gather entry names a region that is closed (or whose RdmaArena is). */
    private static MisuseCase sendRegion(QpType type, Point p, boolean viaArena) {
        String closes = viaArena ? "the RdmaArena of its region" : "its region";
        return MisuseCase.of(FAMILY, type + " SEND from a MemoryRegion, " + closes + " closed " + p.words, () -> {
            try (MisuseLink link = MisuseLink.open(type); SendRequests sends = new SendRequests(1, 1);
                 RdmaArena arena = RdmaArena.ofShared()) {
                MemoryRegion x = viaArena ? link.pd.register(arena.allocate(MisuseFixture.REGION, 4096), MisuseFixture.ACCESS)
                        : link.pd.allocateRegion(MisuseFixture.REGION, MisuseFixture.ACCESS);
                AutoCloseable close = viaArena ? arena : x;
                MisuseExpect.Action fill = () -> link.toB(sends.reset(0).wrId(1).opcode(Opcode.SEND).flags(SendFlags.SIGNALED)
                        .sge(x, 0, LEN));
                sendClosedAt(link, sends, p, close, fill, LEN, MemoryRegion.class, "posting a request that names a closed region",
                        "region");
            }
        });
    }

    /**
     * The course of a SEND (the first of {@code sends}, filled by {@code fill}) whose request names
     * what {@code close} closes at {@code p}, with four receives of {@code receiveLength} bytes
     * posted at B: posting the request again ({@code posting}), and filling it again with the
     * closed {@code closedWhat} and posting it, must be refused naming {@code kind}, or fail.
     */
    private static void sendClosedAt(MisuseLink link, SendRequests sends, Point p, AutoCloseable close, MisuseExpect.Action fill,
                                     int receiveLength, Class<?> kind, String posting, String closedWhat) throws Throwable {
        MisuseExpect.Action post = () -> link.a.postSend(sends, 1);
        for (int i = 0; i < 4; i++) {
            link.postReceive(link.mrB, i * 1024L, receiveLength, 100 + i);
        }
        fill.run();
        closeAt(link, p, close, post, link.sendCq);
        link.sendRefusedOrFailed(posting, kind, post);
        link.sendRefusedOrFailed("filling it again with the closed " + closedWhat + " and posting", kind, () -> {
            fill.run();
            post.run();
        });
    }

    /**
     * Closes {@code close} at {@code p}: before posting, right after posting (the completion may
     * then be anything but a crash), or after a successful completion.
     */
    private static void closeAt(MisuseLink link, Point p, AutoCloseable close, MisuseExpect.Action post, CompletionQueue cq)
            throws Throwable {
        switch (p) {
            case AFTER_FILL -> close.close();
            case AFTER_POST -> {
                post.run();
                close.close();
                if (!link.awaitOne(cq, "the request posted before its object was closed").ok()) {
                    link.reconnect();
                }
            }
            case AFTER_COMPLETION -> {
                post.run();
                MisuseLink.Completion c = link.awaitOne(cq, "the request posted with its object open");
                if (!c.ok()) {
                    throw new AssertionError("the request with its object open failed: " + c);
                }
                close.close();
            }
        }
    }

    /** A receive whose scatter entry names a region that is closed (or whose RdmaArena is). */
    private static MisuseCase receiveRegion(String on, Point p, boolean viaArena) {
        String closes = viaArena ? "the RdmaArena of its region" : "its region";
        return MisuseCase.of(FAMILY, "receive on " + on + " into a MemoryRegion, " + closes + " closed " + p.words, () -> {
            try (MisuseLink link = on.equals("SRQ") ? MisuseLink.openWithSrq() : MisuseLink.open(QpType.valueOf(on));
                 ReceiveRequests recvs = new ReceiveRequests(1, 1); RdmaArena arena = RdmaArena.ofShared()) {
                MemoryRegion x = viaArena ? link.pd.register(arena.allocate(MisuseFixture.REGION, 4096), MisuseFixture.ACCESS)
                        : link.pd.allocateRegion(MisuseFixture.REGION, MisuseFixture.ACCESS);
                AutoCloseable close = viaArena ? arena : x;
                MisuseExpect.Action fill = () -> recvs.get(0).wrId(200).sge(x, 0, link.receiveLength(LEN));
                MisuseExpect.Action post = () -> link.postReceive(recvs);
                fill.run();
                switch (p) {
                    case AFTER_FILL -> close.close();
                    case AFTER_POST -> {
                        post.run();
                        close.close();
                        link.messageMustNotLand("a message for a receive whose region was closed after the post");
                    }
                    case AFTER_COMPLETION -> {
                        post.run();
                        link.send(0, LEN, 1);
                        MisuseLink.Completion c = link.awaitOne(link.recvCq, "the receive with its region open");
                        if (!c.ok()) {
                            throw new AssertionError("the receive with its region open failed: " + c);
                        }
                        link.awaitOne(link.sendCq, "the send");
                        close.close();
                    }
                }
                link.receiveRefusedOrFailed("posting a receive that names a closed region", MemoryRegion.class, post);
                link.receiveRefusedOrFailed("filling it again with the closed region and posting", MemoryRegion.class, () -> {
                    fill.run();
                    post.run();
                });
            }
        });
    }

    /** A UD SEND whose destination's address handle is closed. */
    private static MisuseCase addressHandle(Point p) {
        return MisuseCase.of(FAMILY, "UD SEND to an AddressHandle closed " + p.words, () -> {
            try (MisuseLink link = MisuseLink.open(QpType.UD); SendRequests sends = new SendRequests(1, 1)) {
                AddressHandle x = link.pd.createAddressHandle(link.destination());
                MisuseExpect.Action fill = () -> sends.reset(0).wrId(1).opcode(Opcode.SEND).flags(SendFlags.SIGNALED)
                        .sge(link.mrA, 0, LEN).ud(x, link.b.qpNum(), QueuePair.DEFAULT_QKEY);
                sendClosedAt(link, sends, p, x, fill, LEN, AddressHandle.class, "posting a request whose address handle is closed",
                        "address handle");
            }
        });
    }

    /**
     * A BIND_MW of a type 2 window over a region, where the window or the region is closed; once
     * either is closed, a peer's write through the window's key must fail.
     */
    private static MisuseCase bind(Point p, boolean closeWindow) {
        Class<?> closed = closeWindow ? MemoryWindow.class : MemoryRegion.class;
        // closing a region closes the windows bound to it first: then either may be named
        List<Class<?>> named = closeWindow ? List.of(MemoryWindow.class) : List.of(MemoryRegion.class, MemoryWindow.class);
        return MisuseCase.of(FAMILY, "RC BIND_MW with its " + (closeWindow ? "MemoryWindow" : "MemoryRegion") + " closed " + p.words, () -> {
            try (MisuseLink link = MisuseLink.open(QpType.RC); SendRequests sends = new SendRequests(1, 1);
                 SendRequests writes = new SendRequests(1, 1)) {
                MemoryRegion target = link.pd.allocateRegion(8192, MisuseFixture.ACCESS);
                MemoryWindow mw = link.pd.allocateMemoryWindow(MemoryWindow.Type.TYPE_2);
                int rkey = MemoryWindow.nextRkey(mw.rkey());
                long address = target.remoteAddress();
                AutoCloseable close = closeWindow ? mw : target;
                MisuseExpect.Action fill = () -> sends.reset(0).wrId(1).flags(SendFlags.SIGNALED)
                        .bindMemoryWindow(mw, rkey, target, 0, 4096, Access.REMOTE_WRITE);
                MisuseExpect.Action post = () -> link.a.postSend(sends, 1);
                // the peer b writes through the window
                MisuseExpect.Action write = () -> {
                    writes.reset(0).wrId(7).opcode(Opcode.RDMA_WRITE).flags(SendFlags.SIGNALED).sge(link.mrB, 0, LEN).rdma(address, rkey);
                    link.b.postSend(writes, 1);
                };
                fill.run();
                if (p == Point.AFTER_COMPLETION) {
                    post.run();
                    MisuseLink.Completion c = link.awaitOne(link.sendCq, "the bind");
                    if (!c.ok()) {
                        throw new AssertionError("binding an open window to an open region failed: " + c);
                    }
                    write.run();
                    MisuseLink.Completion w = link.awaitOne(link.recvCq, "the write through the bound window");
                    if (!w.ok()) {
                        throw new AssertionError("the write through the bound window failed: " + w);
                    }
                    close.close();
                } else {
                    closeAt(link, p, close, post, link.sendCq);
                }
                if (p != Point.AFTER_FILL) {
                    write.run();
                    MisuseLink.Completion w = link.awaitOne(link.recvCq, "a write through the window after closing its "
                            + closed.getSimpleName());
                    if (w.ok()) {
                        throw new AssertionError("a peer wrote through the window after its " + closed.getSimpleName()
                                + " was closed: the write completed successfully");
                    }
                    link.reconnect();
                }
                link.sendRefusedOrFailed("posting the bind again", named, post);
                link.sendRefusedOrFailed("filling the bind again with the closed " + closed.getSimpleName() + " and posting", named,
                        () -> {
                            fill.run();
                            post.run();
                        });
            }
        });
    }

    /**
     * An INLINE send of bytes from a segment whose arena is closed: they were copied when set, so
     * the post succeeds and delivers the bytes as they were then.
     */
    private static MisuseCase inline(QpType type, Point p) {
        return MisuseCase.of(FAMILY, type + " SEND of inline data whose source is freed " + p.words, () -> {
            try (MisuseLink link = MisuseLink.open(type); SendRequests sends = new SendRequests(1, 1)) {
                Arena source = Arena.ofShared();
                // the end of a block large enough to be unmapped when freed
                MemorySegment data = source.allocate(1 << 20).asSlice((1 << 20) - 48, 48);
                data.fill((byte) 'i');
                MisuseExpect.Action fill = () -> link.toB(sends.reset(0).wrId(1).opcode(Opcode.SEND).flags(SendFlags.SIGNALED)
                        .inline(data));
                MisuseExpect.Action post = () -> link.a.postSend(sends, 1);
                for (int i = 0; i < 4; i++) {
                    link.postReceive(link.mrB, i * 1024L, 48, 100 + i);
                }
                fill.run();
                data.fill((byte) 'x'); // changed after inline(): the copy is what goes out
                int delivered = 0;
                switch (p) {
                    case AFTER_FILL -> source.close();
                    case AFTER_POST -> {
                        post.run();
                        source.close();
                        expectDelivered(link, delivered++);
                    }
                    case AFTER_COMPLETION -> {
                        post.run();
                        expectDelivered(link, delivered++);
                        source.close();
                    }
                }
                post.run();
                expectDelivered(link, delivered);
                MisuseExpect.refused("filling inline data from the freed segment", fill);
            }
        });
    }

    /** The SEND completes, and receive {@code n} holds the 48 inline bytes 'i'. */
    private static void expectDelivered(MisuseLink link, int n) {
        MisuseLink.Completion s = link.awaitOne(link.sendCq, "the inline send");
        MisuseLink.Completion r = link.awaitOne(link.recvCq, "the inline send's receive");
        if (!s.ok() || !r.ok()) {
            throw new AssertionError("the inline send failed: " + s + ", " + r);
        }
        int offset = n * 1024 + (link.type == QpType.UD ? MisuseLink.GRH : 0);
        int same = MisuseLink.count(link.mrB.segment(), offset, 48, (byte) 'i');
        if (same != 48) {
            throw new AssertionError("the inline data arrived changed: " + same + " of 48 bytes are as they were when set");
        }
    }

    /**
     * An RC SEND with the INLINE flag whose entry names a region (the provider copies from the
     * region's memory while posting) that is closed: the post must not read the freed memory.
     */
    private static MisuseCase inlineFlagOverRegion(Point p) {
        return MisuseCase.of(FAMILY, "RC SEND with the INLINE flag over a MemoryRegion closed " + p.words, () -> {
            try (MisuseLink link = MisuseLink.open(QpType.RC); SendRequests sends = new SendRequests(1, 1)) {
                // 1 MiB: freed by unmapping, so a read of it after close faults
                MemoryRegion x = link.pd.allocateRegion(1 << 20, MisuseFixture.ACCESS);
                x.segment().asSlice(0, 48).fill((byte) 'f');
                MisuseExpect.Action fill = () -> sends.reset(0).wrId(1).opcode(Opcode.SEND)
                        .flags(SendFlags.SIGNALED | SendFlags.INLINE).sge(x, 0, 48);
                sendClosedAt(link, sends, p, x, fill, 48, MemoryRegion.class, "posting the INLINE request over the closed region",
                        "region");
            }
        });
    }

    /** A UD request without a destination: never posted with a null address handle. */
    private static MisuseCase udWithoutDestination(boolean afterReuse) {
        String detail = afterReuse ? "UD SEND refilled without a destination after one was posted with one"
                : "UD SEND without a destination";
        return MisuseCase.of(FAMILY, detail, () -> {
            try (MisuseLink link = MisuseLink.open(QpType.UD); SendRequests sends = new SendRequests(1, 1)) {
                link.postReceive(link.mrB, 0, LEN, 100);
                if (afterReuse) {
                    link.toB(sends.reset(0).wrId(1).opcode(Opcode.SEND).flags(SendFlags.SIGNALED).sge(link.mrA, 0, LEN));
                    link.a.postSend(sends, 1);
                    if (!link.awaitOne(link.sendCq, "the send with a destination").ok()) {
                        throw new AssertionError("the UD send with a destination failed");
                    }
                }
                sends.reset(0).wrId(2).opcode(Opcode.SEND).flags(SendFlags.SIGNALED).sge(link.mrA, 0, LEN);
                Throwable t = MisuseExpect.refused("posting a UD request without ud(...)", () -> link.a.postSend(sends, 1));
                if (!(t instanceof IllegalStateException)) {
                    throw new AssertionError("a UD post without a destination must be an IllegalStateException, was " + t, t);
                }
            }
        });
    }

    private static final long RC_OPS = SendOps.SEND | SendOps.RDMA_WRITE;

    /** The extended API: setSge names a region that is closed before complete(). */
    private static MisuseCase extendedSgeRegionClosedBeforeComplete() {
        return MisuseCase.of(FAMILY, "extended RC SEND whose setSge region is closed before complete()", () -> {
            try (MisuseLink link = MisuseLink.open(QpType.RC, init -> init.sendOps(RC_OPS))) {
                MemoryRegion x = link.pd.allocateRegion(MisuseFixture.REGION, MisuseFixture.ACCESS);
                link.postReceive(link.mrB, 0, LEN, 100);
                ExtendedQueuePair q = link.a.extended();
                q.start();
                q.wrId(1).flags(SendFlags.SIGNALED).send().setSge(x, 0, LEN);
                x.close();
                link.sendRefusedOrFailed("completing the batch", MemoryRegion.class, q::complete);
            }
        });
    }

    /** The extended API: setInlineData copies, so freeing the source before complete() is fine. */
    private static MisuseCase extendedInlineSourceClosedBeforeComplete(QpType type) {
        return MisuseCase.of(FAMILY, "extended " + type + " SEND whose inline source is freed before complete()", () -> {
            long ops = SendOps.SEND;
            try (MisuseLink link = MisuseLink.open(type, init -> init.sendOps(ops))) {
                link.postReceive(link.mrB, 0, 48, 100);
                Arena source = Arena.ofShared();
                MemorySegment data = source.allocate(1 << 20).asSlice((1 << 20) - 48, 48);
                data.fill((byte) 'i');
                ExtendedQueuePair q = link.a.extended();
                q.start();
                q.wrId(1).flags(SendFlags.SIGNALED | SendFlags.INLINE).send().setInlineData(data);
                if (type == QpType.UD) {
                    q.setUdAddress(link.ah, link.b.qpNum(), QueuePair.DEFAULT_QKEY);
                }
                data.fill((byte) 'x');
                source.close();
                q.complete();
                expectDelivered(link, 0);
            }
        });
    }

    /**
     * The extended API: the address handle given to setUdAddress is closed before complete(); the
     * provider copied what it needed, so any outcome but a crash will do.
     */
    private static MisuseCase extendedAddressHandleClosedBeforeComplete() {
        return MisuseCase.of(FAMILY, "extended UD SEND whose AddressHandle is closed before complete()", () -> {
            try (MisuseLink link = MisuseLink.open(QpType.UD, init -> init.sendOps(SendOps.SEND))) {
                link.postReceive(link.mrB, 0, LEN, 100);
                AddressHandle x = link.pd.createAddressHandle(link.destination());
                ExtendedQueuePair q = link.a.extended();
                q.start();
                q.wrId(1).flags(SendFlags.SIGNALED).send().setUdAddress(x, link.b.qpNum(), QueuePair.DEFAULT_QKEY)
                        .setSge(link.mrA, 0, LEN);
                x.close();
                Throwable t = MisuseExpect.thrownBy(() -> {
                    q.complete();
                    return null;
                });
                MisuseExpect.clearOrNone("completing the batch", t);
                if (t == null) {
                    link.awaitOne(link.sendCq, "the send");
                }
            }
        });
    }
}
