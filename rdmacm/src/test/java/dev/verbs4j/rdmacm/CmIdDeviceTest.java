package dev.verbs4j.rdmacm;

import dev.verbs4j.verbs.Access;
import dev.verbs4j.verbs.CompletionQueue;
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
import dev.verbs4j.verbs.WcStatus;
import dev.verbs4j.verbs.WorkCompletions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** The asynchronous connection manager API, event by event, between the two test hosts. */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_1)
@Timeout(120)
class CmIdDeviceTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    static InetSocketAddress address(TestBed.Host host, int port) throws Exception {
        return new InetSocketAddress(InetAddress.getByName(host.address()), port);
    }

    static CmEvent expect(EventChannel channel, CmEventType type) {
        CmEvent ev = channel.getEvent(WAIT);
        assertThat(ev).as("event %s within %s", type, WAIT).isNotNull();
        assertThat(ev.type()).as("event %s", ev).isEqualTo(type);
        return ev;
    }

    /** A TCP id of {@code channel} bound to {@code address} and listening with {@code backlog}: ready before any client connects. */
    static CmId listening(EventChannel channel, InetSocketAddress address, int backlog) {
        CmId listener = channel.createId(PortSpace.TCP);
        listener.bind(address);
        listener.listen(backlog);
        return listener;
    }

    @Test
    void connectSendReceiveDisconnect() throws Exception {
        InetSocketAddress serverAddress = address(TestBed.hostB(), 20_001);
        try (EventChannel sch = EventChannel.create(); EventChannel cch = EventChannel.create()) {
            CmId listener = listening(sch, serverAddress, 4);
            assertThat(listener.localPort()).isEqualTo(20_001);
            assertThat(listener.context().name()).isEqualTo(TestBed.hostB().device());

            CmId client = RcEnd.resolved(cch, address(TestBed.hostA(), 0), serverAddress, WAIT);
            assertThat(client.context().name()).isEqualTo(TestBed.hostA().device());
            assertThat(client.peerAddress()).isEqualTo(serverAddress);
            RcEnd clientEnd = RcEnd.on(client, 4);
            ProtectionDomain cpd = clientEnd.pd();
            CompletionQueue ccq = clientEnd.cq();
            QueuePair cqp = clientEnd.qp();
            assertThat(cqp.state()).isEqualTo(QpState.INIT);
            client.connect(ConnectionParameters.DEFAULT.withPrivateData("hello".getBytes(StandardCharsets.US_ASCII)));

            CmEvent request = expect(sch, CmEventType.CONNECT_REQUEST);
            assertThat(request.listener()).isSameAs(listener);
            assertThat(new String(request.privateDataTrimmed(), StandardCharsets.US_ASCII)).isEqualTo("hello");
            CmId server = request.id();
            assertThat(server.peerAddress().getAddress()).isEqualTo(InetAddress.getByName(TestBed.hostA().address()));
            RcEnd serverEnd = RcEnd.on(server, 4);
            ProtectionDomain spd = serverEnd.pd();
            CompletionQueue scq = serverEnd.cq();
            QueuePair sqp = serverEnd.qp();
            MemoryRegion smr = spd.allocateRegion(64, Access.LOCAL_WRITE);
            try (ReceiveRequests rr = new ReceiveRequests(1, 1); SendRequests sr = new SendRequests(1, 1);
                 WorkCompletions wcs = new WorkCompletions(4)) {
                rr.get(0).wrId(7).sge(smr, 0, 64);
                sqp.postReceive(rr, 1);
                server.accept(ConnectionParameters.DEFAULT.withPrivateData(new byte[]{1, 2, 3}));
                CmEvent established = expect(cch, CmEventType.ESTABLISHED);
                assertThat(established.privateDataTrimmed()).containsExactly(1, 2, 3);
                expect(sch, CmEventType.ESTABLISHED);
                assertThat(cqp.queryState()).isEqualTo(QpState.RTS);

                MemoryRegion cmr = cpd.allocateRegion(64, Access.LOCAL_WRITE);
                cmr.segment().setString(0, "ping over RDMA CM", StandardCharsets.US_ASCII);
                sr.reset(0).wrId(9).opcode(Opcode.SEND).flags(SendFlags.SIGNALED).sge(cmr, 0, 64);
                cqp.postSend(sr, 1);
                long deadline = System.nanoTime() + WAIT.toNanos();
                int got = 0;
                while (got == 0 && System.nanoTime() < deadline) {
                    got = ccq.poll(wcs);
                }
                assertThat(got).isEqualTo(1);
                assertThat(wcs.get(0).status()).isEqualTo(WcStatus.SUCCESS);
                got = 0;
                while (got == 0 && System.nanoTime() < deadline) {
                    got = scq.poll(wcs);
                }
                assertThat(got).isEqualTo(1);
                assertThat(wcs.get(0).wrId()).isEqualTo(7);
                assertThat(smr.segment().getString(0, StandardCharsets.US_ASCII)).isEqualTo("ping over RDMA CM");
            }
            // A disconnect completes when both sides have called it: the server answers the request.
            client.disconnect();
            expect(sch, CmEventType.DISCONNECTED);
            server.disconnect();
            assertThat(sqp.queryState()).isEqualTo(QpState.ERR);
            expect(cch, CmEventType.DISCONNECTED);
            serverEnd.close();
            client.close();
            assertThat(cqp.isClosed()).isTrue();
            clientEnd.close();
        }
    }

    @Test
    void rejectCarriesPrivateData() throws Exception {
        InetSocketAddress serverAddress = address(TestBed.hostB(), 20_002);
        try (EventChannel sch = EventChannel.create(); EventChannel cch = EventChannel.create()) {
            CmId listener = listening(sch, serverAddress, 1);
            RcEnd client = RcEnd.on(RcEnd.resolved(cch, null, serverAddress, WAIT), 1);
            client.id().connect(ConnectionParameters.DEFAULT);
            CmEvent request = expect(sch, CmEventType.CONNECT_REQUEST);
            request.id().reject("go away".getBytes(StandardCharsets.US_ASCII));
            CmEvent rejected = expect(cch, CmEventType.REJECTED);
            assertThat(rejected.status()).isEqualTo(CmEvent.REJECT_CONSUMER);
            assertThat(new String(rejected.privateDataTrimmed(), StandardCharsets.US_ASCII)).isEqualTo("go away");
            request.id().close();
            client.close();
        }
    }

    @Test
    void connectToPortNobodyListensOnIsRejected() throws Exception {
        try (EventChannel cch = EventChannel.create()) {
            try (RcEnd client = RcEnd.on(RcEnd.resolved(cch, null, address(TestBed.hostB(), 20_003), WAIT), 1)) {
                long t0 = System.nanoTime();
                client.id().connect(ConnectionParameters.DEFAULT);
                CmEvent ev = cch.getEvent(WAIT);
                assertThat(ev).isNotNull();
                assertThat(ev.type()).isIn(CmEventType.REJECTED, CmEventType.UNREACHABLE);
                assertThat(ev.status()).isEqualTo(CmEvent.REJECT_INVALID_SERVICE_ID);
                assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(WAIT);
            }
        }
    }

    @Test
    void resolveWithoutRouteIsAddrError() throws Exception {
        try (EventChannel cch = EventChannel.create()) {
            CmId client = cch.createId(PortSpace.TCP);
            // TEST-NET-3: no interface or route reaches it inside the test VM
            try {
                client.resolveAddress(null, new InetSocketAddress(InetAddress.getByName("203.0.113.7"), 1), Duration.ofSeconds(2));
                CmEvent ev = cch.getEvent(WAIT);
                assertThat(ev).isNotNull();
                assertThat(ev.type()).isEqualTo(CmEventType.ADDR_ERROR);
                assertThat(ev.status()).isNegative();
            } catch (dev.verbs4j.verbs.VerbsException e) {
                assertThat(e.verb()).isEqualTo("rdma_resolve_addr");
            }
        }
    }
}
