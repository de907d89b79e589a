package dev.verbs4j.verbs;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Failed work requests end in completions with the status the verbs specify. */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_1)
class ErrorCompletionDeviceTest {

    @Test
    void badRkeyGivesRemoteAccessError() {
        try (QpPair p = QpPair.connected(TestBed.hostA(), TestBed.hostB(), QpType.RC);
             SendRequests sends = new SendRequests(1, 1)) {
            sends.reset(0).wrId(5).opcode(Opcode.RDMA_WRITE).flags(SendFlags.SIGNALED)
                    .sge(p.mrA, 0, 64).rdma(p.mrB.remoteAddress(), p.mrB.rkey() ^ 0x5500);
            p.a.postSend(sends, 1);
            WorkCompletion wc = p.awaitOne(p.cqA);
            assertThat(wc.status()).isEqualTo(WcStatus.REM_ACCESS_ERR);
            assertThat(wc.status().description()).isEqualTo("remote access error");
            assertThat(wc.wrId()).isEqualTo(5);
        }
    }

    @Test
    void sendWithoutReceiveExhaustsRnrRetries() {
        try (QpPair p = QpPair.unconnected(TestBed.hostA(), TestBed.hostB(), QpType.RC, init -> { });
             SendRequests sends = new SendRequests(1, 1)) {
            assertThatThrownBy(() -> p.a.initDatagram(1, QueuePair.DEFAULT_QKEY)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("initConnected");
            p.a.initConnected(1, Access.REMOTE_WRITE);
            p.b.init(1);
            QueuePairEndpoint ea = p.a.localEndpoint(p.gidA, 1);
            QueuePairEndpoint eb = p.b.localEndpoint(p.gidB, 2);
            p.a.readyToReceive(eb, p.gidA);
            p.b.readyToReceive(ea, p.gidB);
            p.a.readyToSend(1, 14, 7, 0);
            p.b.readyToSend(2);
            sends.reset(0).wrId(6).opcode(Opcode.SEND).flags(SendFlags.SIGNALED).sge(p.mrA, 0, 32);
            p.a.postSend(sends, 1);
            WorkCompletion wc = p.awaitOne(p.cqA);
            assertThat(wc.status()).isEqualTo(WcStatus.RNR_RETRY_EXC_ERR);
            assertThat(wc.wrId()).isEqualTo(6);
        }
    }

    @Test
    void movingToErrorFlushesOutstandingReceives() {
        try (QpPair p = QpPair.connected(TestBed.loopback(), TestBed.loopback(), QpType.RC);
             ReceiveRequests recvs = new ReceiveRequests(3, 1)) {
            for (int i = 0; i < 3; i++) {
                recvs.get(i).wrId(100 + i).sge(p.mrB, i * 1024L, 1024);
            }
            p.b.postReceive(recvs, 3);
            p.b.toError();
            assertThat(p.b.queryState()).isEqualTo(QpState.ERR);
            for (int i = 0; i < 3; i++) {
                WorkCompletion wc = p.awaitOne(p.cqB);
                assertThat(wc.status()).isEqualTo(WcStatus.WR_FLUSH_ERR);
                assertThat(wc.wrId()).isEqualTo(100 + i);
            }
            p.b.reset();
            assertThat(p.b.queryState()).isEqualTo(QpState.RESET);
        }
    }
}
