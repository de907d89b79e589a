package dev.verbs4j.verbs;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Resizing, re-registration, zero-based regions, which memory may be registered and what closing
 * its arena does, what Soft-RoCE does not offer, and close order.
 */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_1)
class ResourceDeviceTest {

    @Test
    void completionQueueResizesAndRegionsReregister() {
        try (Context ctx = Context.open(TestBed.loopback().device()); RdmaArena arena = RdmaArena.ofShared()) {
            CompletionQueue cq = ctx.createCompletionQueue(16);
            assertThat(cq.capacity()).isGreaterThanOrEqualTo(16);
            cq.resize(256);
            assertThat(cq.capacity()).isGreaterThanOrEqualTo(256);
            assertThatThrownBy(() -> ctx.createCompletionQueue(0)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> ctx.createCompletionQueue(Integer.MAX_VALUE)).isInstanceOf(VerbsException.class)
                    .hasMessageContaining("ibv_create_cq");

            ProtectionDomain pd = ctx.allocateProtectionDomain();
            MemorySegment mem = arena.allocate(8192, 4096);
            MemoryRegion mr = pd.register(mem, Access.LOCAL_WRITE);
            assertThat(mr.address()).isEqualTo(mem.address());
            assertThat(mr.remoteAddress()).isEqualTo(mem.address());
            try {
                mr.reregister(Access.LOCAL_WRITE | Access.REMOTE_READ);
                assertThat(mr.access()).isEqualTo(Access.LOCAL_WRITE | Access.REMOTE_READ);
            } catch (VerbsException e) {
                assertThat(e.verb()).isEqualTo("ibv_rereg_mr");
                assertThat(e.errno()).isIn(Errno.EOPNOTSUPP, Errno.ENOSYS, Errno.EINVAL);
            }
            MemoryRegion zeroBased = pd.register(mem, Access.LOCAL_WRITE | Access.REMOTE_WRITE, 0);
            assertThat(zeroBased.remoteAddress()).isZero();
            MemoryRegion relaxed = pd.register(mem, Access.LOCAL_WRITE | Access.RELAXED_ORDERING);
            assertThat(relaxed.lkey()).isNotZero();
        }
    }

    @Test
    void onlyMemoryWhoseFreeingTheLibrarySeesIsRegistered() {
        try (Context ctx = Context.open(TestBed.loopback().device()); SendRequests sends = new SendRequests(1, 1)) {
            ProtectionDomain pd = ctx.allocateProtectionDomain();
            // An ordinary arena frees its memory without knowing of the region: refused, with the two ways out.
            try (Arena confined = Arena.ofConfined(); Arena shared = Arena.ofShared()) {
                for (MemorySegment seg : new MemorySegment[]{confined.allocate(4096, 4096), shared.allocate(4096, 4096)}) {
                    assertThatThrownBy(() -> pd.register(seg, Access.LOCAL_WRITE)).isInstanceOf(IllegalArgumentException.class)
                            .hasMessageContaining("RdmaArena").hasMessageContaining("registerUnchecked");
                    assertThatThrownBy(() -> pd.register(seg, Access.LOCAL_WRITE, 0)).isInstanceOf(IllegalArgumentException.class)
                            .hasMessageContaining("RdmaArena").hasMessageContaining("registerUnchecked");
                    // registerUnchecked takes it: the caller keeps the memory until the region is closed
                    MemoryRegion unchecked = pd.registerUnchecked(seg, Access.LOCAL_WRITE);
                    assertThat(unchecked.address()).isEqualTo(seg.address());
                    assertThat(unchecked.lkey()).isNotZero();
                    sends.reset(0).opcode(Opcode.SEND).sge(unchecked, 0, 8);
                    MemoryRegion zeroBased = pd.registerUnchecked(seg, Access.LOCAL_WRITE | Access.REMOTE_WRITE, 0);
                    assertThat(zeroBased.remoteAddress()).isZero();
                    zeroBased.close();
                    unchecked.close();
                    assertThat(seg.scope().isAlive()).isTrue();
                }
            }
            assertThatThrownBy(() -> pd.register(MemorySegment.ofArray(new byte[16]), 0))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("heap");
            // The global arena never frees.
            MemoryRegion global = pd.register(Arena.global().allocate(4096, 4096), Access.LOCAL_WRITE);
            assertThat(global.lkey()).isNotZero();
            global.close();

            // Closing an RdmaArena deregisters every region over its memory, then frees the memory.
            RdmaArena arena = RdmaArena.ofShared();
            MemorySegment mem = arena.allocate(8192, 4096);
            MemoryRegion whole = pd.register(mem, Access.LOCAL_WRITE);
            MemoryRegion half = pd.register(mem.asSlice(4096), Access.LOCAL_WRITE | Access.REMOTE_WRITE, 0);
            MemoryRegion early = pd.register(mem, Access.LOCAL_WRITE);
            early.close();
            assertThat(whole.isClosed()).isFalse();
            arena.close();
            assertThat(whole.isClosed()).isTrue();
            assertThat(half.isClosed()).isTrue();
            assertThat(mem.scope().isAlive()).isFalse();
            arena.close(); // idempotent
            // and a region of the closed arena cannot be used
            assertThatThrownBy(() -> sends.reset(0).sge(whole, 0, 8)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("is closed");
            assertThatThrownBy(() -> whole.reregister(Access.LOCAL_WRITE)).isInstanceOf(IllegalStateException.class);
            assertThatThrownBy(() -> pd.register(mem, Access.LOCAL_WRITE)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("closed");
            assertThatThrownBy(() -> arena.allocate(64)).isInstanceOf(IllegalStateException.class);
            // the domain had nothing left over it
            pd.close();
        }
    }

    @Test
    void aPostNamingARegionOfAClosedArenaIsRefused() {
        try (QpPair p = QpPair.connected(TestBed.loopback(), TestBed.loopback(), QpType.RC);
             SendRequests sends = new SendRequests(1, 1); ReceiveRequests recvs = new ReceiveRequests(1, 1)) {
            RdmaArena arena = RdmaArena.ofShared();
            MemoryRegion mr = p.pdA.register(arena.allocate(4096, 4096), Access.LOCAL_WRITE);
            sends.reset(0).wrId(1).opcode(Opcode.SEND).flags(SendFlags.SIGNALED).sge(mr, 0, 8);
            recvs.get(0).wrId(2).sge(mr, 0, 4096);
            arena.close();
            assertThat(mr.isClosed()).isTrue();
            assertThatThrownBy(() -> p.a.postSend(sends, 1)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("work request 0 of 1 names MemoryRegion").hasMessageContaining("(closed)");
            assertThatThrownBy(() -> p.a.postReceive(recvs, 1)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("receive request 0 of 1 names MemoryRegion").hasMessageContaining("(closed)");
            // the queue pair is still good for requests that name live regions
            recvs.get(0).wrId(3).sge(p.mrB, 0, 64);
            p.b.postReceive(recvs, 1);
            sends.reset(0).wrId(4).opcode(Opcode.SEND).flags(SendFlags.SIGNALED).sge(p.mrA, 0, 8);
            p.a.postSend(sends, 1);
            assertThat(p.awaitSuccess(p.cqA, WcOpcode.SEND).wrId()).isEqualTo(4);
            assertThat(p.awaitSuccess(p.cqB, WcOpcode.RECV).wrId()).isEqualTo(3);
        }
    }

    @Test
    void softRoceHasNoXrcAndSaysSo() {
        try (Context ctx = Context.open(TestBed.loopback().device())) {
            assertThatThrownBy(ctx::openXrcDomain).isInstanceOf(VerbsException.class)
                    .satisfies(e -> assertThat(((VerbsException) e).errno()).isIn(Errno.EOPNOTSUPP, Errno.ENOSYS))
                    .hasMessageContaining("ibv_open_xrcd");

            CompletionQueue cq = ctx.createCompletionQueue(8);
            ProtectionDomain pd = ctx.allocateProtectionDomain();
            // the send side needs no domain, but rxe (kernel and provider) has no XRC queue pairs either
            assertThatThrownBy(() -> pd.createQueuePair(QueuePairInit.of(QpType.XRC_SEND, cq).maxSendWr(4)))
                    .isInstanceOf(VerbsException.class)
                    .satisfies(e -> {
                        VerbsException v = (VerbsException) e;
                        assertThat(v.verb()).isEqualTo("ibv_create_qp_ex");
                        assertThat(v.errno()).isEqualTo(Errno.EOPNOTSUPP);
                    })
                    .hasMessageContaining("ibv_create_qp_ex failed: EOPNOTSUPP")
                    .hasMessageContaining("XRC_SEND QP on " + ctx.name() + " (send_wr 4, recv_wr 0,");
            // the receive side and the XRC SRQ live in a domain, which rxe cannot open
            assertThatThrownBy(() -> QueuePairInit.of(QpType.XRC_RECV, cq)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("XrcDomain.createReceiveQueuePair()");
            SharedReceiveQueue srq = pd.createSharedReceiveQueue(4, 1);
            assertThatThrownBy(() -> pd.createQueuePair(QueuePairInit.of(QpType.XRC_SEND, cq).sharedReceiveQueue(srq)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("no receive side");
            assertThatThrownBy(srq::srqNumber).isInstanceOf(VerbsException.class)
                    .satisfies(e -> {
                        VerbsException v = (VerbsException) e;
                        assertThat(v.verb()).isEqualTo("ibv_get_srq_num");
                        assertThat(v.errno()).isEqualTo(Errno.EOPNOTSUPP);
                    });
            // nothing half-made is left behind: the domain still makes queue pairs and closes cleanly
            pd.createQueuePair(QueuePairInit.of(QpType.RC, cq).sharedReceiveQueue(srq)).close();
            srq.close();
            pd.close();
            cq.close();
        }
    }

    @Test
    void closingTheContextClosesEverythingInDependencyOrder() {
        Context ctx = Context.open(TestBed.loopback().device());
        CompletionChannel channel = ctx.createCompletionChannel();
        CompletionQueue cq = ctx.createCompletionQueue(8, channel, 0);
        ProtectionDomain pd = ctx.allocateProtectionDomain();
        SharedReceiveQueue srq = pd.createSharedReceiveQueue(4, 1);
        QueuePair qp = pd.createQueuePair(QueuePairInit.of(QpType.RC, cq).sharedReceiveQueue(srq));
        MemoryRegion mr = pd.allocateRegion(4096, Access.LOCAL_WRITE);
        MemoryWindow mw = pd.allocateMemoryWindow(MemoryWindow.Type.TYPE_2);
        AddressHandle ah = pd.createAddressHandle(AddressVector.global(1, ctx.queryGid(1, TestBed.loopback().gidIndex()),
                TestBed.loopback().gidIndex()));
        // The channel closes its CQ, the CQ closes the QP that uses it: no EBUSY from the provider.
        channel.close();
        assertThat(cq.isClosed()).isTrue();
        assertThat(qp.isClosed()).isTrue();
        assertThat(srq.isClosed()).isFalse();
        assertThatThrownBy(Context::forkInit).isInstanceOf(VerbsException.class)
                .hasMessageContaining("before opening any device");
        ctx.close();
        for (NativeResource r : new NativeResource[]{pd, srq, mr, mw, ah}) {
            assertThat(r.isClosed()).as("%s", r).isTrue();
        }
    }
}
