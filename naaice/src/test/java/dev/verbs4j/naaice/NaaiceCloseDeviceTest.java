package dev.verbs4j.naaice;

import dev.verbs4j.rdmacm.CmEvent;
import dev.verbs4j.rdmacm.CmEventType;
import dev.verbs4j.rdmacm.CmId;
import dev.verbs4j.rdmacm.ConnectionParameters;
import dev.verbs4j.rdmacm.EventChannel;
import dev.verbs4j.rdmacm.PortSpace;
import dev.verbs4j.verbs.Access;
import dev.verbs4j.verbs.CompletionChannel;
import dev.verbs4j.verbs.CompletionQueue;
import dev.verbs4j.verbs.MemoryRegion;
import dev.verbs4j.verbs.Opcode;
import dev.verbs4j.verbs.ProtectionDomain;
import dev.verbs4j.verbs.QpType;
import dev.verbs4j.verbs.QueuePair;
import dev.verbs4j.verbs.QueuePairInit;
import dev.verbs4j.verbs.RdmaArena;
import dev.verbs4j.verbs.ReceiveRequests;
import dev.verbs4j.verbs.SendFlags;
import dev.verbs4j.verbs.SendRequests;
import dev.verbs4j.verbs.TestBed;
import dev.verbs4j.verbs.WcOpcode;
import dev.verbs4j.verbs.WorkCompletion;
import dev.verbs4j.verbs.WorkCompletions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Closing a client before its region setup is through, against a NAA that behaves like the C
 * software NAA: its completion queue armed for solicited completions only, a 768-byte MRSP
 * receive posted before it accepts. The C NAA crashes when the host disconnects before the region
 * setup (its worker enters the data phase without regions), so the client must first send an MRSP
 * error message with SE and give the NAA time to take it, or wait for the answer to a request it
 * already sent.
 */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_3)
@Timeout(300)
class NaaiceCloseDeviceTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final int C_BUFFER = 768;

    /** One message the probe received, when, and whether a solicited-only armed queue signalled it. */
    record Received(byte[] bytes, long nanos, boolean solicitedEvent) {
        String hex() {
            return HexFormat.ofDelimiter(" ").formatHex(bytes);
        }
    }

    /** What the probe saw on its one connection. */
    static final class Timeline {
        final List<Received> messages = new ArrayList<>();
        long advertiseNanos = -1;
        long disconnectedNanos = -1;
        final List<String> unexpected = new ArrayList<>();
    }

    /**
     * A one-connection NAA probe on a thread of its own: accepts like the C NAA, records the MRSP
     * messages it receives (with whether each raised a solicited-only event) and the time of the
     * client's disconnect; answers a request with an advertise after {@code advertiseDelay}.
     */
    private static CompletableFuture<Timeline> probe(CmId listener, EventChannel events, Duration advertiseDelay) {
        return CompletableFuture.supplyAsync(() -> {
            Timeline t = new Timeline();
            CmEvent req = events.getEvent(WAIT);
            if (req == null || req.type() != CmEventType.CONNECT_REQUEST) {
                throw new IllegalStateException("expected a connect request, got " + req);
            }
            CmId id = req.id();
            try (ProtectionDomain pd = id.context().allocateProtectionDomain();
                 CompletionChannel channel = id.context().createCompletionChannel();
                 CompletionQueue cq = id.context().createCompletionQueue(64, channel, 0);
                 ReceiveRequests recv = new ReceiveRequests(1, 1);
                 SendRequests send = new SendRequests(1, 1);
                 WorkCompletions wcs = new WorkCompletions(8);
                 RdmaArena arena = RdmaArena.ofShared()) {
                QueuePair qp = id.createQueuePair(pd, QueuePairInit.of(QpType.RC, cq).maxSendWr(8).maxRecvWr(8));
                MemoryRegion buf = pd.allocateRegion(2 * C_BUFFER, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
                List<MemoryRegion> regions = new ArrayList<>();
                cq.requestNotify(true); // as the C NAA: solicited completions only
                recv.get(0).wrId(1).sge(buf, 0, C_BUFFER);
                qp.postReceive(recv, 1);
                id.accept(new ConnectionParameters(new byte[0], 1, 1, false, 7, 6, false, 0));
                boolean eventSinceLastMessage = false;
                long deadline = System.nanoTime() + WAIT.toNanos();
                while (t.disconnectedNanos < 0 && System.nanoTime() < deadline) {
                    CmEvent ev = events.getEvent(Duration.ofMillis(2));
                    if (ev != null && ev.type() == CmEventType.DISCONNECTED) {
                        t.disconnectedNanos = System.nanoTime();
                        id.disconnect();
                    }
                    if (channel.tryGetEvent() != null) {
                        eventSinceLastMessage = true;
                        cq.requestNotify(true);
                    }
                    int n = cq.poll(wcs);
                    for (int i = 0; i < n; i++) {
                        WorkCompletion wc = wcs.get(i);
                        if (!wc.isSuccess()) {
                            if (t.disconnectedNanos < 0) {
                                t.unexpected.add(wc.status() + " (work request " + wc.wrId() + ")");
                            }
                            continue;
                        }
                        if (wc.opcode() != WcOpcode.RECV) {
                            continue; // the advertise's own completion
                        }
                        long at = System.nanoTime();
                        if (!eventSinceLastMessage && channel.await(Duration.ofMillis(200)) != null) {
                            eventSinceLastMessage = true; // the event may trail the completion a little
                            cq.requestNotify(true);
                        }
                        byte[] bytes = buf.segment().asSlice(0, wc.byteLength()).toArray(ValueLayout.JAVA_BYTE);
                        t.messages.add(new Received(bytes, at, eventSinceLastMessage));
                        eventSinceLastMessage = false;
                        recv.get(0).wrId(1).sge(buf, 0, C_BUFFER);
                        qp.postReceive(recv, 1);
                        if (bytes.length > 0 && bytes[0] == MrspMessage.TYPE_REQUEST) {
                            sleep(advertiseDelay);
                            MrspMessage.Request r = (MrspMessage.Request) Mrsp.decode(bytes);
                            List<MrspMessage.AdvertiseEntry> entries = new ArrayList<>();
                            for (MrspMessage.RequestEntry e : r.entries()) {
                                if (!e.internal()) {
                                    MemoryRegion mr = pd.allocateRegion(Math.max(1, e.size()), Access.LOCAL_WRITE | Access.REMOTE_WRITE);
                                    regions.add(mr);
                                    entries.add(new MrspMessage.AdvertiseEntry(mr.remoteAddress(), mr.rkey(), e.size()));
                                }
                            }
                            int len = Mrsp.encode(new MrspMessage.Advertise(entries), buf.segment().asSlice(C_BUFFER));
                            send.reset(0).wrId(2).opcode(Opcode.SEND).flags(SendFlags.SIGNALED | SendFlags.SOLICITED)
                                    .sge(buf, C_BUFFER, len);
                            t.advertiseNanos = System.nanoTime();
                            qp.postSend(send, 1);
                        }
                    }
                }
                qp.close();
                regions.forEach(MemoryRegion::close);
                buf.close();
            } finally {
                id.close();
            }
            return t;
        });
    }

    private static void sleep(Duration d) {
        try {
            Thread.sleep(d);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** A client run against the probe NAA: the builder has the NAA's and the local address. */
    @FunctionalInterface
    private interface ProbedClient {
        void run(NaaClient.Builder builder, RdmaArena arena) throws Exception;
    }

    /**
     * What a probe NAA on {@code port} (answering the request after {@code advertiseDelay}) saw of
     * {@code client}; nothing unexpected among it.
     */
    private static Timeline probed(int port, Duration advertiseDelay, ProbedClient client) throws Exception {
        InetSocketAddress naa = NaaiceTestSupport.naaAddress(port);
        try (EventChannel events = EventChannel.create(); CmId listener = events.createId(PortSpace.TCP);
             RdmaArena arena = RdmaArena.ofShared()) {
            listener.bind(naa);
            listener.listen(4);
            CompletableFuture<Timeline> probe = probe(listener, events, advertiseDelay);
            client.run(NaaClient.builder(naa).localAddress(NaaiceTestSupport.hostAddress()), arena);
            Timeline t = probe.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            assertThat(t.unexpected).isEmpty();
            return t;
        }
    }

    @Test
    void closeRightAfterConnectSendsAnAbortWithSeAndWaitsBeforeDisconnecting() throws Exception {
        long[] closing = new long[2];
        Timeline t = probed(12371, Duration.ZERO, (builder, arena) -> {
            try (NaaClient c = builder.inOut(arena.allocate(4096)).build()) {
                c.connect(WAIT);
                closing[0] = System.nanoTime();
                c.close();
                closing[1] = System.nanoTime();
            }
        });
        assertThat(t.messages).hasSize(1);
        Received abort = t.messages.get(0);
        // the code at offset 1 (C host, Java NAA) and at offset 3 (C NAA)
        assertThat(abort.hex()).isEqualTo("00 05 00 05");
        assertThat(abort.solicitedEvent()).as("the abort carries SE").isTrue();
        assertThat(t.disconnectedNanos).as("the client disconnected").isPositive();
        assertThat(t.disconnectedNanos - abort.nanos()).as("time the NAA had to take the abort")
                .isGreaterThan(TimeUnit.MILLISECONDS.toNanos(300));
        assertThat(closing[1] - closing[0]).as("close() time").isLessThan(TimeUnit.SECONDS.toNanos(5));
    }

    @Test
    void closeWithTheRequestUnansweredWaitsForTheAdvertise() throws Exception {
        Timeline t = probed(12372, Duration.ofMillis(400), (builder, arena) -> {
            try (NaaClient c = builder.input(arena.allocate(1024)).output(arena.allocate(512)).internal(64).build()) {
                c.connect(WAIT);
                c.startRegionSetup();
                c.close();
            }
        });
        assertThat(t.messages).as("only the request, no abort").hasSize(1);
        assertThat(t.messages.get(0).bytes()[0]).isEqualTo((byte) MrspMessage.TYPE_REQUEST);
        assertThat(t.messages.get(0).solicitedEvent()).isTrue();
        assertThat(t.advertiseNanos).isPositive();
        assertThat(t.disconnectedNanos).as("disconnected after the advertise").isGreaterThan(t.advertiseNanos);
    }

    @Test
    void closeAfterTheRegionSetupSendsNothingMore() throws Exception {
        Timeline t = probed(12373, Duration.ZERO, (builder, arena) -> {
            try (NaaClient c = builder.inOut(arena.allocate(256)).build()) {
                c.connect(WAIT);
                c.setupRegions(WAIT);
            }
        });
        assertThat(t.messages).as("the request only").hasSize(1);
        assertThat(t.messages.get(0).bytes()[0]).isEqualTo((byte) MrspMessage.TYPE_REQUEST);
        assertThat(t.disconnectedNanos).isPositive();
    }

    @Test
    void theJavaNaaTakesTheAbortAndServesTheNextClient() throws Exception {
        try (NaaFixture naa = NaaFixture.start(12374, server -> server); RdmaArena arena = RdmaArena.ofShared()) {
            NaaServer server = naa.server;
            MemorySegment p = arena.allocate(4096);
            try (NaaClient c = naa.client().inOut(p).build()) {
                c.connect(WAIT);
            }
            p.fill((byte) 10);
            try (NaaClient c = naa.client().inOut(p).build()) {
                c.connect(WAIT);
                c.setupRegions(WAIT);
                c.rpc(2, WAIT);
                assertThat(c.lastReturnCode()).isZero();
            }
            NaaiceDeviceTest.assertAll(p, 12);
            long until = System.nanoTime() + WAIT.toNanos();
            while (server.connectionCount() > 0 && System.nanoTime() < until) {
                Thread.sleep(50);
            }
            assertThat(server.connectionCount()).isZero();
            assertThat(server.acceptedCount()).isEqualTo(2);
        }
    }
}
