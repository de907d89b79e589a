package dev.verbs4j.verbs;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** ibv_create_qp_ex + ibv_wr_*, and ibv_create_cq_ex + ibv_start_poll/next_poll/end_poll. */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_1)
class ExtendedApiDeviceTest {

    record Seen(long wrId, WcStatus status, WcOpcode opcode, int byteLength) {
    }

    @Test
    void postWithWrFunctionsAndPollWithStartPoll() {
        TestBed.Host host = TestBed.loopback();
        int gid = host.gidIndex();
        long ops = SendOps.SEND | SendOps.SEND_WITH_IMM | SendOps.RDMA_WRITE | SendOps.RDMA_READ | SendOps.ATOMIC_FETCH_AND_ADD;
        try (Context ctx = Context.open(host.device());
             ReceiveRequests recvs = new ReceiveRequests(2, 1);
             Arena arena = Arena.ofConfined()) {
            CompletionQueue cq = ctx.createExtendedCompletionQueue(64, null, 0, ExtendedPoller.STANDARD);
            ProtectionDomain pd = ctx.allocateProtectionDomain();
            QueuePair a = pd.createQueuePair(QueuePairInit.of(QpType.RC, cq).sendOps(ops).maxInlineData(64));
            QueuePair b = pd.createQueuePair(QueuePairInit.of(QpType.RC, cq));
            a.connect(1, b.localEndpoint(gid, 3), gid, 4);
            b.connect(1, a.localEndpoint(gid, 4), gid, 3);
            MemoryRegion mr = pd.allocateRegion(65536, QpPair.ACCESS);
            mr.segment().asSlice(0, 1024).fill((byte) 'e');
            mr.segment().set(ValueLayout.JAVA_LONG, 60000, 40L);
            recvs.get(0).wrId(100).sge(mr, 8192, 1024);
            recvs.get(1).wrId(101).sge(mr, 9216, 1024);
            b.postReceive(recvs, 2);

            MemorySegment inline = arena.allocate(32);
            inline.fill((byte) 'n');
            ExtendedQueuePair x = a.extended();
            x.start();
            x.wrId(1).flags(SendFlags.SIGNALED).sendWithImmediate(0x01020304).setSge(mr, 0, 512);
            x.wrId(2).flags(SendFlags.SIGNALED | SendFlags.INLINE).send().setInlineData(inline);
            x.wrId(3).flags(SendFlags.SIGNALED).rdmaWrite(mr.rkey(), mr.remoteAddress() + 16384).setSge(mr, 0, 1024);
            x.wrId(4).flags(SendFlags.SIGNALED).rdmaRead(mr.rkey(), mr.remoteAddress() + 16384).setSge(mr, 20480, 1024);
            x.wrId(5).flags(SendFlags.SIGNALED).atomicFetchAndAdd(mr.rkey(), mr.remoteAddress() + 60000, 2).setSge(mr, 60008, 8);
            x.complete();

            List<Seen> seen = new ArrayList<>();
            ExtendedPoller poller = cq.extended();
            long deadline = System.nanoTime() + 20_000_000_000L;
            while (seen.size() < 7 && System.nanoTime() < deadline) {
                if (poller.start()) {
                    do {
                        seen.add(new Seen(poller.wrId(), poller.status(), poller.opcode(),
                                poller.opcode() == WcOpcode.RDMA_WRITE ? 0 : poller.byteLength()));
                        if (poller.wrId() == 100) {
                            assertThat(poller.immediateData()).isEqualTo(0x01020304);
                            assertThat(poller.qpNum()).isEqualTo(b.qpNum());
                        }
                    } while (poller.next());
                    poller.end();
                }
            }
            assertThat(seen).containsExactlyInAnyOrder(
                    new Seen(1, WcStatus.SUCCESS, WcOpcode.SEND, 512),
                    new Seen(2, WcStatus.SUCCESS, WcOpcode.SEND, 32),
                    new Seen(3, WcStatus.SUCCESS, WcOpcode.RDMA_WRITE, 0),
                    new Seen(4, WcStatus.SUCCESS, WcOpcode.RDMA_READ, 1024),
                    new Seen(5, WcStatus.SUCCESS, WcOpcode.FETCH_ADD, 8),
                    new Seen(100, WcStatus.SUCCESS, WcOpcode.RECV, 512),
                    new Seen(101, WcStatus.SUCCESS, WcOpcode.RECV, 32));
            assertThat(mr.segment().get(ValueLayout.JAVA_LONG, 60000)).isEqualTo(42L);
            assertThat(mr.segment().get(ValueLayout.JAVA_LONG, 60008)).isEqualTo(40L);
            assertThat(RcDataPathDeviceTest.count(mr.segment(), 20480, 1024, (byte) 'e')).isEqualTo(1024);
            assertThat(RcDataPathDeviceTest.count(mr.segment(), 9216, 32, (byte) 'n')).isEqualTo(32);
            assertThatThrownBy(poller::wrId).isInstanceOf(IllegalStateException.class);
            assertThatThrownBy(b::extended).isInstanceOf(IllegalStateException.class).hasMessageContaining("sendOps");
        }
    }
}
