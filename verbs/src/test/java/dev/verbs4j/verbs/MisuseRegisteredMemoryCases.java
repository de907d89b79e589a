package dev.verbs4j.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * The registered-memory family of the misuse suite: {@link ProtectionDomain#register} takes only
 * memory of an open {@link RdmaArena} (or the global arena), whose close deregisters the regions
 * over it before it frees the memory, so that a peer's RDMA to an old key fails (REM_ACCESS_ERR)
 * instead of reaching freed memory; memory of any other arena is refused with a pointer to
 * RdmaArena and {@link ProtectionDomain#registerUnchecked}.
 */
final class MisuseRegisteredMemoryCases {

    static final String FAMILY = "registered memory";

    private static final int SIZE = 64 * 1024;

    private MisuseRegisteredMemoryCases() {
    }

    static List<MisuseCase> all() {
        List<MisuseCase> cases = new ArrayList<>();
        for (String kind : List.of("ofConfined", "ofShared", "ofAuto")) {
            cases.add(otherArenaRefused(kind, false));
            cases.add(otherArenaRefused(kind, true));
        }
        cases.add(MisuseCase.of(FAMILY, "register refuses a heap segment", () -> {
            try (MisuseFixture f = new MisuseFixture()) {
                Throwable t = MisuseExpect.refused("register(heap segment)",
                        () -> f.pd().register(MemorySegment.ofArray(new byte[4096]), MisuseFixture.ACCESS));
                expect(t instanceof IllegalArgumentException, "an IllegalArgumentException, was " + t);
            }
        }));
        cases.add(MisuseCase.of(FAMILY, "register accepts memory of the global arena", () -> {
            try (MisuseLink link = MisuseLink.open(QpType.RC)) {
                MemoryRegion mr = link.pd.register(Arena.global().allocate(SIZE, 4096), MisuseFixture.ACCESS);
                expect(rdma(link, Opcode.RDMA_WRITE, mr.remoteAddress(), mr.rkey()).ok(), "a write into global memory succeeds");
            }
        }));
        cases.add(MisuseCase.of(FAMILY, "registerUnchecked accepts memory of a confined arena", () -> {
            try (MisuseLink link = MisuseLink.open(QpType.RC); Arena arena = Arena.ofConfined()) {
                MemoryRegion mr = link.pd.registerUnchecked(arena.allocate(SIZE, 4096), MisuseFixture.ACCESS);
                expect(rdma(link, Opcode.RDMA_WRITE, mr.remoteAddress(), mr.rkey()).ok(), "a write into the region succeeds");
                mr.close();
            }
        }));
        cases.add(closedRdmaArenaRefused(false));
        cases.add(closedRdmaArenaRefused(true));
        for (Opcode op : List.of(Opcode.RDMA_WRITE, Opcode.RDMA_READ, Opcode.ATOMIC_FETCH_AND_ADD)) {
            cases.add(oldKeyAfterClose(op, false));
        }
        cases.add(oldKeyAfterClose(Opcode.RDMA_WRITE, true));
        cases.add(twoRegionsOneArena());
        cases.add(receivePostedIntoClosedArena());
        cases.add(peerLoopWhileClosing(Opcode.RDMA_WRITE));
        cases.add(peerLoopWhileClosing(Opcode.RDMA_READ));
        cases.add(windowBoundWhileClosing(MemoryWindow.Type.TYPE_2));
        cases.add(windowBoundWhileClosing(MemoryWindow.Type.TYPE_1));
        cases.add(type1WindowBoundWhenClosing(false));
        cases.add(type1WindowBoundWhenClosing(true));
        cases.add(registerWhileClosing());
        cases.add(inlineFromArenaWhileClosing());
        cases.add(MisuseCase.of(FAMILY, "an RdmaArena closed twice, then allocated from", () -> {
            RdmaArena arena = RdmaArena.ofShared();
            arena.allocate(64);
            arena.close();
            arena.close();
            MisuseExpect.refused("allocating from a closed RdmaArena", () -> arena.allocate(64));
        }));
        cases.add(MisuseCase.of(FAMILY, "an RdmaArena closed after the context of its regions", () -> {
            RdmaArena arena = RdmaArena.ofShared();
            MemoryRegion mr;
            try (MisuseFixture f = new MisuseFixture()) {
                mr = f.pd().register(arena.allocate(SIZE, 4096), MisuseFixture.ACCESS);
            }
            expect(mr.isClosed(), "the region closed with its context");
            arena.close();
            expect(!arena.scope().isAlive(), "the arena's memory is freed");
        }));
        return cases;
    }

    private static void expect(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError("expected: " + what);
        }
    }

    private static MisuseCase otherArenaRefused(String kind, boolean withIova) {
        String call = withIova ? "register(segment, access, iova)" : "register(segment, access)";
        return MisuseCase.of(FAMILY, call + " refuses memory of Arena." + kind + "()", () -> {
            Arena arena = switch (kind) {
                case "ofConfined" -> Arena.ofConfined();
                case "ofShared" -> Arena.ofShared();
                default -> Arena.ofAuto();
            };
            try (MisuseFixture f = new MisuseFixture()) {
                MemorySegment seg = arena.allocate(SIZE, 4096);
                Throwable t = MisuseExpect.refused(call + " of Arena." + kind + "() memory", () -> {
                    if (withIova) {
                        f.pd().register(seg, MisuseFixture.ACCESS, 0);
                    } else {
                        f.pd().register(seg, MisuseFixture.ACCESS);
                    }
                });
                expect(t instanceof IllegalArgumentException, "an IllegalArgumentException, was " + t);
                expect(t.getMessage().contains("RdmaArena") && t.getMessage().contains("registerUnchecked"),
                        "the message names RdmaArena and registerUnchecked: " + t.getMessage());
            } finally {
                if (!kind.equals("ofAuto")) {
                    arena.close();
                }
            }
        });
    }

    private static MisuseCase closedRdmaArenaRefused(boolean withIova) {
        return MisuseCase.of(FAMILY, "register" + (withIova ? " with an iova" : "") + " refuses memory of a closed RdmaArena", () -> {
            try (MisuseFixture f = new MisuseFixture()) {
                RdmaArena arena = RdmaArena.ofShared();
                MemorySegment seg = arena.allocate(SIZE, 4096);
                arena.close();
                MisuseExpect.refused("registering memory of a closed RdmaArena", () -> {
                    if (withIova) {
                        f.pd().register(seg, MisuseFixture.ACCESS, 0);
                    } else {
                        f.pd().register(seg, MisuseFixture.ACCESS);
                    }
                });
            }
        });
    }

    /** One signaled RDMA operation of {@code a} at {@code address}/{@code rkey}; its completion. */
    static MisuseLink.Completion rdma(MisuseLink link, Opcode op, long address, int rkey) {
        try (SendRequests s = new SendRequests(1, 1)) {
            SendRequest r = s.reset(0).wrId(9).opcode(op).flags(SendFlags.SIGNALED);
            if (op == Opcode.ATOMIC_FETCH_AND_ADD) {
                r.sge(link.mrA, 0, 8).atomic(address, rkey, 1, 0);
            } else {
                r.sge(link.mrA, 0, 64).rdma(address, rkey);
            }
            link.a.postSend(s, 1);
        }
        return link.awaitOne(link.sendCq, op + " at 0x" + Long.toHexString(address));
    }

    /** After the RdmaArena closed, {@code op} to the region's old key must fail with REM_ACCESS_ERR. */
    private static void expectRemoteAccessError(MisuseLink link, Opcode op, long address, int rkey) {
        MisuseLink.Completion c = rdma(link, op, address, rkey);
        if (c.status() != WcStatus.REM_ACCESS_ERR) {
            throw new AssertionError(op + " to the key of a region whose RdmaArena was closed completed with " + c.status()
                    + (c.ok() ? ": the device reached memory that was freed" : ", not REM_ACCESS_ERR"));
        }
        link.reconnect();
    }

    private static MisuseCase oldKeyAfterClose(Opcode op, boolean zeroBased) {
        return MisuseCase.of(FAMILY, "a peer's " + op + " to the old key after closing the RdmaArena"
                + (zeroBased ? " (zero-based region)" : ""), () -> {
            try (MisuseLink link = MisuseLink.open(QpType.RC)) {
                RdmaArena arena = RdmaArena.ofShared();
                MemorySegment seg = arena.allocate(SIZE, 4096);
                MemoryRegion mr = zeroBased ? link.pd.register(seg, MisuseFixture.ACCESS, 0) : link.pd.register(seg, MisuseFixture.ACCESS);
                long address = mr.remoteAddress();
                int rkey = mr.rkey();
                expect(rdma(link, op, address, rkey).ok(), op + " into the open region succeeds");
                arena.close();
                expect(mr.isClosed(), "closing the RdmaArena closed the region");
                expectRemoteAccessError(link, op, address, rkey);
            }
        });
    }

    private static MisuseCase twoRegionsOneArena() {
        return MisuseCase.of(FAMILY, "closing an RdmaArena deregisters every region over it", () -> {
            try (MisuseLink link = MisuseLink.open(QpType.RC)) {
                RdmaArena arena = RdmaArena.ofShared();
                MemorySegment seg = arena.allocate(SIZE, 4096);
                MemoryRegion whole = link.pd.register(seg, MisuseFixture.ACCESS);
                MemoryRegion part = link.pd.register(seg.asSlice(4096, 8192), MisuseFixture.ACCESS);
                MemoryRegion other = link.pd.register(arena.allocate(SIZE, 4096), MisuseFixture.ACCESS);
                arena.close();
                for (MemoryRegion mr : List.of(whole, part, other)) {
                    expect(mr.isClosed(), mr + " closed with its RdmaArena");
                    expectRemoteAccessError(link, Opcode.RDMA_WRITE, mr.remoteAddress(), mr.rkey());
                }
            }
        });
    }

    private static MisuseCase receivePostedIntoClosedArena() {
        return MisuseCase.of(FAMILY, "a message for a receive into an RdmaArena closed after the post", () -> {
            try (MisuseLink link = MisuseLink.open(QpType.RC)) {
                RdmaArena arena = RdmaArena.ofShared();
                MemoryRegion mr = link.pd.register(arena.allocate(SIZE, 4096), MisuseFixture.ACCESS);
                link.postReceive(mr, 0, 64, 1);
                arena.close();
                link.messageMustNotLand("a message for a receive posted into an RdmaArena that was then closed");
            }
        });
    }

    /**
     * A peer reads or writes the region in a loop while its RdmaArena closes: every operation
     * posted after the close returned must fail with REM_ACCESS_ERR.
     */
    private static MisuseCase peerLoopWhileClosing(Opcode op) {
        return MisuseCase.of(FAMILY, "a peer's " + op + "s in a loop while the RdmaArena closes", () -> {
            try (MisuseLink link = MisuseLink.open(QpType.RC); SendRequests s = new SendRequests(1, 1)) {
                RdmaArena arena = RdmaArena.ofShared();
                MemoryRegion mr = link.pd.register(arena.allocate(SIZE, 4096), MisuseFixture.ACCESS);
                s.reset(0).wrId(1).opcode(op).flags(SendFlags.SIGNALED).sge(link.mrA, 0, 256).rdma(mr.remoteAddress(), mr.rkey());
                AtomicBoolean closed = new AtomicBoolean();
                AtomicReference<Throwable> failure = new AtomicReference<>();
                AtomicInteger succeeded = new AtomicInteger();
                Thread peer = Thread.ofPlatform().daemon().start(() -> {
                    long deadline = System.nanoTime() + 10_000_000_000L;
                    try {
                        while (System.nanoTime() < deadline) {
                            boolean afterClose = closed.get();
                            link.a.postSend(s, 1);
                            MisuseLink.Completion c = link.awaitOne(link.sendCq, op.toString());
                            if (c.ok()) {
                                if (afterClose) {
                                    throw new AssertionError(op + " posted after the RdmaArena closed succeeded: the device reached"
                                            + " freed memory");
                                }
                                succeeded.incrementAndGet();
                            } else {
                                if (c.status() != WcStatus.REM_ACCESS_ERR) {
                                    throw new AssertionError(op + " failed with " + c.status() + ", not REM_ACCESS_ERR");
                                }
                                return;
                            }
                        }
                        throw new AssertionError(op + "s still succeeded 10 s on");
                    } catch (Throwable t) {
                        failure.set(t);
                    }
                });
                long warm = System.nanoTime() + 5_000_000_000L;
                while (succeeded.get() < 3 && peer.isAlive() && System.nanoTime() < warm) {
                    Thread.onSpinWait();
                }
                arena.close();
                closed.set(true);
                peer.join(15_000);
                expect(!peer.isAlive(), "the peer's loop ended");
                if (failure.get() != null) {
                    throw failure.get();
                }
            }
        });
    }

    /** Binds a window of {@code type} over the first 4 KiB of {@code mr} for remote writes; its key. */
    private static int bindWindow(MisuseLink link, MemoryWindow mw, MemoryRegion mr) {
        int rkey;
        if (mw.type() == MemoryWindow.Type.TYPE_1) {
            rkey = mw.bind(link.b, mr, 0, 4096, Access.REMOTE_WRITE, 1, SendFlags.SIGNALED);
        } else {
            rkey = MemoryWindow.nextRkey(mw.rkey());
            try (SendRequests s = new SendRequests(1, 1)) {
                s.reset(0).wrId(1).flags(SendFlags.SIGNALED).bindMemoryWindow(mw, rkey, mr, 0, 4096, Access.REMOTE_WRITE);
                link.b.postSend(s, 1);
            }
        }
        expect(link.awaitOne(link.recvCq, "the bind").ok(), "the bind succeeds");
        expect(rdma(link, Opcode.RDMA_WRITE, mr.remoteAddress(), rkey).ok(), "a write through the window succeeds");
        return rkey;
    }

    private static MisuseCase windowBoundWhileClosing(MemoryWindow.Type type) {
        return MisuseCase.of(FAMILY, "closing an RdmaArena whose region has a " + type + " memory window bound", () -> {
            try (MisuseLink link = MisuseLink.open(QpType.RC)) {
                RdmaArena arena = RdmaArena.ofShared();
                MemoryRegion mr = link.pd.register(arena.allocate(SIZE, 4096), MisuseFixture.ACCESS);
                MemoryWindow mw = link.pd.allocateMemoryWindow(type);
                int rkey = bindWindow(link, mw, mr);
                Throwable t = MisuseExpect.thrownBy(() -> {
                    arena.close();
                    return null;
                });
                MisuseExpect.clearOrNone("closing the RdmaArena", t);
                MisuseExpect.note("closing the RdmaArena", t == null ? "closed" : t);
                if (t == null) {
                    expect(mr.isClosed(), "the region closed with its RdmaArena");
                    expectRemoteAccessError(link, Opcode.RDMA_WRITE, mr.remoteAddress(), rkey);
                } else {
                    expect(arena.scope().isAlive(), "an RdmaArena that could not deregister keeps its memory");
                }
            }
        });
    }

    /**
     * A type 1 window (allocated before the region, so that closing newest first reaches the
     * region first) bound to a region by {@code MemoryWindow.bind} when the region or the whole
     * context is closed: as for type 2 windows, the window must go first, the close succeed, and
     * a write through the window's key fail.
     */
    private static MisuseCase type1WindowBoundWhenClosing(boolean wholeContext) {
        String closed = wholeContext ? "the context" : "the region";
        return MisuseCase.of(FAMILY, "closing " + closed + " while a TYPE_1 memory window is bound to a region", () -> {
            try (MisuseLink link = MisuseLink.open(QpType.RC)) {
                MemoryWindow mw = link.pd.allocateMemoryWindow(MemoryWindow.Type.TYPE_1);
                MemoryRegion mr = link.pd.allocateRegion(SIZE, MisuseFixture.ACCESS);
                int rkey = bindWindow(link, mw, mr);
                if (wholeContext) {
                    link.ctx.close();
                } else {
                    mr.close();
                    expectRemoteAccessError(link, Opcode.RDMA_WRITE, mr.remoteAddress(), rkey);
                }
            }
        });
    }

    private static MisuseCase registerWhileClosing() {
        return MisuseCase.of(FAMILY, "registering RdmaArena memory on one thread while another closes the arena", () -> {
            try (MisuseFixture f = new MisuseFixture()) {
                for (int round = 0; round < 3; round++) {
                    RdmaArena arena = RdmaArena.ofShared();
                    MemorySegment seg = arena.allocate(SIZE, 4096);
                    List<MemoryRegion> registered = new CopyOnWriteArrayList<>();
                    AtomicReference<Throwable> failure = new AtomicReference<>();
                    Thread t = Thread.ofPlatform().daemon().start(() -> {
                        try {
                            while (true) {
                                registered.add(f.pd().register(seg, MisuseFixture.ACCESS));
                            }
                        } catch (Throwable e) {
                            if (!MisuseExpect.isClearRefusal(e)) {
                                failure.set(e);
                            }
                        }
                    });
                    while (registered.size() < 1 + round && t.isAlive()) {
                        Thread.onSpinWait();
                    }
                    arena.close();
                    t.join(10_000);
                    expect(!t.isAlive(), "registering ended after the close");
                    if (failure.get() != null) {
                        throw new AssertionError("registering threw " + failure.get(), failure.get());
                    }
                    for (MemoryRegion mr : registered) {
                        expect(mr.isClosed(), "every region registered over the arena is closed once its close returned: " + mr);
                    }
                }
            }
        });
    }

    /**
     * INLINE sends whose entry names a region of an RdmaArena (the provider copies from its memory
     * while posting) in a loop while the arena closes: the post holds the region, so the memory
     * is never read after it was freed.
     */
    private static MisuseCase inlineFromArenaWhileClosing() {
        return MisuseCase.of(FAMILY, "INLINE sends from an RdmaArena's region in a loop while the arena closes", () -> {
            Supplier<MisuseRace.Round> make = () -> {
                MisuseLink link = MisuseLink.open(QpType.RC);
                RdmaArena arena = RdmaArena.ofShared();
                // large enough to be unmapped when freed
                MemoryRegion mr = link.pd.register(arena.allocate(1 << 20, 4096), MisuseFixture.ACCESS);
                mr.segment().set(ValueLayout.JAVA_LONG, 0, 42);
                SendRequests s = new SendRequests(1, 1);
                s.reset(0).opcode(Opcode.RDMA_WRITE).flags(SendFlags.INLINE).sge(mr, 0, 48)
                        .rdma(link.mrB.remoteAddress(), link.mrB.rkey());
                return new MisuseRace.Round(() -> link.a.postSend(s, 1), arena, () -> {
                    MisuseRace.quietly(s);
                    link.close();
                    MisuseRace.quietly(arena);
                });
            };
            MisuseRace.run("INLINE sends from an RdmaArena's region while it closes", 13, MisuseRace.After.REFUSED, make::get);
        });
    }
}
