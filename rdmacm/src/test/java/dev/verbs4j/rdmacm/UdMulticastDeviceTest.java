package dev.verbs4j.rdmacm;

import dev.verbs4j.verbs.Access;
import dev.verbs4j.verbs.AddressHandle;
import dev.verbs4j.verbs.CompletionQueue;
import dev.verbs4j.verbs.Gid;
import dev.verbs4j.verbs.MemoryRegion;
import dev.verbs4j.verbs.Opcode;
import dev.verbs4j.verbs.ProtectionDomain;
import dev.verbs4j.verbs.QpState;
import dev.verbs4j.verbs.QpType;
import dev.verbs4j.verbs.QueuePair;
import dev.verbs4j.verbs.QueuePairInit;
import dev.verbs4j.verbs.ReceiveRequests;
import dev.verbs4j.verbs.SendFlags;
import dev.verbs4j.verbs.SendRequests;
import dev.verbs4j.verbs.TestBed;
import dev.verbs4j.verbs.WorkCompletion;
import dev.verbs4j.verbs.WorkCompletions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import static dev.verbs4j.rdmacm.CmIdDeviceTest.address;
import static dev.verbs4j.rdmacm.CmIdDeviceTest.expect;
import static org.assertj.core.api.Assertions.assertThat;

/** UD over the connection manager (service id lookup, Q_Key and address from the events) and multicast. */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_1)
@Timeout(180)
class UdMulticastDeviceTest {

    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final int GRH = 40;

    /** An id with a UD queue pair, a 256-byte buffer (GRH + message) and its completion queue. */
    record UdEnd(CmId id, ProtectionDomain pd, CompletionQueue cq, QueuePair qp, MemoryRegion mr) implements AutoCloseable {

        static UdEnd on(CmId id) {
            ProtectionDomain pd = id.context().allocateProtectionDomain();
            CompletionQueue cq = id.context().createCompletionQueue(8);
            QueuePair qp = id.createQueuePair(pd, QueuePairInit.of(QpType.UD, cq).maxSendWr(4).maxRecvWr(4));
            return new UdEnd(id, pd, cq, qp, pd.allocateRegion(256, Access.LOCAL_WRITE));
        }

        void postReceive() {
            try (ReceiveRequests rr = new ReceiveRequests(1, 1)) {
                rr.get(0).wrId(1).sge(mr, 0, 256);
                qp.postReceive(rr, 1);
            }
        }

        void send(AddressHandle ah, int qpn, int qkey, String text) {
            byte[] b = text.getBytes(StandardCharsets.US_ASCII);
            MemorySegment.copy(MemorySegment.ofArray(b), 0, mr.segment(), GRH, b.length);
            try (SendRequests sr = new SendRequests(1, 1)) {
                sr.reset(0).wrId(2).opcode(Opcode.SEND_WITH_IMM).flags(SendFlags.SIGNALED).immediateData(qp.qpNum())
                        .ud(ah, qpn, qkey).sge(mr, GRH, b.length);
                qp.postSend(sr, 1);
            }
            try (WorkCompletions wcs = new WorkCompletions(1)) {
                WorkCompletion wc = poll(wcs, null);
                assertThat(wc.isSuccess()).as("send %s", wc).isTrue();
                assertThat(wc.wrId()).isEqualTo(2);
            }
        }

        private WorkCompletion poll(WorkCompletions wcs, Object unused) {
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (cq.poll(wcs) == 0) {
                assertThat(System.nanoTime()).as("a completion within %s", WAIT).isLessThan(deadline);
            }
            return wcs.get(0);
        }

        /**
         * Takes one receive and returns its text, checking GRH, immediate data and sender; with
         * {@code reply} non-null, puts an address handle back to the sender in {@code reply[0]}.
         */
        String receive(int senderQpn, AddressHandle[] reply) {
            try (WorkCompletions wcs = new WorkCompletions(1)) {
                WorkCompletion wc = poll(wcs, null);
                assertThat(wc.isSuccess()).as("receive %s", wc).isTrue();
                assertThat(wc.flags() & WorkCompletion.FLAG_WITH_IMM).isNotZero();
                assertThat(wc.flags() & WorkCompletion.FLAG_GRH).isNotZero();
                assertThat(wc.immediateData()).isEqualTo(senderQpn);
                assertThat(wc.srcQp()).isEqualTo(senderQpn);
                assertThat(wc.byteLength()).isGreaterThan(GRH);
                if (reply != null) {
                    reply[0] = pd.createAddressHandle(wc, mr.segment(), id.portNumber());
                }
                return new String(mr.segment().asSlice(GRH, wc.byteLength() - GRH).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE),
                        StandardCharsets.US_ASCII);
            }
        }

        @Override
        public void close() {
            qp.close();
            cq.close();
            mr.close();
            pd.close();
            id.close();
        }
    }

    private static ConnectionParameters datagram(int qpNum) {
        return new ConnectionParameters(new byte[0], 0, 0, false, 0, 0, false, qpNum);
    }

    @Test
    void udServiceLookupSendAndReply() throws Exception {
        InetSocketAddress serverAddress = address(TestBed.hostB(), 20_101);
        try (EventChannel sch = EventChannel.create(); EventChannel cch = EventChannel.create()) {
            CmId listener = sch.createId(PortSpace.UDP);
            assertThat(listener.qpType()).isEqualTo(QpType.UD);
            listener.bind(serverAddress);
            listener.listen(1);

            CmId clientId = cch.createId(PortSpace.UDP);
            clientId.resolveAddress(address(TestBed.hostA(), 0), serverAddress, WAIT);
            expect(cch, CmEventType.ADDR_RESOLVED);
            clientId.resolveRoute(WAIT);
            expect(cch, CmEventType.ROUTE_RESOLVED);
            try (UdEnd client = UdEnd.on(clientId)) {
                assertThat(client.qp().queryState()).as("librdmacm readies a UD QP at once").isEqualTo(QpState.RTS);
                client.postReceive();
                client.id().connect(datagram(0));

                CmEvent request = expect(sch, CmEventType.CONNECT_REQUEST);
                assertThat(request.listener()).isSameAs(listener);
                try (UdEnd server = UdEnd.on(request.id())) {
                    assertThat(server.id().qpType()).isEqualTo(QpType.UD);
                    server.postReceive();
                    server.id().accept(datagram(server.qp().qpNum()));

                    CmEvent resolved = expect(cch, CmEventType.ESTABLISHED);
                    UdParameters ud = resolved.datagram();
                    assertThat(ud).isNotNull();
                    assertThat(ud.qpNum()).isEqualTo(server.qp().qpNum());
                    assertThat(ud.qkey()).isEqualTo(CmId.UDP_QKEY);
                    assertThat(ud.destination().gid()).isNotNull();
                    try (AddressHandle toServer = client.pd().createAddressHandle(ud.destination())) {
                        client.send(toServer, ud.qpNum(), ud.qkey(), "datagram over RDMA CM");
                    }
                    AddressHandle[] back = new AddressHandle[1];
                    assertThat(server.receive(client.qp().qpNum(), back)).isEqualTo("datagram over RDMA CM");
                    // The reply goes to the address of the datagram, with the Q_Key librdmacm gave the client's QP.
                    try (AddressHandle toClient = back[0]) {
                        server.send(toClient, client.qp().qpNum(), CmId.UDP_QKEY, "and back");
                    }
                    assertThat(client.receive(server.qp().qpNum(), null)).isEqualTo("and back");
                }
            }
        }
    }

    @Test
    void multicastSameDevice() throws Exception {
        multicast(TestBed.hostB(), TestBed.hostB(), "239.0.0.31", false);
    }

    @Test
    void multicastAcrossHosts() throws Exception {
        multicast(TestBed.hostA(), TestBed.hostB(), "239.0.0.32", false);
    }

    @Test
    void multicastSendOnlyJoin() throws Exception {
        multicast(TestBed.hostB(), TestBed.hostB(), "239.0.0.33", true);
    }

    /** A receiver on {@code to} and a sender on {@code from} join {@code group}; two messages go; both leave. */
    private static void multicast(TestBed.Host from, TestBed.Host to, String group, boolean sendOnly) throws Exception {
        InetSocketAddress groupAddress = new InetSocketAddress(InetAddress.getByName(group), 0);
        byte[] mapped = new byte[16];
        mapped[10] = (byte) 0xff;
        mapped[11] = (byte) 0xff;
        System.arraycopy(groupAddress.getAddress().getAddress(), 0, mapped, 12, 4);
        try (EventChannel rch = EventChannel.create(); EventChannel sch = EventChannel.create()) {
            CmId rid = rch.createId(PortSpace.UDP);
            rid.bind(address(to, 0));
            rid.resolveAddress(address(to, 0), groupAddress, WAIT);
            expect(rch, CmEventType.ADDR_RESOLVED);
            assertThat(rid.context().name()).isEqualTo(to.device());
            try (UdEnd receiver = UdEnd.on(rid)) {
                receiver.postReceive();
                receiver.postReceive();
                rid.joinMulticast(groupAddress);
                UdParameters rj = expect(rch, CmEventType.MULTICAST_JOIN).datagram();
                assertThat(rj).isNotNull();
                assertThat(rj.qpNum()).isEqualTo(0xFFFFFF);
                assertThat(rj.qkey()).isEqualTo(CmId.UDP_QKEY);
                assertThat(rj.destination().gid()).isEqualTo(Gid.of(mapped));

                CmId sid = sch.createId(PortSpace.UDP);
                sid.bind(address(from, 0));
                sid.resolveAddress(address(from, 0), groupAddress, WAIT);
                expect(sch, CmEventType.ADDR_RESOLVED);
                try (UdEnd sender = UdEnd.on(sid)) {
                    sid.joinMulticast(groupAddress, sendOnly);
                    UdParameters sj = expect(sch, CmEventType.MULTICAST_JOIN).datagram();
                    assertThat(sj.qpNum()).isEqualTo(0xFFFFFF);
                    assertThat(sj.destination().gid()).isEqualTo(Gid.of(mapped));
                    try (AddressHandle ah = sender.pd().createAddressHandle(sj.destination())) {
                        sender.send(ah, sj.qpNum(), sj.qkey(), "to the group, 1");
                        assertThat(receiver.receive(sender.qp().qpNum(), null)).isEqualTo("to the group, 1");
                        sender.send(ah, sj.qpNum(), sj.qkey(), "to the group, 2");
                        assertThat(receiver.receive(sender.qp().qpNum(), null)).isEqualTo("to the group, 2");
                    }
                    sid.leaveMulticast(groupAddress);
                }
                rid.leaveMulticast(groupAddress);
                assertThat(rch.tryGetEvent()).as("no event after a clean leave").isNull();
            }
        }
    }
}
