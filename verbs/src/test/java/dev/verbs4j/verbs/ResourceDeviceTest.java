package dev.verbs4j.verbs;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Resizing, re-registration, zero-based regions, what Soft-RoCE does not offer, and close order. */
@Tag(TestBed.TAG)
class ResourceDeviceTest {

    @Test
    void completionQueueResizesAndRegionsReregister() {
        try (Context ctx = Context.open(TestBed.loopback().device()); Arena arena = Arena.ofShared()) {
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
