package dev.verbs4j.verbs;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/** Every RC opcode and flag, on the loopback device and between the two test hosts. */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_1)
class RcDataPathDeviceTest {

    static Stream<Arguments> topologies() {
        return Stream.of(Arguments.of("loopback", TestBed.loopback(), TestBed.loopback()),
                Arguments.of("hostA-hostB", TestBed.hostA(), TestBed.hostB()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("topologies")
    void sendWithImmediateAndMultipleSges(String name, TestBed.Host ha, TestBed.Host hb) {
        try (QpPair p = QpPair.connected(ha, hb, QpType.RC);
             SendRequests sends = new SendRequests(2, 4);
             ReceiveRequests recvs = new ReceiveRequests(2, 4)) {
            fill(p.mrA.segment(), 0, 300, (byte) 'a');
            fill(p.mrA.segment(), 1000, 200, (byte) 'b');
            recvs.get(0).wrId(10).sge(0, p.mrB, 0, 100).sge(1, p.mrB, 4096, 400);
            recvs.get(1).wrId(11).sge(p.mrB, 8192, 512);
            p.b.postReceive(recvs, 2);

            sends.reset(0).wrId(1).opcode(Opcode.SEND_WITH_IMM).flags(SendFlags.SIGNALED).immediateData(0xCAFEBABE)
                    .sge(0, p.mrA, 0, 300).sge(1, p.mrA, 1000, 200);
            sends.reset(1).wrId(2).opcode(Opcode.SEND).flags(SendFlags.SIGNALED | SendFlags.SOLICITED).sge(p.mrA, 0, 8);
            p.a.postSend(sends, 2);

            assertThat(p.awaitSuccess(p.cqA, WcOpcode.SEND).wrId()).isEqualTo(1);
            assertThat(p.awaitSuccess(p.cqA, WcOpcode.SEND).wrId()).isEqualTo(2);
            WorkCompletion r1 = p.awaitSuccess(p.cqB, WcOpcode.RECV);
            assertThat(r1.wrId()).isEqualTo(10);
            assertThat(r1.byteLength()).isEqualTo(500);
            assertThat(r1.flags() & WorkCompletion.FLAG_WITH_IMM).isNotZero();
            assertThat(r1.immediateData()).isEqualTo(0xCAFEBABE);
            assertThat(r1.qpNum()).isEqualTo(p.b.qpNum());
            MemorySegment b = p.mrB.segment();
            assertThat(count(b, 0, 100, (byte) 'a')).isEqualTo(100);
            assertThat(count(b, 4096, 200, (byte) 'a')).isEqualTo(200);
            assertThat(count(b, 4096 + 200, 200, (byte) 'b')).isEqualTo(200);
            WorkCompletion r2 = p.awaitSuccess(p.cqB, WcOpcode.RECV);
            assertThat(r2.wrId()).isEqualTo(11);
            assertThat(r2.byteLength()).isEqualTo(8);
            assertThat(r2.flags() & WorkCompletion.FLAG_WITH_IMM).isZero();
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("topologies")
    void rdmaWriteReadAndWriteWithImmediate(String name, TestBed.Host ha, TestBed.Host hb) {
        try (QpPair p = QpPair.connected(ha, hb, QpType.RC);
             SendRequests sends = new SendRequests(4, 1);
             ReceiveRequests recvs = new ReceiveRequests(1, 1)) {
            fill(p.mrA.segment(), 0, 4096, (byte) 0x5a);
            fill(p.mrB.segment(), 32768, 4096, (byte) 0x3c);
            recvs.get(0).wrId(7).noSge();
            p.b.postReceive(recvs, 1);

            // A chain: write, read (fenced), write with immediate.
            sends.reset(0).wrId(1).opcode(Opcode.RDMA_WRITE).flags(SendFlags.SIGNALED)
                    .sge(p.mrA, 0, 4096).rdma(p.mrB.remoteAddress() + 16384, p.mrB.rkey());
            sends.reset(1).wrId(2).opcode(Opcode.RDMA_READ).flags(SendFlags.SIGNALED | SendFlags.FENCE)
                    .sge(p.mrA, 8192, 4096).rdma(p.mrB.remoteAddress() + 32768, p.mrB.rkey());
            sends.reset(2).wrId(3).opcode(Opcode.RDMA_WRITE_WITH_IMM).flags(SendFlags.SIGNALED).immediateData(42)
                    .sge(p.mrA, 0, 16).rdma(p.mrB.remoteAddress(), p.mrB.rkey());
            p.a.postSend(sends, 3);

            assertThat(p.awaitSuccess(p.cqA, WcOpcode.RDMA_WRITE).wrId()).isEqualTo(1);
            WorkCompletion read = p.awaitSuccess(p.cqA, WcOpcode.RDMA_READ);
            assertThat(read.wrId()).isEqualTo(2);
            assertThat(read.byteLength()).isEqualTo(4096);
            assertThat(p.awaitSuccess(p.cqA, WcOpcode.RDMA_WRITE).wrId()).isEqualTo(3);
            WorkCompletion imm = p.awaitSuccess(p.cqB, WcOpcode.RECV_RDMA_WITH_IMM);
            assertThat(imm.immediateData()).isEqualTo(42);
            assertThat(imm.byteLength()).isEqualTo(16);

            assertThat(count(p.mrB.segment(), 16384, 4096, (byte) 0x5a)).isEqualTo(4096);
            assertThat(count(p.mrA.segment(), 8192, 4096, (byte) 0x3c)).isEqualTo(4096);
            assertThat(count(p.mrB.segment(), 0, 16, (byte) 0x5a)).isEqualTo(16);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("topologies")
    void atomicsAndInlineSend(String name, TestBed.Host ha, TestBed.Host hb) {
        try (QpPair p = QpPair.connected(ha, hb, QpType.RC, init -> init.maxInlineData(64));
             SendRequests sends = new SendRequests(2, 1);
             ReceiveRequests recvs = new ReceiveRequests(1, 1);
             Arena arena = Arena.ofConfined()) {
            MemorySegment target = p.mrB.segment();
            target.set(ValueLayout.JAVA_LONG, 40960, 100L);
            long remote = p.mrB.remoteAddress() + 40960;

            sends.reset(0).wrId(1).opcode(Opcode.ATOMIC_FETCH_AND_ADD).flags(SendFlags.SIGNALED)
                    .sge(p.mrA, 0, 8).atomic(remote, p.mrB.rkey(), 5, 0);
            p.a.postSend(sends, 1);
            assertThat(p.awaitSuccess(p.cqA, WcOpcode.FETCH_ADD).byteLength()).isEqualTo(8);
            assertThat(p.mrA.segment().get(ValueLayout.JAVA_LONG, 0)).isEqualTo(100L);
            assertThat(target.get(ValueLayout.JAVA_LONG, 40960)).isEqualTo(105L);

            sends.reset(0).wrId(2).opcode(Opcode.ATOMIC_CMP_AND_SWP).flags(SendFlags.SIGNALED)
                    .sge(p.mrA, 8, 8).atomic(remote, p.mrB.rkey(), 105, 7);
            p.a.postSend(sends, 1);
            p.awaitSuccess(p.cqA, WcOpcode.COMP_SWAP);
            assertThat(p.mrA.segment().get(ValueLayout.JAVA_LONG, 8)).isEqualTo(105L);
            assertThat(target.get(ValueLayout.JAVA_LONG, 40960)).isEqualTo(7L);

            // An inline send from memory that is not registered at all.
            MemorySegment unregistered = arena.allocate(48);
            fill(unregistered, 0, 48, (byte) 'i');
            recvs.get(0).wrId(9).sge(p.mrB, 0, 64);
            p.b.postReceive(recvs, 1);
            sends.reset(0).wrId(3).opcode(Opcode.SEND).flags(SendFlags.SIGNALED).inline(unregistered);
            p.a.postSend(sends, 1);
            p.awaitSuccess(p.cqA, WcOpcode.SEND);
            assertThat(p.awaitSuccess(p.cqB, WcOpcode.RECV).byteLength()).isEqualTo(48);
            assertThat(count(p.mrB.segment(), 0, 48, (byte) 'i')).isEqualTo(48);
        }
    }

    static void fill(MemorySegment s, long offset, long length, byte value) {
        s.asSlice(offset, length).fill(value);
    }

    static long count(MemorySegment s, long offset, long length, byte value) {
        long n = 0;
        for (long i = offset; i < offset + length; i++) {
            if (s.get(ValueLayout.JAVA_BYTE, i) == value) {
                n++;
            }
        }
        return n;
    }
}
