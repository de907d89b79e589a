package dev.verbs4j.naaice;

import dev.verbs4j.verbs.RdmaArena;
import dev.verbs4j.verbs.TestBed;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Safety of the NAAICE client and server (issue 13), across the two test hosts: parameters must be
 * of an RdmaArena (or the global arena), regions get remote write access only where the peer
 * writes (and the zero-length write-with-immediate that starts or ends an RPC still works on a
 * region without it), a parameter's arena closed between RPCs is a clear error, and closing a
 * client or a server from another thread while it works neither crashes nor frees what is in use.
 */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_3)
@Timeout(240)
class NaaiceSafetyDeviceTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final int PORT = 12347;
    private static final int FN_FILL = 0x21;
    private static final int FN_FAIL = 0x22;
    private static final int FN_SLOW = 0x23;
    /** Longer than the two seconds a close waits for an unanswered request, so the close cuts the RPC short. */
    private static final long SLOW_MILLIS = 5_000;
    private static NaaFixture fixture;
    private static ExecutorService pool;

    @BeforeAll
    static void startServer() throws Exception {
        fixture = NaaFixture.start(PORT, server -> server
                .kernel(FN_FILL, call -> {
                    // every output region: filled with 0x5a; a count of the inputs' bytes in the first 8 of the first output
                    long in = 0;
                    MemorySegment first = null;
                    for (int i = 0; i < call.parameters().size(); i++) {
                        if ((call.flags().get(i) & RegionFlags.INPUT) != 0) {
                            in += call.parameters().get(i).byteSize();
                        }
                        if ((call.flags().get(i) & RegionFlags.OUTPUT) != 0) {
                            call.parameters().get(i).fill((byte) 0x5a);
                            first = first == null ? call.parameters().get(i) : first;
                        }
                    }
                    if (first != null && first.byteSize() >= 8) {
                        first.set(ValueLayout.JAVA_LONG_UNALIGNED, 0, in);
                    }
                    return 0;
                })
                .kernel(FN_FAIL, call -> 0x33)
                .kernel(FN_SLOW, call -> {
                    Thread.sleep(SLOW_MILLIS);
                    return ReferenceKernels.ADD_ONE.run(call);
                }));
        pool = Executors.newCachedThreadPool();
    }

    @AfterAll
    static void stopServer() {
        NaaFixture.closeIfStarted(fixture);
        if (pool != null) {
            pool.shutdownNow();
        }
    }

    /**
     * A parameter of a confined or shared arena (memory that could be freed while the NAA can
     * reach it) fails the client before it connects, with a NaaiceException naming the parameter
     * and RdmaArena; the server never sees a connection. The same through the middleware, which
     * names the input or output, frees its NAA spec item, and then works with RdmaArena memory.
     */
    @Test
    void parametersOfAnotherArenaAreRefused() throws Exception {
        long accepted = fixture.server.acceptedCount();
        try (RdmaArena good = RdmaArena.ofShared(); Arena shared = Arena.ofShared()) {
            MemorySegment ok = good.allocate(256);
            MemorySegment bad = shared.allocate(256);
            try (NaaClient c = fixture.client().input(ok).output(bad).build()) {
                assertThatThrownBy(() -> c.connect(WAIT)).isInstanceOfSatisfying(NaaiceException.class, e -> {
                    assertThat(e.reason()).isEqualTo(NaaiceException.Reason.LOCAL);
                    assertThat(e.getMessage()).contains("parameter 1").contains("RdmaArena");
                });
                assertThat(c.state()).isEqualTo(NaaState.ERROR);
            }
            assertThat(fixture.server.acceptedCount()).as("no connection reached the NAA").isEqualTo(accepted);

            String b = TestBed.hostB().address();
            NaaSpec spec = NaaSpec.parse(b + ":" + PORT + ":" + FN_FILL + ":1");
            try (Arena confined = Arena.ofConfined()) {
                MemorySegment out = confined.allocate(64);
                assertThatThrownBy(() -> NaaHandle.create(spec, TestBed.hostA().address(), FN_FILL, List.of(NaaParam.of(ok)),
                        List.of(NaaParam.of(out)), WAIT))
                        .isInstanceOfSatisfying(NaaiceException.class, e -> assertThat(e.getMessage()).contains("output 0")
                                .contains("RdmaArena"));
            }
            assertThat(spec.boundCount()).isZero();
            MemorySegment out = good.allocate(64);
            MemorySegment global = Arena.global().allocate(32);
            try (NaaHandle h = NaaHandle.create(spec, TestBed.hostA().address(), FN_FILL, List.of(NaaParam.of(global)),
                    List.of(NaaParam.of(out)), WAIT)) {
                h.invoke();
                assertThat(h.await(WAIT).succeeded()).isTrue();
                assertThat(out.get(ValueLayout.JAVA_LONG_UNALIGNED, 0)).isEqualTo(32);
                assertThat(out.get(ValueLayout.JAVA_BYTE, 63)).isEqualTo((byte) 0x5a);
            }
        }
        assertThat(fixture.server.acceptedCount()).isEqualTo(accepted + 1);
    }

    /**
     * Remote write access only where the peer writes: an RPC without inputs starts with a
     * zero-length write-with-immediate to the NAA's region 0, an output-only region the client may
     * not write; an RPC without outputs (and one the kernel fails) ends with a zero-length
     * write-with-immediate to the host's region 0, an input-only region the NAA may not write.
     * Both work, and the real outputs arrive.
     */
    @Test
    void zeroLengthWritesReachRegionsWithoutRemoteWrite() {
        try (RdmaArena arena = RdmaArena.ofShared()) {
            MemorySegment out = arena.allocate(4096);
            out.fill((byte) 1);
            try (NaaClient c = fixture.client().output(out).build()) {
                c.connect(WAIT);
                c.setupRegions(WAIT);
                for (int i = 0; i < 3; i++) {
                    out.fill((byte) 1);
                    c.rpc(FN_FILL, WAIT);
                    assertThat(c.lastReturnCode()).isZero();
                    assertThat(out.get(ValueLayout.JAVA_LONG_UNALIGNED, 0)).isZero();
                    assertThat(out.get(ValueLayout.JAVA_BYTE, 4095)).isEqualTo((byte) 0x5a);
                }
            }
            MemorySegment in = arena.allocate(1000);
            in.fill((byte) 7);
            try (NaaClient c = fixture.client().input(in).build()) {
                c.connect(WAIT);
                c.setupRegions(WAIT);
                c.rpc(FN_FILL, WAIT);
                assertThat(c.lastReturnCode()).isZero();
                assertThat(c.bytesReceived()).isZero();
                assertThatThrownBy(() -> c.rpc(FN_FAIL, WAIT)).isInstanceOfSatisfying(NaaiceException.class,
                        e -> assertThat(e.reason()).isEqualTo(NaaiceException.Reason.NAA_RETURN_CODE));
                assertThat(c.lastReturnCode()).isEqualTo(0x33);
                c.rpc(FN_FILL, WAIT); // the connection stays usable
                assertThat(c.lastReturnCode()).isZero();
                assertThat(in.get(ValueLayout.JAVA_BYTE, 999)).isEqualTo((byte) 7);
            }
        }
    }

    /**
     * Closing the RdmaArena of a parameter between RPCs deregisters it: the next RPC fails with a
     * NaaiceException (the region is closed), not a crash, and the context still closes cleanly.
     */
    @Test
    void parameterArenaClosedBetweenRpcs() {
        RdmaArena arena = RdmaArena.ofShared();
        MemorySegment io = arena.allocate(2048);
        io.fill((byte) 3);
        try (NaaClient c = fixture.client().inOut(io).build()) {
            c.connect(WAIT);
            c.setupRegions(WAIT);
            c.rpc(ReferenceKernels.FN_ADD_ONE, WAIT);
            assertThat(io.get(ValueLayout.JAVA_BYTE, 2047)).isEqualTo((byte) 4);
            arena.close();
            assertThatThrownBy(() -> c.rpc(ReferenceKernels.FN_ADD_ONE, WAIT)).isInstanceOfSatisfying(NaaiceException.class,
                    e -> assertThat(e.reason()).isEqualTo(NaaiceException.Reason.LOCAL));
            assertThat(c.state()).isEqualTo(NaaState.ERROR);
        }
    }

    /**
     * close() from another thread while one thread waits in rpc() (a slow kernel) and while
     * another connects: the close waits for the slice in progress, the waiting calls end with an
     * IllegalStateException (closed) or a NaaiceException, and nothing crashes.
     */
    @Test
    void closeFromAnotherThreadWhileWaiting() throws Exception {
        try (RdmaArena arena = RdmaArena.ofShared()) {
            MemorySegment io = arena.allocate(512);
            NaaClient c = fixture.client().inOut(io).build();
            c.connect(WAIT);
            c.setupRegions(WAIT);
            CountDownLatch started = new CountDownLatch(1);
            Future<Throwable> rpc = pool.submit(() -> {
                started.countDown();
                try {
                    c.rpc(FN_SLOW, WAIT);
                    return null;
                } catch (RuntimeException e) {
                    return e;
                }
            });
            started.await();
            Thread.sleep(300);
            long t0 = System.nanoTime();
            c.close();
            long closeMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            Throwable t = rpc.get(30, TimeUnit.SECONDS);
            // the waiting RPC ends: cut short by the close, or (seen in the loaded three-VM run, not
            // alone) already answered when the close got the lock; either way the client is closed
            if (t != null) {
                assertThat(t).isInstanceOfAny(IllegalStateException.class, NaaiceException.class);
            }
            assertThat(c.state()).isEqualTo(NaaState.DISCONNECTED);
            assertThatThrownBy(() -> c.rpc(FN_SLOW, WAIT)).isInstanceOf(IllegalStateException.class);
            System.out.printf("close during a slow RPC: %d ms, the RPC ended with %s%n", closeMillis, t);
            c.close(); // idempotent

            // a close while another thread connects and progresses
            for (int i = 0; i < 5; i++) {
                NaaClient d = fixture.client().inOut(io).build();
                Future<Throwable> connect = pool.submit(() -> {
                    try {
                        d.connect(WAIT);
                        d.setupRegions(WAIT);
                        return null;
                    } catch (RuntimeException e) {
                        return e;
                    }
                });
                Thread.sleep(10L * i);
                d.close();
                Throwable ct = connect.get(30, TimeUnit.SECONDS);
                if (ct != null) {
                    assertThat(ct).isInstanceOfAny(IllegalStateException.class, NaaiceException.class);
                }
                assertThat(d.progress()).isEqualTo(NaaState.DISCONNECTED);
            }
        }
    }

    /**
     * NaaServer.close() while a kernel runs (longer than the server used to wait for a worker):
     * the close waits until the worker has exited (the connection is gone from the server once its
     * worker freed it), then frees the channel and the ids; the client sees its connection end.
     */
    @Test
    void serverCloseWaitsForItsWorkers() throws Exception {
        InetSocketAddress other = new InetSocketAddress(fixture.naa.getAddress(), PORT + 1);
        NaaServer slow = NaaServer.builder().bind(other).kernel(FN_SLOW, call -> {
            Thread.sleep(6_000);
            return 0;
        }).start();
        try (RdmaArena arena = RdmaArena.ofShared()) {
            MemorySegment io = arena.allocate(512);
            try (NaaClient c = NaaClient.builder(other).localAddress(fixture.local).inOut(io).build()) {
                c.connect(WAIT);
                c.setupRegions(WAIT);
                c.startRpc(FN_SLOW);
                long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (slow.rpcCount() == 0 && System.nanoTime() < until) {
                    c.progress(Duration.ofMillis(20));
                }
                assertThat(slow.rpcCount()).as("the kernel runs").isEqualTo(1);
                long t0 = System.nanoTime();
                slow.close();
                long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
                assertThat(millis).as("close waited for the kernel").isGreaterThan(4_000);
                assertThat(slow.connectionCount()).isZero();
                NaaState s = c.progress(Duration.ofMillis(100));
                until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (s != NaaState.ERROR && s != NaaState.FINISHED && System.nanoTime() < until) {
                    s = c.progress(Duration.ofMillis(100));
                }
                assertThat(s).isIn(NaaState.ERROR, NaaState.FINISHED);
                System.out.printf("server close during a kernel: %d ms; the client ends in %s (%s)%n", millis, s, c.failure());
            }
        } finally {
            slow.close();
        }
    }
}
