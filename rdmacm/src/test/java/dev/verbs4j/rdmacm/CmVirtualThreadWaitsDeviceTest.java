package dev.verbs4j.rdmacm;

import dev.verbs4j.verbs.ParkedWaits;
import dev.verbs4j.verbs.TestBed;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.InetSocketAddress;
import java.time.Duration;

import static dev.verbs4j.rdmacm.CmIdDeviceTest.address;
import static dev.verbs4j.rdmacm.CmIdDeviceTest.expect;
import static dev.verbs4j.rdmacm.CmIdDeviceTest.listening;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The blocking calls of the connection manager on virtual threads: more virtual threads than
 * carriers wait in {@link EventChannel#getEvent} or a synchronous id's {@link CmId#getRequest}
 * at once, parked (their carriers run other virtual threads meanwhile, JFR reports none pinned),
 * beside one platform thread in the same call; an event wakes a virtual thread (also one in a
 * synchronous {@link CmId#connect}), and closing the channel or id wakes them all with the
 * exception the platform thread gets.
 */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_1)
@Timeout(120)
class CmVirtualThreadWaitsDeviceTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    @Test
    void getEventWaitersParkAndClosingTheChannelWakesThemAsItWakesAPlatformThread() throws Exception {
        ParkedWaits.rehearsed(checked -> {
            EventChannel channel = EventChannel.create();
            try (ParkedWaits waits = ParkedWaits.start("EventChannel.getEvent", "pollReadable",
                    () -> channel.getEvent(Duration.ofSeconds(60)))) {
                waits.assertWokenAlike(checked, channel::close, "threw java.lang.IllegalStateException");
            } finally {
                channel.close();
            }
        });
    }

    @Test
    void anEventWakesAVirtualThreadParkedInGetEvent() throws Exception {
        try (EventChannel channel = EventChannel.create()) {
            CmId id = channel.createId(PortSpace.TCP);
            try (ParkedWaits waits = ParkedWaits.startOne("EventChannel.getEvent", () -> channel.getEvent(WAIT).type())) {
                waits.awaitParked();
                waits.assertCarriersFree();
                id.resolveAddress(address(TestBed.hostA(), 0), address(TestBed.hostB(), 20_710), WAIT);
                assertThat(waits.virtualOutcomes()).containsExactly("returned " + CmEventType.ADDR_RESOLVED);
                waits.assertNonePinned();
            }
        }
    }

    @Test
    void getRequestWaitersParkAndClosingTheListenerWakesThemAsItWakesAPlatformThread() throws Exception {
        ParkedWaits.rehearsed(checked -> {
            CmId listener = CmId.createSynchronous(PortSpace.TCP);
            try {
                listener.bind(address(TestBed.hostB(), checked ? 20_711 : 20_713));
                listener.listen(4);
                // one waits for the request, the others for their turn (one synchronous operation at a time)
                try (ParkedWaits waits = ParkedWaits.start("CmId.getRequest", "getRequest", listener::getRequest)) {
                    assertThat(waits.assertWokenAlike(checked, listener::close, "threw java.lang.IllegalStateException"))
                            .contains("was closed while rdma_get_request waited");
                }
            } finally {
                listener.close();
            }
        });
    }

    @Test
    void theServersAcceptWakesAVirtualThreadParkedInASynchronousConnect() throws Exception {
        InetSocketAddress serverAddress = address(TestBed.hostB(), 20_712);
        try (EventChannel serverChannel = EventChannel.create(); CmId client = CmId.createSynchronous(PortSpace.TCP)) {
            listening(serverChannel, serverAddress, 4);
            client.resolveAddress(address(TestBed.hostA(), 0), serverAddress, WAIT);
            client.resolveRoute(WAIT);
            RcEnd.on(client, 4);
            try (ParkedWaits waits = ParkedWaits.startOne("CmId.connect", () -> {
                client.connect(ConnectionParameters.DEFAULT);
                return client.lastEvent();
            })) {
                CmId server = expect(serverChannel, CmEventType.CONNECT_REQUEST).id();
                waits.awaitParked();
                waits.assertCarriersFree();
                RcEnd.on(server, 4);
                server.accept(ConnectionParameters.DEFAULT);
                assertThat(waits.virtualOutcomes()).containsExactly("returned " + CmEventType.ESTABLISHED);
                expect(serverChannel, CmEventType.ESTABLISHED);
                waits.assertNonePinned();
                // the server first: the client's synchronous disconnect then finds its DISCONNECTED event
                server.disconnect();
                client.disconnect();
                expect(serverChannel, CmEventType.DISCONNECTED);
            }
        }
    }
}
