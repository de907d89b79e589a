package dev.verbs4j.rdmacm;

import dev.verbs4j.verbs.QpState;
import dev.verbs4j.verbs.TestBed;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static dev.verbs4j.rdmacm.CmIdDeviceTest.address;
import static dev.verbs4j.rdmacm.CmIdDeviceTest.expect;
import static dev.verbs4j.rdmacm.CmIdDeviceTest.listening;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The connector and the acceptor between the two test hosts: blocking, one event at a time, a rejection, a timeout. */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_1)
@Timeout(120)
class CmConnectorDeviceTest {

    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final CmTimeouts TIMEOUTS = CmTimeouts.of(WAIT, WAIT, WAIT);

    /**
     * A test's two event channels, the server's and the client's, and a listener on the server's
     * bound to {@code serverAddress} on host B; closing closes the client's channel, then the
     * server's (with the ids still on them).
     */
    private record Sides(InetSocketAddress serverAddress, EventChannel sch, EventChannel cch, CmId listener)
            implements AutoCloseable {

        static Sides listeningOn(int port) throws Exception {
            InetSocketAddress serverAddress = address(TestBed.hostB(), port);
            EventChannel sch = EventChannel.create();
            try {
                CmId listener = listening(sch, serverAddress, 4);
                return new Sides(serverAddress, sch, EventChannel.create(), listener);
            } catch (RuntimeException | Error e) {
                sch.close();
                throw e;
            }
        }

        @Override
        public void close() {
            try {
                cch.close();
            } finally {
                sch.close();
            }
        }
    }

    /**
     * Steps of a client that gets an RC end of {@code depth} once its route is resolved and
     * connects with {@code parameters}; the end, once made, is {@link #end}, the caller's to close.
     */
    private static final class EndOnRoute implements CmConnector.Steps {
        private final int depth;
        private final ConnectionParameters parameters;
        RcEnd end;

        EndOnRoute(int depth, ConnectionParameters parameters) {
            this.depth = depth;
            this.parameters = parameters;
        }

        @Override
        public ConnectionParameters routeResolved(CmId id) {
            end = RcEnd.on(id, depth);
            return parameters;
        }
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    @Test
    void blockingConnectAndAccept() throws Exception {
        try (Sides sides = Sides.listeningOn(20_201); EventChannel own = EventChannel.create()) {
            InetSocketAddress serverAddress = sides.serverAddress();
            CmId listener = sides.listener();
            RcEnd[] serverEnd = new RcEnd[1];
            CompletableFuture<CmAcceptor> served = CompletableFuture.supplyAsync(() -> {
                try {
                    CmAcceptor a = CmAcceptor.awaitRequest(listener, WAIT, TIMEOUTS);
                    a.id().migrate(own); // its events, ESTABLISHED first, on a channel of its own
                    serverEnd[0] = RcEnd.on(a.id(), 4);
                    a.accept(ConnectionParameters.DEFAULT.withPrivateData(ascii("welcome")));
                    a.awaitEstablished();
                    return a;
                } catch (RdmaConnectionException e) {
                    throw new IllegalStateException(e);
                }
            }, r -> Thread.ofVirtual().start(r));

            CmId client = sides.cch().createId(PortSpace.TCP);
            EndOnRoute clientEnd = new EndOnRoute(4, ConnectionParameters.DEFAULT.withPrivateData(ascii("hello")));
            CmConnector c = CmConnector.connect(client, address(TestBed.hostA(), 0), serverAddress, TIMEOUTS, clientEnd);
            assertThat(c.phase()).isEqualTo(CmPhase.ESTABLISHED);
            assertThat(c.established().privateDataTrimmed()).isEqualTo(ascii("welcome"));
            assertThat(clientEnd.end.qp().queryState()).isEqualTo(QpState.RTS);

            CmAcceptor a = served.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            assertThat(a.phase()).isEqualTo(CmPhase.ESTABLISHED);
            assertThat(a.established().type()).isEqualTo(CmEventType.ESTABLISHED);
            assertThat(new String(a.request().privateDataTrimmed(), StandardCharsets.US_ASCII)).isEqualTo("hello");
            assertThat(a.peer().getAddress()).isEqualTo(address(TestBed.hostA(), 0).getAddress());
            client.disconnect();
            expect(own, CmEventType.DISCONNECTED);
            serverEnd[0].close();
            client.close();
            clientEnd.end.close();
        }
    }

    @Test
    void stepwiseConnectAndAccept() throws Exception {
        try (Sides sides = Sides.listeningOn(20_202)) {
            EventChannel sch = sides.sch();
            EventChannel cch = sides.cch();
            CmId client = cch.createId(PortSpace.TCP);
            // the steps rest once the route is resolved: the caller connects
            CmConnector c = CmConnector.start(client, null, sides.serverAddress(), TIMEOUTS, id -> null);
            assertThat(c.phase()).isEqualTo(CmPhase.ADDRESS_RESOLUTION);
            assertThat(c.advance(expect(cch, CmEventType.ADDR_RESOLVED))).isEqualTo(CmPhase.ROUTE_RESOLUTION);
            assertThat(c.remainingNanos()).isPositive();
            assertThat(c.advance(expect(cch, CmEventType.ROUTE_RESOLVED))).isEqualTo(CmPhase.READY_TO_CONNECT);
            c.checkTimeout(); // a resting phase does not time out
            RcEnd clientEnd = RcEnd.on(client, 4);
            c.connectWith(ConnectionParameters.DEFAULT);
            assertThat(c.phase()).isEqualTo(CmPhase.CONNECTION);

            CmAcceptor a = CmAcceptor.of(expect(sch, CmEventType.CONNECT_REQUEST), TIMEOUTS);
            assertThat(a.phase()).isEqualTo(CmPhase.DECISION);
            RcEnd serverEnd = RcEnd.on(a.id(), 4);
            a.accept(ConnectionParameters.DEFAULT);
            assertThat(a.phase()).isEqualTo(CmPhase.ACCEPTANCE);
            assertThat(c.advance(expect(cch, CmEventType.ESTABLISHED))).isEqualTo(CmPhase.ESTABLISHED);
            assertThat(a.advance(expect(sch, CmEventType.ESTABLISHED))).isEqualTo(CmPhase.ESTABLISHED);
            assertThatThrownBy(() -> c.connectWith(ConnectionParameters.DEFAULT)).isInstanceOf(IllegalStateException.class);
            client.disconnect();
            expect(sch, CmEventType.DISCONNECTED);
            serverEnd.close();
            clientEnd.close();
        }
    }

    @Test
    void aRejectionsReasonReachesTheConnector() throws Exception {
        try (Sides sides = Sides.listeningOn(20_203)) {
            InetSocketAddress serverAddress = sides.serverAddress();
            EventChannel sch = sides.sch();
            EventChannel cch = sides.cch();
            CmId client = cch.createId(PortSpace.TCP);
            EndOnRoute clientEnd = new EndOnRoute(2, ConnectionParameters.DEFAULT);
            CmConnector c = CmConnector.start(client, null, serverAddress, TIMEOUTS, clientEnd);
            c.advance(expect(cch, CmEventType.ADDR_RESOLVED));
            assertThat(c.advance(expect(cch, CmEventType.ROUTE_RESOLVED))).isEqualTo(CmPhase.CONNECTION);

            CmAcceptor a = CmAcceptor.of(expect(sch, CmEventType.CONNECT_REQUEST), TIMEOUTS);
            RejectionReason reason = new RejectionReason("no room for you");
            a.reject(reason);
            assertThat(a.phase()).isEqualTo(CmPhase.REJECTED);
            assertThat(a.id().isClosed()).isTrue();

            CmEvent rejected = expect(cch, CmEventType.REJECTED);
            assertThatThrownBy(() -> c.advance(rejected))
                    .isInstanceOfSatisfying(RdmaConnectionException.class, e -> {
                        assertThat(e.kind()).isEqualTo(Failure.Kind.EVENT);
                        assertThat(e.rejectionReason()).isEqualTo("no room for you");
                        assertThat(e.getMessage()).contains("connect to " + serverAddress, "no room for you");
                    });
            assertThat(c.rejectionReason()).isEqualTo(reason);
            assertThat(c.phase()).isEqualTo(CmPhase.CONNECTION);
            client.close();
            clientEnd.end.close();
        }
    }

    @Test
    void aPhaseTimeoutNamesItsPhase() throws Exception {
        try (Sides sides = Sides.listeningOn(20_204)) {
            InetSocketAddress serverAddress = sides.serverAddress();
            assertThatThrownBy(() -> CmAcceptor.awaitRequest(sides.listener(), Duration.ofMillis(300), TIMEOUTS))
                    .isInstanceOf(RdmaTimeoutException.class)
                    .hasMessage("listen on " + serverAddress + ": timed out in phase connection request (no RDMA_CM_EVENT_CONNECT_REQUEST within 300 ms)");

            // the listener takes the request but never answers it: the connection phase runs out
            CmId client = sides.cch().createId(PortSpace.TCP);
            EndOnRoute clientEnd = new EndOnRoute(2, ConnectionParameters.DEFAULT);
            assertThatThrownBy(() -> CmConnector.connect(client, null, serverAddress,
                    CmTimeouts.of(WAIT, WAIT, Duration.ofMillis(500)), clientEnd))
                    .isInstanceOf(RdmaTimeoutException.class)
                    .hasMessage("connect to " + serverAddress + ": timed out in phase connection (no RDMA_CM_EVENT_ESTABLISHED within 500 ms)");
            CmAcceptor a = CmAcceptor.of(expect(sides.sch(), CmEventType.CONNECT_REQUEST), TIMEOUTS);
            a.reject(new byte[0]);
            client.close();
            clientEnd.end.close();
        }
    }
}
