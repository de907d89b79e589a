package dev.verbs4j.rdmacm;

import dev.verbs4j.verbs.CompletionQueue;
import dev.verbs4j.verbs.ProtectionDomain;
import dev.verbs4j.verbs.QpState;
import dev.verbs4j.verbs.QpType;
import dev.verbs4j.verbs.QueuePair;
import dev.verbs4j.verbs.QueuePairInit;
import dev.verbs4j.verbs.TestBed;
import dev.verbs4j.verbs.VerbsException;
import dev.verbs4j.verbs.internal.Libc;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static dev.verbs4j.rdmacm.CmIdDeviceTest.address;
import static dev.verbs4j.rdmacm.CmIdDeviceTest.expect;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Event channels (timeouts, readiness, wake-up on close, migration), options, and the synchronous
 * API ({@code rdma_getaddrinfo}, {@code rdma_create_ep}, {@code rdma_get_request}).
 */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_1)
@Timeout(180)
class CmApiDeviceTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    @Test
    void getEventTimesOutAndTheFdSignalsReadiness() throws Exception {
        try (EventChannel ch = EventChannel.create()) {
            long t0 = System.nanoTime();
            assertThat(ch.getEvent(Duration.ofMillis(200))).isNull();
            assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(5));
            assertThat(ch.tryGetEvent()).isNull();
            assertThat(Libc.pollReadable(new int[]{ch.fd()}, 0)).isEqualTo(-1);

            CmId id = ch.createId(PortSpace.TCP);
            id.resolveAddress(null, address(TestBed.hostB(), 20_030), WAIT);
            assertThat(Libc.pollReadable(new int[]{ch.fd()}, (int) WAIT.toMillis())).isZero();
            CmEvent ev = ch.tryGetEvent();
            assertThat(ev).isNotNull();
            assertThat(ev.type()).isEqualTo(CmEventType.ADDR_RESOLVED);
            assertThat(ev.id()).isSameAs(id);
            assertThat(id.lastEvent()).isEqualTo(CmEventType.ADDR_RESOLVED);
            assertThat(id.hasDevice()).isTrue();
            assertThat(id.portNumber()).isEqualTo(1);
        }
    }

    @Test
    void closingTheChannelWakesAWaiterAndClosesItsIds() throws Exception {
        EventChannel ch = EventChannel.create();
        CmId id = ch.createId(PortSpace.TCP);
        CompletableFuture<Throwable> waiter = new CompletableFuture<>();
        Thread t = Thread.ofPlatform().start(() -> {
            try {
                ch.getEvent(Duration.ofMinutes(2));
                waiter.complete(null);
            } catch (Throwable e) {
                waiter.complete(e);
            }
        });
        Thread.sleep(300);
        ch.close();
        assertThat(waiter.get(20, TimeUnit.SECONDS)).isInstanceOf(IllegalStateException.class);
        t.join(5_000);
        assertThat(id.isClosed()).isTrue();
        assertThatThrownBy(() -> id.bind(address(TestBed.hostB(), 0))).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
        assertThatThrownBy(() -> ch.createId(PortSpace.TCP)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void migratedIdsReportOnTheirNewChannel() throws Exception {
        try (EventChannel first = EventChannel.create(); EventChannel second = EventChannel.create()) {
            CmId id = first.createId(PortSpace.TCP);
            id.resolveAddress(address(TestBed.hostA(), 0), address(TestBed.hostB(), 20_031), WAIT);
            expect(first, CmEventType.ADDR_RESOLVED);
            id.migrate(second);
            assertThat(id.channel()).isSameAs(second);
            id.resolveRoute(WAIT);
            assertThat(expect(second, CmEventType.ROUTE_RESOLVED).id()).isSameAs(id);
            assertThat(first.getEvent(Duration.ofMillis(100))).isNull();
            first.close();
            assertThat(id.isClosed()).isFalse();
            second.close();
            assertThat(id.isClosed()).isTrue();
        }
    }

    @Test
    void optionsAreAppliedOrRefusedClearly() throws Exception {
        try (EventChannel ch = EventChannel.create()) {
            CmId a = ch.createId(PortSpace.TCP);
            CmId b = ch.createId(PortSpace.TCP);
            a.bind(address(TestBed.hostB(), 20_032));
            assertThatThrownBy(() -> b.bind(address(TestBed.hostB(), 20_032)))
                    .isInstanceOfSatisfying(VerbsException.class, e -> {
                        assertThat(e.verb()).isEqualTo("rdma_bind_addr");
                        assertThat(e.errnoName()).isEqualTo("EADDRINUSE");
                    });
            CmId c = ch.createId(PortSpace.TCP);
            CmId d = ch.createId(PortSpace.TCP);
            c.setReuseAddress(true);
            d.setReuseAddress(true);
            c.bind(address(TestBed.hostB(), 20_033));
            d.bind(address(TestBed.hostB(), 20_033));
            assertThat(d.localPort()).isEqualTo(20_033);

            CmId e = ch.createId(PortSpace.TCP);
            e.setTypeOfService(32);
            e.setAfOnly(false);
            e.bind(address(TestBed.hostB(), 0));
            assertThat(e.localPort()).isPositive();
            e.resolveAddress(null, address(TestBed.hostB(), 20_034), WAIT);
            expect(ch, CmEventType.ADDR_RESOLVED);
            e.setAckTimeout(14);
            assertThatThrownBy(() -> e.setAckTimeout(32)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("32");
            assertThatThrownBy(() -> e.setTypeOfService(256)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> e.listen(-1)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> e.resolveRoute(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("timeout");
        }
    }

    @Test
    void queuePairMustComeFromTheIdsDevice() throws Exception {
        try (EventChannel ch = EventChannel.create()) {
            CmId onA = ch.createId(PortSpace.TCP);
            onA.bind(address(TestBed.hostA(), 0));
            CmId onB = ch.createId(PortSpace.TCP);
            onB.bind(address(TestBed.hostB(), 0));
            assertThat(onA.context()).isNotSameAs(onB.context());
            assertThat(onB.context()).isSameAs(onB.context());
            ProtectionDomain pdA = onA.context().allocateProtectionDomain();
            CompletionQueue cqA = onA.context().createCompletionQueue(4);
            assertThatThrownBy(() -> onB.createQueuePair(pdA, QueuePairInit.of(QpType.RC, cqA)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(TestBed.hostB().device());
            QueuePair qp = onA.createQueuePair(pdA, QueuePairInit.of(QpType.RC, cqA));
            assertThat(onA.queuePair()).isSameAs(qp);
            assertThatThrownBy(() -> onA.createQueuePair(pdA, QueuePairInit.of(QpType.RC, cqA)))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("already");
            // Closing the protection domain closes the id's queue pair; the id stays usable.
            pdA.close();
            assertThat(qp.isClosed()).isTrue();
            assertThat(onA.queuePair()).isNull();
            cqA.close();
            CmId unbound = ch.createId(PortSpace.TCP);
            assertThatThrownBy(unbound::context).isInstanceOf(IllegalStateException.class).hasMessageContaining("not bound");
        }
    }

    @Test
    void synchronousEndpointsConnectAndCarryPrivateData() throws Exception {
        String port = "20035";
        try (AddressInfo passive = AddressInfo.resolve(TestBed.hostB().address(), port, AddressInfo.PASSIVE, PortSpace.TCP);
             CmId listener = CmId.createEndpoint(passive.first())) {
            assertThat(passive.first().source()).isEqualTo(address(TestBed.hostB(), 20_035));
            assertThat(listener.channel()).isNull();
            listener.listen(1);
            // A synchronous disconnect returns once the peer has disconnected too: the server
            // reports what it saw, then waits in disconnect() for the client's.
            CompletableFuture<String> accepted = new CompletableFuture<>();
            CompletableFuture<Void> served = CompletableFuture.runAsync(() -> {
                try (CmId conn = listener.getRequest()) {
                    String hello = new String(conn.lastPrivateData(), StandardCharsets.US_ASCII).replace("\0", "");
                    try (RcEnd end = RcEnd.on(conn, 1)) {
                        conn.accept(ConnectionParameters.DEFAULT);
                        accepted.complete(hello + " " + end.qp().queryState());
                        conn.disconnect();
                    }
                } catch (RuntimeException e) {
                    accepted.completeExceptionally(e);
                    throw e;
                }
            });
            try (AddressInfo active = AddressInfo.resolve(TestBed.hostB().address(), port, 0, PortSpace.TCP);
                 CmId client = CmId.createEndpoint(active.first())) {
                assertThat(active.first().destination()).isEqualTo(address(TestBed.hostB(), 20_035));
                try (RcEnd end = RcEnd.on(client, 1)) {
                    client.connect(ConnectionParameters.DEFAULT.withPrivateData("sync hello".getBytes(StandardCharsets.US_ASCII)));
                    assertThat(end.qp().queryState()).isEqualTo(QpState.RTS);
                    assertThat(accepted.get(60, TimeUnit.SECONDS)).isEqualTo("sync hello RTS");
                    client.disconnect();
                    served.get(60, TimeUnit.SECONDS);
                }
            }
            assertThatThrownBy(() -> AddressInfo.resolve("no-such-host.invalid", port, 0, PortSpace.TCP))
                    .isInstanceOfSatisfying(VerbsException.class, e -> assertThat(e.verb()).isEqualTo("rdma_getaddrinfo"));
        }
    }

    @Test
    void synchronousConnectToNobodyIsRefused() throws Exception {
        try (AddressInfo active = AddressInfo.resolve(TestBed.hostB().address(), "20036", 0, PortSpace.TCP);
             CmId client = CmId.createEndpoint(active.first())) {
            RcEnd end = RcEnd.on(client, 1);
            long t0 = System.nanoTime();
            assertThatThrownBy(() -> client.connect(ConnectionParameters.DEFAULT))
                    .isInstanceOfSatisfying(VerbsException.class, e -> {
                        assertThat(e.verb()).isEqualTo("rdma_connect");
                        assertThat(e.errnoName()).isEqualTo("ECONNREFUSED");
                    });
            assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(10));
            assertThatThrownBy(client::getRequest).isInstanceOf(IllegalStateException.class).hasMessageContaining("listen");
            end.close();
        }
    }
}
