package dev.verbs4j.rdmacm;

import dev.verbs4j.verbs.Access;
import dev.verbs4j.verbs.CompletionQueue;
import dev.verbs4j.verbs.MemoryRegion;
import dev.verbs4j.verbs.ProtectionDomain;
import dev.verbs4j.verbs.QpType;
import dev.verbs4j.verbs.QueuePair;
import dev.verbs4j.verbs.QueuePairInit;
import dev.verbs4j.verbs.RdmaArena;
import dev.verbs4j.verbs.TestBed;
import dev.verbs4j.verbs.VerbsException;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static dev.verbs4j.rdmacm.CmIdDeviceTest.address;
import static dev.verbs4j.rdmacm.CmIdDeviceTest.expect;
import static dev.verbs4j.rdmacm.CmIdDeviceTest.listening;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Issue 13 for the connection manager: calls racing a close from another thread end with a
 * result or an {@link IllegalStateException}, never a crash or a hang; a close wakes threads
 * blocked in synchronous operations; queue pair and id closed at once by two threads.
 */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_1)
@Timeout(240)
class CmSafetyDeviceTest {

    private static final Duration WAIT = Duration.ofSeconds(20);
    /** How long a woken thread or a close may take at most: far below any connection manager timeout. */
    private static final long PROMPT_SECONDS = 10;

    /** Runs {@code body} on a new thread; the future holds what it threw, or null. */
    private static CompletableFuture<Throwable> background(String name, ThrowingRunnable body) {
        CompletableFuture<Throwable> done = new CompletableFuture<>();
        Thread.ofPlatform().name(name).daemon().start(() -> {
            try {
                body.run();
                done.complete(null);
            } catch (Throwable t) {
                done.complete(t);
            }
        });
        return done;
    }

    @FunctionalInterface
    interface ThrowingRunnable {
        void run() throws Exception;
    }

    /** A close that returns within {@link #PROMPT_SECONDS}. */
    private static void closePromptly(AutoCloseable c) throws Exception {
        CompletableFuture<Throwable> closed = background("close " + c, c::close);
        assertThat(closed.get(PROMPT_SECONDS, TimeUnit.SECONDS)).as("close of %s", c).isNull();
    }

    @Test
    void closingASynchronousListenerWakesGetRequest() throws Exception {
        try (AddressInfo passive = AddressInfo.resolve(TestBed.hostB().address(), "20150", AddressInfo.PASSIVE, PortSpace.TCP)) {
            CmId listener = CmId.createEndpoint(passive.first());
            listener.listen(1);
            CountDownLatch started = new CountDownLatch(1);
            CompletableFuture<Throwable> waiter = background("getRequest", () -> {
                started.countDown();
                listener.getRequest();
            });
            started.await();
            Thread.sleep(300);
            assertThat(waiter).isNotDone();
            closePromptly(listener);
            assertThat(waiter.get(PROMPT_SECONDS, TimeUnit.SECONDS)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("closed");
            assertThatThrownBy(listener::getRequest).isInstanceOf(IllegalStateException.class);
        }
    }

    @Test
    void aListenerClosesWhileTheIdOfItsRequestLives() throws Exception {
        try (AddressInfo passive = AddressInfo.resolve(TestBed.hostB().address(), "20151", AddressInfo.PASSIVE, PortSpace.TCP);
             EventChannel cch = EventChannel.create()) {
            CmId listener = CmId.createEndpoint(passive.first());
            listener.listen(1);
            RcEnd client = RcEnd.on(RcEnd.resolved(cch, null, address(TestBed.hostB(), 20_151), WAIT), 1);
            client.id().connect(ConnectionParameters.DEFAULT.withPrivateData("who".getBytes(StandardCharsets.US_ASCII)));
            CmId request = listener.getRequest();
            assertThat(request.channel()).isNull();
            assertThat(request.listener()).isSameAs(listener);
            // the request's private data is a copy: still there after the listener (and its event) are gone
            closePromptly(listener);
            assertThat(new String(request.lastPrivateData(), StandardCharsets.US_ASCII)).startsWith("who");
            request.reject("bye".getBytes(StandardCharsets.US_ASCII));
            CmEvent rejected = expect(cch, CmEventType.REJECTED);
            assertThat(new String(rejected.privateDataTrimmed(), StandardCharsets.US_ASCII)).isEqualTo("bye");
            closePromptly(request);
            client.close();
        }
    }

    @Test
    void closingAnIdWakesASynchronousConnect() throws Exception {
        try (EventChannel sch = EventChannel.create();
             AddressInfo active = AddressInfo.resolve(TestBed.hostB().address(), "20152", 0, PortSpace.TCP)) {
            // a listener that never answers: the connect waits for the connection manager's timeout
            listening(sch, address(TestBed.hostB(), 20_152), 1);
            CmId client = CmId.createEndpoint(active.first());
            RcEnd end = RcEnd.on(client, 1);
            CompletableFuture<Throwable> connect = background("connect", () -> client.connect(ConnectionParameters.DEFAULT));
            expect(sch, CmEventType.CONNECT_REQUEST);
            Thread.sleep(300);
            assertThat(connect).isNotDone();
            closePromptly(client);
            assertThat(connect.get(PROMPT_SECONDS, TimeUnit.SECONDS)).isInstanceOf(IllegalStateException.class);
            assertThat(end.qp().isClosed()).isTrue();
            end.pd().close();
            end.cq().close();
        }
    }

    @Test
    void closingAnIdWakesASynchronousAccept() throws Exception {
        try (AddressInfo passive = AddressInfo.resolve(TestBed.hostB().address(), "20153", AddressInfo.PASSIVE, PortSpace.TCP);
             CmId listener = CmId.createEndpoint(passive.first());
             EventChannel cch = EventChannel.create()) {
            listener.listen(1);
            // the client never takes its CONNECT_RESPONSE, so it never completes the handshake
            RcEnd client = RcEnd.on(RcEnd.resolved(cch, null, address(TestBed.hostB(), 20_153), WAIT), 1);
            client.id().connect(ConnectionParameters.DEFAULT);
            CmId request = listener.getRequest();
            RcEnd server = RcEnd.on(request, 1);
            CompletableFuture<Throwable> accept = background("accept", () -> request.accept(ConnectionParameters.DEFAULT));
            Thread.sleep(500);
            assertThat(accept).isNotDone();
            closePromptly(request);
            assertThat(accept.get(PROMPT_SECONDS, TimeUnit.SECONDS)).isInstanceOf(IllegalStateException.class);
            server.pd().close();
            server.cq().close();
            client.close();
        }
    }

    /** One round of a race: a new channel, an id of it bound on host A, a protection domain and a completion queue of the id's device. */
    private record Round(int n, EventChannel ch, CmId id, ProtectionDomain pd, CompletionQueue cq) {
    }

    /** What one round of a race does with its fresh ids. */
    @FunctionalInterface
    private interface RoundBody {
        void run(Round r) throws Exception;
    }

    /** {@code rounds} rounds of {@code body}, each on its own {@link Round}; the round's channel closes after it. */
    private static void rounds(int rounds, RoundBody body) throws Exception {
        for (int round = 0; round < rounds; round++) {
            try (EventChannel ch = EventChannel.create()) {
                CmId id = ch.createId(PortSpace.TCP);
                id.bind(address(TestBed.hostA(), 0));
                ProtectionDomain pd = id.context().allocateProtectionDomain();
                CompletionQueue cq = id.context().createCompletionQueue(4);
                body.run(new Round(round, ch, id, pd, cq));
            }
        }
    }

    /** What a call and a close of the id, on two threads that start at once, threw (null: nothing). */
    private record Race(CompletableFuture<Throwable> call, CompletableFuture<Throwable> close) {
    }

    /** Runs {@code call} (a thread named {@code name}) and {@code id.close()} on two threads released together. */
    private static Race againstIdClose(String name, CmId id, ThrowingRunnable call) {
        CyclicBarrier go = new CyclicBarrier(2);
        CompletableFuture<Throwable> a = background(name, () -> {
            go.await();
            call.run();
        });
        CompletableFuture<Throwable> b = background("close id", () -> {
            go.await();
            id.close();
        });
        return new Race(a, b);
    }

    @Test
    void queuePairAndIdClosedAtOnceByTwoThreads() throws Exception {
        rounds(24, r -> {
            QueuePair qp = r.id().createQueuePair(r.pd(), QueuePairInit.of(QpType.RC, r.cq()));
            int variant = r.n() % 3;
            AutoCloseable first = variant == 0 ? qp : variant == 1 ? r.pd() : r.ch();
            Race race = againstIdClose("close " + first, r.id(), first::close);
            assertThat(race.call().get(PROMPT_SECONDS, TimeUnit.SECONDS)).as("round %d: %s", r.n(), first).isNull();
            assertThat(race.close().get(PROMPT_SECONDS, TimeUnit.SECONDS)).as("round %d: id", r.n()).isNull();
            assertThat(qp.isClosed()).isTrue();
            assertThat(r.id().isClosed()).isTrue();
            r.pd().close();
            // the queue pair is really gone: a completion queue still in use could not be destroyed
            r.cq().close();
        });
    }

    @Test
    void queuePairCreatedWhileTheIdCloses() throws Exception {
        rounds(24, r -> {
            Race race = againstIdClose("createQueuePair", r.id(), () -> {
                try {
                    r.id().createQueuePair(r.pd(), QueuePairInit.of(QpType.RC, r.cq()));
                } catch (IllegalStateException closed) {
                    // the id closed first
                }
            });
            assertThat(race.call().get(PROMPT_SECONDS, TimeUnit.SECONDS)).as("round %d", r.n()).isNull();
            assertThat(race.close().get(PROMPT_SECONDS, TimeUnit.SECONDS)).as("round %d", r.n()).isNull();
            assertThat(r.id().queuePair()).isNull();
            // a queue pair made in the race went with the id: nothing left to destroy on the freed id
            r.pd().close();
            r.cq().close();
        });
    }

    @Test
    void callsRacingACloseEndInAResultOrIllegalState() throws Exception {
        for (int round = 0; round < 12; round++) {
            EventChannel ch = EventChannel.create();
            CmId id = ch.createId(PortSpace.TCP);
            id.bind(address(TestBed.hostA(), 0));
            AtomicBoolean stop = new AtomicBoolean();
            AtomicInteger calls = new AtomicInteger();
            List<CompletableFuture<Throwable>> callers = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                int kind = t;
                callers.add(background("caller " + t, () -> {
                    try {
                        while (!stop.get()) {
                            switch (kind) {
                                case 0 -> id.localAddress();
                                case 1 -> id.setTypeOfService(0);
                                case 2 -> ch.getEvent(Duration.ofMillis(1));
                                default -> {
                                    id.hasDevice();
                                    id.portNumber();
                                    id.lastPrivateData();
                                }
                            }
                            calls.incrementAndGet();
                        }
                    } catch (IllegalStateException expected) {
                        // closed
                    }
                }));
            }
            while (calls.get() < 200) {
                Thread.onSpinWait();
            }
            CompletableFuture<Throwable> closing = background("close", round % 2 == 0 ? id::close : ch::close);
            assertThat(closing.get(PROMPT_SECONDS, TimeUnit.SECONDS)).isNull();
            stop.set(true);
            for (CompletableFuture<Throwable> c : callers) {
                assertThat(c.get(PROMPT_SECONDS, TimeUnit.SECONDS)).isNull();
            }
            ch.close();
        }
    }

    @Test
    void eventsTakenWhileTheChannelCloses() throws Exception {
        for (int round = 0; round < 8; round++) {
            EventChannel ch = EventChannel.create();
            for (int i = 0; i < 4; i++) {
                ch.createId(PortSpace.TCP).resolveAddress(null, address(TestBed.hostB(), 20_160 + i), WAIT);
            }
            List<CompletableFuture<Throwable>> takers = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                boolean blocking = t % 2 == 0;
                takers.add(background("taker " + t, () -> {
                    try {
                        while (true) {
                            if (blocking) {
                                ch.getEvent(Duration.ofMinutes(2));
                            } else {
                                ch.tryGetEvent();
                            }
                        }
                    } catch (IllegalStateException expected) {
                        // closed
                    }
                }));
            }
            Thread.sleep(round * 5L);
            closePromptly(ch);
            for (CompletableFuture<Throwable> t : takers) {
                assertThat(t.get(PROMPT_SECONDS, TimeUnit.SECONDS)).isNull();
            }
        }
    }

    @Test
    void addressInfoClosedWhileEndpointsAreMade() throws Exception {
        for (int round = 0; round < 10; round++) {
            AddressInfo info = AddressInfo.resolve(TestBed.hostB().address(), null, AddressInfo.PASSIVE, PortSpace.TCP);
            AddressInfo.Entry entry = info.first();
            AtomicInteger made = new AtomicInteger();
            CompletableFuture<Throwable> maker = background("createEndpoint", () -> {
                try {
                    while (true) {
                        CmId.createEndpoint(entry).close();
                        made.incrementAndGet();
                    }
                } catch (IllegalStateException expected) {
                    // the AddressInfo is closed
                }
            });
            while (made.get() < round) {
                Thread.onSpinWait();
            }
            closePromptly(info);
            assertThat(maker.get(PROMPT_SECONDS, TimeUnit.SECONDS)).isNull();
            assertThatThrownBy(() -> CmId.createEndpoint(entry)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("closed");
        }
    }

    @Test
    void cmVerbsRegistersOnlyMemoryThatOutlivesItsRegion() throws Exception {
        try (EventChannel ch = EventChannel.create(); RdmaArena rdma = RdmaArena.ofShared(); Arena plain = Arena.ofConfined()) {
            CmId id = ch.createId(PortSpace.TCP);
            id.bind(address(TestBed.hostA(), 0));
            CmVerbs verbs = CmVerbs.createQueuePair(id, null, 4, 4, null);
            MemorySegment ok = rdma.allocate(256, 64);
            MemoryRegion mr = verbs.registerMessages(ok);
            assertThat(mr.length()).isEqualTo(256);
            MemorySegment loose = plain.allocate(256, 64);
            assertThatThrownBy(() -> verbs.registerMessages(loose)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("RdmaArena");
            assertThatThrownBy(() -> verbs.registerWrite(loose)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> verbs.registerRead(loose)).isInstanceOf(IllegalArgumentException.class);
            // receives posted by two threads at once: each request is filled and posted whole
            CyclicBarrier go = new CyclicBarrier(2);
            List<CompletableFuture<Throwable>> posters = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                long base = t * 100L;
                posters.add(background("poster " + t, () -> {
                    go.await();
                    for (int i = 0; i < 2; i++) {
                        verbs.postReceive(base + i, ok.asSlice(64L * i, 64), mr);
                    }
                }));
            }
            for (CompletableFuture<Throwable> p : posters) {
                assertThat(p.get(PROMPT_SECONDS, TimeUnit.SECONDS)).isNull();
            }
            // the id closes the helpers, their queue pair, queues and protection domain, then the arena frees
            id.close();
            assertThat(verbs.isClosed()).isTrue();
            assertThatThrownBy(() -> verbs.postReceive(0, ok, mr)).isInstanceOf(IllegalStateException.class);
        }
    }

    @Test
    void synchronousFailuresNameTheFunction() throws Exception {
        try (CmId id = CmId.createSynchronous(PortSpace.TCP)) {
            assertThat(id.channel()).isNull();
            // TEST-NET-3: no route inside the test VM; the failure is at once or the outcome
            assertThatThrownBy(() -> id.resolveAddress(null, new InetSocketAddress("203.0.113.7", 1), Duration.ofSeconds(2)))
                    .isInstanceOfSatisfying(VerbsException.class, e -> assertThat(e.verb()).isEqualTo("rdma_resolve_addr"));
        }
        try (CmId id = CmId.createSynchronous(PortSpace.TCP); EventChannel ch = EventChannel.create()) {
            id.resolveAddress(null, address(TestBed.hostB(), 20_155), WAIT);
            assertThat(id.hasDevice()).isTrue();
            assertThat(id.lastEvent()).isEqualTo(CmEventType.ADDR_RESOLVED);
            // to a channel and back: the outcome then arrives as an event, then again synchronously
            id.migrate(ch);
            assertThat(id.channel()).isSameAs(ch);
            id.resolveRoute(WAIT);
            assertThat(expect(ch, CmEventType.ROUTE_RESOLVED).id()).isSameAs(id);
            id.migrate(null);
            assertThat(id.channel()).isNull();
            ch.close();
            assertThat(id.isClosed()).isFalse();
            assertThatThrownBy(() -> id.connect(ConnectionParameters.DEFAULT))
                    .isInstanceOfSatisfying(VerbsException.class, e -> {
                        assertThat(e.verb()).isEqualTo("rdma_connect");
                        assertThat(e.errnoName()).isIn("ECONNREFUSED", "ETIMEDOUT", "EINVAL");
                    });
        }
    }
}
