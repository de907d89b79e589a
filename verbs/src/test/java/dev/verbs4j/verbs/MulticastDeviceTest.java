package dev.verbs4j.verbs;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.StandardProtocolFamily;
import java.nio.channels.DatagramChannel;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * UD multicast: one queue pair sends to a group through an address handle to the group's GID,
 * every queue pair attached to the group receives it, a detached one does not.
 */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_1)
class MulticastDeviceTest {

    /** An IPv4 group mapped into IPv6, as RoCE v2 carries it: {@code ::ffff:239.1.2.3}. */
    static final Gid GROUP = Gid.of(new byte[]{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (byte) 0xff, (byte) 0xff, (byte) 239, 1, 2, 3});
    static final int GRH = UdDeviceTest.GRH;

    /**
     * The IPv4 layer's membership of {@code group} on the interface of {@code address}, until closed.
     * rxe programs only the link-layer address of a group it attaches; IPv4 delivers a multicast
     * datagram (RoCE v2 is UDP) only on an interface that joined the group, as a socket's join does.
     */
    static DatagramChannel joinOnInterface(String address, Gid group) throws IOException {
        byte[] g = group.raw();
        NetworkInterface nif = NetworkInterface.getByInetAddress(InetAddress.getByName(address));
        DatagramChannel ch = DatagramChannel.open(StandardProtocolFamily.INET).bind(new InetSocketAddress(0));
        ch.join(InetAddress.getByAddress(new byte[]{g[12], g[13], g[14], g[15]}), nif);
        return ch;
    }

    @Test
    void theAttachedQueuePairsReceiveASendToTheGroupAndADetachedOneDoesNot() throws IOException {
        TestBed.Host a = TestBed.hostA();
        TestBed.Host b = TestBed.hostB();
        try (DatagramChannel member = joinOnInterface(a.address(), GROUP);
             Context ctxA = Context.open(a.device());
             Context ctxB = Context.open(b.device());
             SendRequests sends = new SendRequests(1, 1);
             ReceiveRequests recvs = new ReceiveRequests(1, 1);
             WorkCompletions wcs = new WorkCompletions(4)) {
            ProtectionDomain pdA = ctxA.allocateProtectionDomain();
            ProtectionDomain pdB = ctxB.allocateProtectionDomain();
            CompletionQueue[] cqs = new CompletionQueue[3];
            QueuePair[] receivers = new QueuePair[3];
            MemoryRegion mrA = pdA.allocateRegion(3 * 4096, Access.LOCAL_WRITE);
            for (int i = 0; i < 3; i++) {
                cqs[i] = ctxA.createCompletionQueue(4);
                receivers[i] = pdA.createQueuePair(QueuePairInit.of(QpType.UD, cqs[i]).maxSendWr(1).maxRecvWr(4));
                receivers[i].initDatagram(1, QueuePair.DEFAULT_QKEY);
                receivers[i].readyToReceive();
                receivers[i].attachMulticast(GROUP, 0);
                recvs.get(0).wrId(i).sge(mrA, i * 4096L, GRH + 1024);
                receivers[i].postReceive(recvs, 1);
            }
            assertThat(receivers[2].multicastGroups()).containsExactly(GROUP);
            receivers[2].detachMulticast(GROUP, 0);
            assertThat(receivers[2].multicastGroups()).isEmpty();

            CompletionQueue cqB = ctxB.createCompletionQueue(4);
            QueuePair sender = pdB.createQueuePair(QueuePairInit.of(QpType.UD, cqB).maxSendWr(1).maxRecvWr(1));
            sender.initDatagram(1, QueuePair.DEFAULT_QKEY);
            sender.readyToReceive();
            sender.readyToSend(0);
            MemoryRegion mrB = pdB.allocateRegion(4096, Access.LOCAL_WRITE);
            RcDataPathDeviceTest.fill(mrB.segment(), 0, 300, (byte) 'm');
            AddressHandle toGroup = pdB.createAddressHandle(AddressVector.global(1, GROUP, b.gidIndex()));
            sends.reset(0).wrId(9).opcode(Opcode.SEND_WITH_IMM).immediateData(17).flags(SendFlags.SIGNALED)
                    .sge(mrB, 0, 300).ud(toGroup, QueuePair.MULTICAST_QPN, QueuePair.DEFAULT_QKEY);
            sender.postSend(sends, 1);
            assertThat(await(cqB, wcs, 10_000).status()).isEqualTo(WcStatus.SUCCESS);

            for (int i = 0; i < 2; i++) {
                WorkCompletion wc = await(cqs[i], wcs, 10_000);
                assertThat(wc.status()).as("receiver %d", i).isEqualTo(WcStatus.SUCCESS);
                assertThat(wc.opcode()).isEqualTo(WcOpcode.RECV);
                assertThat(wc.srcQp()).isEqualTo(sender.qpNum());
                assertThat(wc.byteLength()).isEqualTo(GRH + 300);
                assertThat(wc.immediateData()).isEqualTo(17);
                assertThat(RcDataPathDeviceTest.count(mrA.segment(), i * 4096L + GRH, 300, (byte) 'm')).isEqualTo(300);
            }
            // the copies to the attached queue pairs arrive together: by now the detached one would have its own
            long deadline = System.nanoTime() + 1_000_000_000L;
            while (System.nanoTime() < deadline) {
                assertThat(cqs[2].poll(wcs)).as("completions of the detached queue pair").isZero();
                Thread.onSpinWait();
            }

            // an attached queue pair closes: it is detached first (else ibv_destroy_qp fails with EBUSY)
            assertThat(receivers[0].multicastGroups()).containsExactly(GROUP);
            receivers[0].close();
            assertThat(receivers[0].isClosed()).isTrue();
            assertThatThrownBy(() -> receivers[0].attachMulticast(GROUP, 0)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("closed");
            // and its parents close the one still attached
            assertThat(receivers[1].multicastGroups()).containsExactly(GROUP);
            toGroup.close();
        }
    }

    @Test
    void misuseIsRefusedNamingWhatIsWrong() {
        try (Context ctx = Context.open(TestBed.loopback().device())) {
            ProtectionDomain pd = ctx.allocateProtectionDomain();
            CompletionQueue cq = ctx.createCompletionQueue(4);
            QueuePair rc = pd.createQueuePair(QueuePairInit.of(QpType.RC, cq));
            assertThatThrownBy(() -> rc.attachMulticast(GROUP, 0)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("only UD").hasMessageContaining("RC");
            QueuePair ud = pd.createQueuePair(QueuePairInit.of(QpType.UD, cq));
            ud.initDatagram(1, QueuePair.DEFAULT_QKEY);
            assertThatThrownBy(() -> ud.detachMulticast(GROUP, 0)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("is not attached");
            ud.attachMulticast(GROUP, 0);
            assertThatThrownBy(() -> ud.attachMulticast(GROUP, 0)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("already");
            Gid unicast = ctx.queryGid(1, TestBed.loopback().gidIndex());
            assertThatThrownBy(() -> ud.attachMulticast(unicast, 0)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("no multicast GID");
            ud.detachMulticast(GROUP, 0);
            ud.attachMulticast(GROUP, 0);
        }
    }

    private static WorkCompletion await(CompletionQueue cq, WorkCompletions wcs, long millis) {
        long deadline = System.nanoTime() + millis * 1_000_000L;
        while (System.nanoTime() < deadline) {
            if (cq.poll(wcs) >= 1) {
                return wcs.get(0);
            }
            Thread.onSpinWait();
        }
        throw new AssertionError("no completion within " + millis + " ms on " + cq);
    }
}
