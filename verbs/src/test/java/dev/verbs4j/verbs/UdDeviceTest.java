package dev.verbs4j.verbs;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** UD send and receive through an address handle, and UC send. */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_1)
class UdDeviceTest {

    /** Receive buffers of UD QPs start with 40 bytes of GRH. */
    static final int GRH = 40;

    @Test
    void udSendReachesThePeerThroughAnAddressHandle() {
        try (QpPair p = QpPair.unconnected(TestBed.hostA(), TestBed.hostB(), QpType.UD, init -> { });
             SendRequests sends = new SendRequests(1, 1);
             ReceiveRequests recvs = new ReceiveRequests(1, 1)) {
            assertThatThrownBy(() -> p.a.initConnected(1, Access.REMOTE_WRITE)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("initDatagram");
            p.a.initDatagram(1, QueuePair.DEFAULT_QKEY);
            p.b.init(1);
            for (QueuePair qp : new QueuePair[]{p.a, p.b}) {
                qp.readyToReceive();
                qp.readyToSend(0);
            }
            QueuePairEndpoint eb = p.b.localEndpoint(p.gidB, 0);
            RcDataPathDeviceTest.fill(p.mrA.segment(), 0, 256, (byte) 'u');
            recvs.get(0).wrId(3).sge(p.mrB, 0, GRH + 1024);
            p.b.postReceive(recvs, 1);
            try (AddressHandle ah = p.pdA.createAddressHandle(AddressVector.global(1, eb.gid(), p.gidA))) {
                sends.reset(0).wrId(4).opcode(Opcode.SEND_WITH_IMM).immediateData(77).flags(SendFlags.SIGNALED)
                        .sge(p.mrA, 0, 256).ud(ah, eb.qpn(), QueuePair.DEFAULT_QKEY);
                p.a.postSend(sends, 1);
                p.awaitSuccess(p.cqA, WcOpcode.SEND);
            }
            WorkCompletion wc = p.awaitSuccess(p.cqB, WcOpcode.RECV);
            assertThat(wc.byteLength()).isEqualTo(GRH + 256);
            assertThat(wc.srcQp()).isEqualTo(p.a.qpNum());
            assertThat(wc.immediateData()).isEqualTo(77);
            assertThat(wc.flags() & WorkCompletion.FLAG_GRH).isNotZero();
            assertThat(RcDataPathDeviceTest.count(p.mrB.segment(), GRH, 256, (byte) 'u')).isEqualTo(256);

            // Reply through an address handle made from the completion and the received GRH.
            recvs.get(0).wrId(5).sge(p.mrA, 8192, GRH + 1024);
            p.a.postReceive(recvs, 1);
            RcDataPathDeviceTest.fill(p.mrB.segment(), 4096, 100, (byte) 'r');
            try (AddressHandle reply = p.pdB.createAddressHandle(wc, p.mrB.segment().asSlice(0, GRH), 1)) {
                assertThat(reply.destination()).isNull();
                sends.reset(0).wrId(6).opcode(Opcode.SEND).flags(SendFlags.SIGNALED)
                        .sge(p.mrB, 4096, 100).ud(reply, p.a.qpNum(), QueuePair.DEFAULT_QKEY);
                p.b.postSend(sends, 1);
                p.awaitSuccess(p.cqB, WcOpcode.SEND);
            }
            WorkCompletion back = p.awaitSuccess(p.cqA, WcOpcode.RECV);
            assertThat(back.srcQp()).isEqualTo(p.b.qpNum());
            assertThat(back.byteLength()).isEqualTo(GRH + 100);
            assertThat(RcDataPathDeviceTest.count(p.mrA.segment(), 8192 + GRH, 100, (byte) 'r')).isEqualTo(100);
        }
    }

    @Test
    void ucSendAndWrite() {
        try (QpPair p = QpPair.connected(TestBed.hostA(), TestBed.hostB(), QpType.UC);
             SendRequests sends = new SendRequests(2, 1);
             ReceiveRequests recvs = new ReceiveRequests(1, 1)) {
            RcDataPathDeviceTest.fill(p.mrA.segment(), 0, 2048, (byte) 'c');
            recvs.get(0).wrId(1).sge(p.mrB, 0, 2048);
            p.b.postReceive(recvs, 1);
            sends.reset(0).wrId(2).opcode(Opcode.SEND).flags(SendFlags.SIGNALED).sge(p.mrA, 0, 2048);
            sends.reset(1).wrId(3).opcode(Opcode.RDMA_WRITE).flags(SendFlags.SIGNALED).sge(p.mrA, 0, 1024)
                    .rdma(p.mrB.remoteAddress() + 8192, p.mrB.rkey());
            p.a.postSend(sends, 2);
            p.awaitSuccess(p.cqA, WcOpcode.SEND);
            p.awaitSuccess(p.cqA, WcOpcode.RDMA_WRITE);
            assertThat(p.awaitSuccess(p.cqB, WcOpcode.RECV).byteLength()).isEqualTo(2048);
            long deadline = System.nanoTime() + 5_000_000_000L;
            while (RcDataPathDeviceTest.count(p.mrB.segment(), 8192, 1024, (byte) 'c') < 1024 && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            assertThat(RcDataPathDeviceTest.count(p.mrB.segment(), 8192, 1024, (byte) 'c')).isEqualTo(1024);
        }
    }
}
