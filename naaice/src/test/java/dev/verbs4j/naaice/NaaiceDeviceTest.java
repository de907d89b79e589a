package dev.verbs4j.naaice;

import dev.verbs4j.verbs.RdmaArena;
import dev.verbs4j.verbs.TestBed;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The Java client against the Java software NAA, across the two test hosts. */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_2)
@Timeout(300)
class NaaiceDeviceTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final int PORT = 12345;
    private static final long MAX_BYTES = 160L << 20;
    private static NaaFixture fixture;

    @BeforeAll
    static void startServer() throws Exception {
        fixture = NaaFixture.start(PORT, server -> server.maxRegions(40).maxBytes(MAX_BYTES)
                .kernel(0x11, call -> 0x42)
                .kernel(0x13, call -> {
                    // output byte 0: the rpc number; byte 1: U0; byte 2: the NAA's copy of parameter 0, byte 0
                    int o = call.flags().indexOf(RegionFlags.OUTPUT);
                    MemorySegment out = call.parameters().get(o);
                    out.set(ValueLayout.JAVA_BYTE, 0, (byte) call.rpc());
                    out.set(ValueLayout.JAVA_BYTE, 1, (byte) call.userByte(0));
                    out.set(ValueLayout.JAVA_BYTE, 2, call.parameters().get(0).get(ValueLayout.JAVA_BYTE, 0));
                    return 0;
                })
                .kernel(0x14, call -> {
                    // internal scratch: counts RPCs in internal region 0; reports its size and the count
                    MemorySegment scratch = call.internals().get(0);
                    byte n = (byte) (scratch.get(ValueLayout.JAVA_BYTE, 0) + 1);
                    scratch.set(ValueLayout.JAVA_BYTE, 0, n);
                    MemorySegment out = call.parameters().get(0);
                    out.set(ValueLayout.JAVA_LONG_UNALIGNED, 0, scratch.byteSize());
                    out.set(ValueLayout.JAVA_BYTE, 8, n);
                    out.set(ValueLayout.JAVA_INT_UNALIGNED, 12, call.internals().size());
                    return 0;
                })
                .kernel(0x12, call -> {
                    // writes the rpc number and user byte U0 into the first output
                    int o = call.flags().indexOf(RegionFlags.OUTPUT);
                    call.parameters().get(o).set(ValueLayout.JAVA_BYTE, 0, (byte) call.rpc());
                    call.parameters().get(o).set(ValueLayout.JAVA_BYTE, 1, (byte) call.userByte(0));
                    return 0;
                }));
    }

    private long testStart;

    @org.junit.jupiter.api.BeforeEach
    void startClock() {
        testStart = System.nanoTime();
    }

    @org.junit.jupiter.api.AfterEach
    void printTime(org.junit.jupiter.api.TestInfo info) {
        System.out.printf("TIME %s: %d ms%n", info.getDisplayName(), (System.nanoTime() - testStart) / 1_000_000);
    }

    @AfterAll
    static void stopServer() {
        NaaFixture.closeIfStarted(fixture);
    }

    private static void fill(MemorySegment s, int v) {
        s.fill((byte) v);
    }

    /** A new segment of {@code size} bytes of {@code arena}, every byte {@code v}. */
    private static MemorySegment filled(RdmaArena arena, long size, int v) {
        MemorySegment s = arena.allocate(size);
        fill(s, v);
        return s;
    }

    static void assertAll(MemorySegment s, int v) {
        long at = ReferenceKernels.firstDifference(s, (byte) v);
        if (at >= 0) {
            throw new AssertionError("byte " + at + " of " + s.byteSize() + " is " + (s.get(ValueLayout.JAVA_BYTE, at) & 0xff)
                    + ", expected " + (v & 0xff));
        }
    }

    @Test
    void oneRpcPerReferenceKernel() {
        try (RdmaArena arena = RdmaArena.ofShared()) {
            MemorySegment in = filled(arena, 4096, 10);
            MemorySegment out = filled(arena, 1000, 99);
            MemorySegment io = filled(arena, 3000, 12);
            try (NaaClient c = fixture.client().input(in).output(out).inOut(io).build()) {
                long t0 = System.nanoTime();
                c.connect(WAIT);
                assertThat(c.state()).isEqualTo(NaaState.CONNECTED);
                c.setupRegions(WAIT);
                assertThat(c.state()).isEqualTo(NaaState.MRSP_DONE);
                long setup = System.nanoTime() - t0;
                // F=1: every parameter region +1 on the NAA's copy; outputs written back in full
                c.rpc(ReferenceKernels.FN_ADD_ONE, WAIT);
                assertThat(c.state()).isEqualTo(NaaState.FINISHED);
                assertThat(c.lastReturnCode()).isZero();
                assertAll(out, 1);   // the NAA's output copy started at zero
                assertAll(io, 13);
                assertAll(in, 10);   // inputs are not written back
                assertThat(c.bytesReceived()).isEqualTo(3000);
                long rpc1 = c.lastRpcNanos();
                // F=2
                c.rpc(ReferenceKernels.FN_ADD_TWO, WAIT);
                assertAll(out, 3);
                assertAll(io, 15);
                // F=3: no-op, the NAA's copies come back unchanged
                fill(io, 50);
                c.rpc(ReferenceKernels.FN_NO_OP, WAIT);
                assertAll(out, 3);
                assertAll(io, 50);
                assertThat(c.rpcCount()).isEqualTo(3);
                System.out.printf("setup %d µs, first RPC %d µs, last RPC %d µs%n", setup / 1000, rpc1 / 1000, c.lastRpcNanos() / 1000);
            }
        }
    }

    /** 100 RPCs on one connection; the single-send region goes only with the first; user bytes per RPC. */
    @Test
    void hundredRpcsSingleSendOnlyFirstAndUserBytes() {
        try (RdmaArena arena = RdmaArena.ofShared()) {
            MemorySegment once = filled(arena, 512, 7);
            MemorySegment out = arena.allocate(64);
            try (NaaClient c = fixture.client()
                    .parameter(once, RegionFlags.INPUT | RegionFlags.SINGLE_SEND).output(out).build()) {
                c.connect(WAIT);
                c.setupRegions(WAIT);
                long t0 = System.nanoTime();
                for (int i = 1; i <= 100; i++) {
                    c.setUserBytes(i, 0, 0);
                    c.rpc(0x13, WAIT);
                    assertThat(out.get(ValueLayout.JAVA_BYTE, 0)).isEqualTo((byte) i);
                    assertThat(out.get(ValueLayout.JAVA_BYTE, 1)).isEqualTo((byte) i);
                    // the NAA still has what RPC 1 wrote, although the host's copy changed after it
                    assertThat(out.get(ValueLayout.JAVA_BYTE, 2)).isEqualTo((byte) 7);
                    fill(once, 100 + i);
                }
                System.out.printf("100 RPCs on one connection in %d ms%n", (System.nanoTime() - t0) / 1_000_000);
                assertThat(c.rpcCount()).isEqualTo(100);
                // nothing left to write: the RPC starts with a zero-length write-with-imm
                c.rpc(ReferenceKernels.FN_ADD_ONE, WAIT);
                assertThat(out.get(ValueLayout.JAVA_BYTE, 5)).isEqualTo((byte) 1);
            }
        }
    }

    /** Internal regions: NAA-only scratch of the requested size that persists across RPCs, not advertised. */
    @Test
    void internalRegions() {
        try (RdmaArena arena = RdmaArena.ofShared()) {
            MemorySegment out = arena.allocate(16);
            try (NaaClient c = fixture.client().internal(12345).output(out).internal(4096).build()) {
                c.connect(WAIT);
                c.setupRegions(WAIT);
                assertThat(c.parameterCount()).isEqualTo(1);
                for (int i = 1; i <= 3; i++) {
                    c.rpc(0x14, WAIT);
                    assertThat(out.get(ValueLayout.JAVA_LONG_UNALIGNED, 0)).isEqualTo(12345L);
                    assertThat(out.get(ValueLayout.JAVA_BYTE, 8)).isEqualTo((byte) i);
                    assertThat(out.get(ValueLayout.JAVA_INT_UNALIGNED, 12)).isEqualTo(2);
                }
            }
        }
    }

    @Test
    void thirtyTwoRegionsAndInternal() {
        try (RdmaArena arena = RdmaArena.ofShared()) {
            NaaClient.Builder b = fixture.client().maxRequestEntries(33);
            MemorySegment[] p = new MemorySegment[32];
            for (int i = 0; i < 32; i++) {
                p[i] = arena.allocate(1 + i * 37L);
                fill(p[i], i);
                b.inOut(p[i]);
            }
            b.internal(8192);
            try (NaaClient c = b.build()) {
                c.connect(WAIT);
                c.setupRegions(WAIT);
                c.rpc(ReferenceKernels.FN_ADD_TWO, WAIT);
                for (int i = 0; i < 32; i++) {
                    assertAll(p[i], i + 2);
                }
            }
        }
    }

    @Test
    void kernelErrorCodeReachesClientAndConnectionStaysUsable() {
        try (RdmaArena arena = RdmaArena.ofShared()) {
            MemorySegment io = filled(arena, 100, 1);
            try (NaaClient c = fixture.client().inOut(io).build()) {
                c.connect(WAIT);
                c.setupRegions(WAIT);
                assertThatThrownBy(() -> c.rpc(0x11, WAIT)).isInstanceOfSatisfying(NaaiceException.class, e -> {
                    assertThat(e.reason()).isEqualTo(NaaiceException.Reason.NAA_RETURN_CODE);
                    assertThat(e.code()).isEqualTo(0x42);
                });
                assertThat(c.state()).isEqualTo(NaaState.ERROR);
                assertThat(c.lastReplyImmediate()).isEqualTo(0x4242);
                assertAll(io, 1); // no output written on error
                // an unknown function: application error 0x10
                assertThatThrownBy(() -> c.rpc(0x55, WAIT)).isInstanceOfSatisfying(NaaiceException.class,
                        e -> assertThat(e.code()).isEqualTo(Immediate.APPLICATION_ERROR));
                c.rpc(ReferenceKernels.FN_ADD_ONE, WAIT);
                assertThat(c.state()).isEqualTo(NaaState.FINISHED);
                assertAll(io, 2);
            }
        }
    }

    @Test
    void tooManyRegionsAndTooMuchMemoryAreMrspErrors() {
        try (RdmaArena arena = RdmaArena.ofShared()) {
            NaaClient.Builder b = fixture.client().maxRequestEntries(255);
            for (int i = 0; i < 41; i++) {
                b.input(arena.allocate(8));
            }
            try (NaaClient c = b.build()) {
                c.connect(WAIT);
                assertThatThrownBy(() -> c.setupRegions(WAIT)).isInstanceOfSatisfying(NaaiceException.class, e -> {
                    assertThat(e.reason()).isEqualTo(NaaiceException.Reason.MRSP_ERROR);
                    assertThat(e.code()).isEqualTo(Mrsp.TOO_MANY_REGIONS);
                });
                assertThat(c.state()).isEqualTo(NaaState.ERROR);
            }
            try (NaaClient c = fixture.client().input(arena.allocate(16)).internal(MAX_BYTES).build()) {
                c.connect(WAIT);
                assertThatThrownBy(() -> c.setupRegions(WAIT)).isInstanceOfSatisfying(NaaiceException.class, e -> {
                    assertThat(e.reason()).isEqualTo(NaaiceException.Reason.MRSP_ERROR);
                    assertThat(e.code()).isEqualTo(Mrsp.NOT_ENOUGH_MEMORY);
                });
                assertThat(c.state()).isEqualTo(NaaState.ERROR);
            }
        }
    }

    @Test
    void nonBlockingProgress() {
        try (RdmaArena arena = RdmaArena.ofShared()) {
            MemorySegment io = filled(arena, 256, 200);
            try (NaaClient c = fixture.client().inOut(io).build()) {
                c.startConnect();
                spin(c, NaaState.CONNECTED);
                c.startRegionSetup();
                spin(c, NaaState.MRSP_DONE);
                c.startRpc(ReferenceKernels.FN_ADD_ONE);
                spin(c, NaaState.FINISHED);
                assertAll(io, 201);
            }
        }
    }

    private static void spin(NaaClient c, NaaState target) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (c.progress() != target) {
            assertThat(c.state()).isNotEqualTo(NaaState.ERROR);
            assertThat(System.nanoTime()).isLessThan(deadline);
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }
    }

    @Test
    void nobodyListening() throws Exception {
        InetSocketAddress nowhere = NaaiceTestSupport.naaAddress(12399);
        try (RdmaArena arena = RdmaArena.ofShared(); NaaClient c = NaaClient.builder(nowhere).input(arena.allocate(8)).build()) {
            assertThatThrownBy(() -> c.connect(WAIT)).isInstanceOfSatisfying(NaaiceException.class,
                    e -> assertThat(e.reason()).isEqualTo(NaaiceException.Reason.CM_EVENT));
            assertThat(c.state()).isEqualTo(NaaState.ERROR);
            assertThat(c.failure()).isNotNull();
        }
    }

    private static InetSocketAddress at(TestBed.Host h, int port) throws Exception {
        return new InetSocketAddress(InetAddress.getByName(h.address()), port);
    }

    /** Sizes from 1 B up, several regions per connection, across hosts and on one device; every byte checked. */
    @Test
    void sizesAcrossHostsAndOnOneDevice() throws Exception {
        long[] sizes = {1, 2, 63, 4097, 65536, (1 << 20) + 13, 4L << 20};
        for (InetSocketAddress from : new InetSocketAddress[]{fixture.local, at(TestBed.hostB(), 0)}) {
            try (RdmaArena arena = RdmaArena.ofShared()) {
                NaaClient.Builder b = NaaClient.builder(fixture.naa).localAddress(from);
                MemorySegment[] p = new MemorySegment[sizes.length];
                for (int i = 0; i < sizes.length; i++) {
                    p[i] = arena.allocate(sizes[i], 4096);
                    fill(p[i], 10 + i);
                    b.inOut(p[i]);
                }
                try (NaaClient c = b.build()) {
                    c.connect(WAIT);
                    c.setupRegions(WAIT);
                    c.rpc(ReferenceKernels.FN_ADD_ONE, WAIT);
                    c.rpc(ReferenceKernels.FN_ADD_TWO, WAIT);
                    for (int i = 0; i < sizes.length; i++) {
                        assertAll(p[i], 10 + i + 3);
                    }
                    System.out.printf("%s -> %s: %d sizes 1 B .. 4 MiB, last RPC %d µs%n", from.getAddress().getHostAddress(),
                            fixture.naa.getAddress().getHostAddress(), sizes.length, c.lastRpcNanos() / 1000);
                }
            }
        }
    }

    /** One RPC with a 64 MiB input/output parameter across hosts. */
    @Test
    void sixtyFourMiB() {
        try (RdmaArena arena = RdmaArena.ofShared()) {
            MemorySegment big = arena.allocate(64L << 20, 4096);
            fill(big, 0x5a);
            try (NaaClient c = fixture.client().inOut(big).build()) {
                c.connect(WAIT);
                c.setupRegions(WAIT);
                c.rpc(ReferenceKernels.FN_ADD_TWO, Duration.ofSeconds(120));
                assertAll(big, 0x5c);
                assertThat(c.bytesReceived()).isEqualTo(64L << 20);
                System.out.printf("64 MiB in/out RPC: %d ms%n", c.lastRpcNanos() / 1_000_000);
            }
        }
    }

    /** The middleware (AP2): create / invoke / test / wait / close, NAA discovery from a spec. */
    @Test
    void middleware() throws Exception {
        String b = TestBed.hostB().address();
        NaaSpec spec = NaaSpec.parse(b + ":" + PORT + ":1:2,nowhere:1:9:1," + b + "::2:1");
        try (RdmaArena arena = RdmaArena.ofShared()) {
            MemorySegment a = filled(arena, 1000, 20);
            MemorySegment once = filled(arena, 300, 40);
            MemorySegment out = arena.allocate(2000);
            // a is input and output (merged into one region); once goes with the first invocation only
            try (NaaHandle h = NaaHandle.create(spec, TestBed.hostA().address(), 1,
                    List.of(NaaParam.of(a), NaaParam.once(once)), List.of(NaaParam.of(out), NaaParam.of(a)), WAIT)) {
                assertThat(spec.boundCount()).isEqualTo(1);
                assertThatThrownBy(() -> h.await(WAIT)).isInstanceOf(IllegalStateException.class);
                h.invoke();
                assertThatThrownBy(h::invoke).isInstanceOf(IllegalStateException.class); // one at a time
                NaaStatus st;
                long deadline = System.nanoTime() + WAIT.toNanos();
                while (!(st = h.test()).finished()) {
                    assertThat(System.nanoTime()).isLessThan(deadline);
                    Thread.sleep(1);
                }
                assertThat(st.succeeded()).isTrue();
                assertThat(st.bytesReceived()).isEqualTo(2000); // the last output region
                assertAll(a, 21);
                assertAll(out, 1);
                assertAll(once, 40); // an input only
                h.invoke();
                st = h.await(WAIT);
                assertThat(st.state()).isEqualTo(NaaState.FINISHED);
                assertAll(a, 22);
                assertAll(out, 2);
                assertThat(h.invocations()).isEqualTo(2);
                // the only free item for function 1 is taken
                assertThatThrownBy(() -> NaaHandle.create(spec, null, 1, List.of(NaaParam.of(a), NaaParam.of(once)),
                        List.of(NaaParam.of(out)), WAIT)).isInstanceOfSatisfying(NaaiceException.class,
                        e -> assertThat(e.reason()).isEqualTo(NaaiceException.Reason.CONFIGURATION));
            }
            assertThat(spec.boundCount()).isZero();
            // parameter count mismatch (function 2 takes 1 input)
            assertThatThrownBy(() -> NaaHandle.create(spec, null, 2, List.of(NaaParam.of(a), NaaParam.of(once)),
                    List.of(NaaParam.of(out)), WAIT)).isInstanceOfSatisfying(NaaiceException.class,
                    e -> assertThat(e.reason()).isEqualTo(NaaiceException.Reason.CONFIGURATION));
            assertThat(spec.boundCount()).isZero();
        }
    }

    /**
     * The middleware handle shared by several threads: they invoke, test and wait at random; every
     * invocation that started is counted exactly once, and the data shows as many kernel runs.
     */
    @Test
    void middlewareHandleFromSeveralThreads() throws Exception {
        String b = TestBed.hostB().address();
        NaaSpec spec = NaaSpec.parse(b + ":" + PORT + ":1:1");
        try (RdmaArena arena = RdmaArena.ofShared()) {
            MemorySegment io = filled(arena, 4096, 0);
            try (NaaHandle h = NaaHandle.create(spec, TestBed.hostA().address(), 1, List.of(NaaParam.of(io)),
                    List.of(NaaParam.of(io)), WAIT)) {
                int threads = 4;
                java.util.concurrent.atomic.AtomicInteger started = new java.util.concurrent.atomic.AtomicInteger();
                java.util.concurrent.atomic.AtomicInteger busy = new java.util.concurrent.atomic.AtomicInteger();
                java.util.concurrent.ConcurrentLinkedQueue<Throwable> errors = new java.util.concurrent.ConcurrentLinkedQueue<>();
                Thread[] ts = new Thread[threads];
                for (int t = 0; t < threads; t++) {
                    int me = t;
                    ts[t] = Thread.ofPlatform().start(() -> {
                        try {
                            java.util.Random r = new java.util.Random(me);
                            for (int i = 0; i < 40; i++) {
                                try {
                                    h.invoke();
                                    started.incrementAndGet();
                                } catch (IllegalStateException e) {
                                    busy.incrementAndGet();
                                }
                                if (r.nextBoolean()) {
                                    NaaStatus st = h.await(WAIT);
                                    assertThat(st.finished()).isTrue();
                                    assertThat(st.naaError()).isZero();
                                } else {
                                    h.test();
                                }
                            }
                        } catch (Throwable e) {
                            errors.add(e);
                        }
                    });
                }
                for (Thread t : ts) {
                    t.join(120_000);
                }
                assertThat(errors).isEmpty();
                h.await(WAIT);
                assertThat(h.invocations()).isEqualTo(started.get());
                assertThat(started.get()).isPositive();
                assertAll(io, started.get() & 0xff);
                System.out.printf("AP2 handle, %d threads: %d invocations, %d refused while one ran%n", threads, started.get(),
                        busy.get());
            }
        }
    }

    /**
     * 10,000 malformed or random MRSP messages: each gets the MRSP error the server must send (or,
     * for a client error message, nothing; or the connection closes), and well-formed clients are
     * served throughout.
     */
    @Test
    void tenThousandMalformedMrspMessages() throws Exception {
        int messages = 10_000;
        int peers = 4; // concurrent raw peers: the round trips overlap
        long[][] counts = new long[peers][];
        java.util.concurrent.ConcurrentLinkedQueue<Throwable> errors = new java.util.concurrent.ConcurrentLinkedQueue<>();
        long t0 = System.nanoTime();
        Thread[] ts = new Thread[peers];
        for (int p = 0; p < peers; p++) {
            int me = p;
            ts[p] = Thread.ofPlatform().start(() -> {
                try {
                    counts[me] = fuzzPeer(42 + me, messages / peers, me);
                } catch (Throwable e) {
                    errors.add(e);
                }
            });
        }
        for (Thread t : ts) {
            t.join(600_000);
        }
        if (!errors.isEmpty()) {
            AssertionError e = new AssertionError(errors.size() + " peers failed; first: " + errors.peek(), errors.peek());
            errors.forEach(e::addSuppressed);
            throw e;
        }
        long[] sum = new long[4];
        for (long[] c : counts) {
            for (int i = 0; i < 4; i++) {
                sum[i] += c[i];
            }
        }
        System.out.printf("%d MRSP messages from %d peers in %d ms: %d MRSP errors, %d unanswered client errors, %d closed,"
                + " %d accepted%n", messages, peers, (System.nanoTime() - t0) / 1_000_000, sum[0], sum[1], sum[2], sum[3]);
        assertThat(sum[0] + sum[1] + sum[2] + sum[3]).isEqualTo(messages);
        assertThat(sum[0]).isGreaterThan(messages / 2);
    }

    /** One fuzzing peer: {@code messages} messages; returns {errors, unanswered, closed, accepted}. */
    private static long[] fuzzPeer(long seed, int messages, int me) throws Exception {
        java.util.Random r = new java.util.Random(seed);
        long errs = 0;
        long silent = 0;
        long closed = 0;
        long accepted = 0;
        RawMrspClient raw = new RawMrspClient(fixture.naa, fixture.local, WAIT);
        try (RdmaArena arena = RdmaArena.ofShared()) {
            MemorySegment io = arena.allocate(256);
            for (int i = 0; i < messages; i++) {
                if (raw.broken()) {
                    raw.close();
                    raw = new RawMrspClient(fixture.naa, fixture.local, WAIT);
                }
                byte[] m = fuzz(r, i);
                // what the server must answer, by the rules of the protocol
                int want;
                try {
                    if (m.length > Mrsp.MAX_MESSAGE) {
                        throw new MalformedMrspException("too long", -2);
                    }
                    want = switch (Mrsp.decode(m)) {
                        case MrspMessage.Error e -> -1; // a client's error message: no answer
                        case MrspMessage.Advertise a -> Mrsp.MALFORMED_MESSAGE;
                        case MrspMessage.Request q -> q.entries().size() > 40 ? Mrsp.TOO_MANY_REGIONS
                                : q.entries().stream().mapToLong(MrspMessage.RequestEntry::size).sum() > MAX_BYTES
                                ? Mrsp.NOT_ENOUGH_MEMORY : 0;
                    };
                } catch (MalformedMrspException e) {
                    want = e.errorCode() == -2 ? -2 : Mrsp.MALFORMED_MESSAGE;
                }
                RawMrspClient.Outcome o = raw.send(m, want == -1 ? Duration.ofMillis(1) : WAIT);
                String what = "peer " + me + " message " + i + " " + java.util.HexFormat.of().formatHex(m, 0, Math.min(m.length, 64));
                switch (o) {
                    case ANSWER -> {
                        MrspMessage ans = raw.answer();
                        if (want == 0) {
                            assertThat(ans).as(what).isInstanceOf(MrspMessage.Advertise.class);
                            accepted++;
                            raw.close(); // regions set up: start over on a new connection
                            raw = new RawMrspClient(fixture.naa, fixture.local, WAIT);
                        } else {
                            assertThat(want).as(what).isPositive();
                            assertThat(ans).as(what).isEqualTo(new MrspMessage.Error(want));
                            errs++;
                        }
                    }
                    case NOTHING -> {
                        assertThat(want).as(what + " got no answer").isEqualTo(-1);
                        silent++;
                    }
                    case CLOSED -> {
                        assertThat(want).as(what + " closed the connection").isEqualTo(-2);
                        closed++;
                    }
                }
                if (me == 0 && i % 1250 == 1249) {
                    // a well-formed client is served meanwhile
                    fill(io, i & 0x7f);
                    try (NaaClient c = fixture.client().inOut(io).build()) {
                        c.connect(WAIT);
                        c.setupRegions(WAIT);
                        c.rpc(ReferenceKernels.FN_ADD_ONE, WAIT);
                        assertAll(io, (i & 0x7f) + 1);
                    }
                }
            }
        } finally {
            raw.close();
        }
        return new long[]{errs, silent, closed, accepted};
    }

    /** A random or malformed MRSP message. */
    private static byte[] fuzz(java.util.Random r, int i) {
        if (i % 1000 == 999) {
            byte[] m = new byte[Mrsp.MAX_MESSAGE + 1 + r.nextInt(100)]; // longer than the server's receive buffer
            m[0] = 1;
            return m;
        }
        switch (r.nextInt(8)) {
            case 0 -> { // random bytes
                byte[] m = new byte[r.nextInt(48)];
                r.nextBytes(m);
                if (m.length >= 4 && m[0] == 0) {
                    m[0] = 9;
                }
                return m;
            }
            case 1 -> { // request whose count does not match its length
                int count = 1 + r.nextInt(255);
                byte[] m = new byte[Mrsp.HEADER + Mrsp.REQUEST_ENTRY * r.nextInt(count)];
                m[0] = 1;
                m[1] = (byte) count;
                return m;
            }
            case 2 -> { // well-formed request, random entries (sizes mostly far too large)
                int count = 1 + r.nextInt(8);
                byte[] m = new byte[Mrsp.HEADER + Mrsp.REQUEST_ENTRY * count];
                r.nextBytes(m);
                m[0] = 1;
                m[1] = (byte) count;
                m[2] = 0;
                m[3] = 0;
                for (int e = 0; e < count; e++) {
                    m[Mrsp.HEADER + e * Mrsp.REQUEST_ENTRY + 20] |= 0x40; // >= 1 GiB each
                }
                return m;
            }
            case 3 -> { // too many regions
                int count = 41 + r.nextInt(215);
                byte[] m = new byte[Mrsp.HEADER + Mrsp.REQUEST_ENTRY * count];
                m[0] = 1;
                m[1] = (byte) count;
                return m;
            }
            case 4 -> { // an advertise or a "request only" from a client
                byte[] m = new byte[Mrsp.HEADER + 16 * r.nextInt(4)];
                m[0] = (byte) (2 + r.nextInt(2));
                m[1] = (byte) ((m.length - 4) / 16);
                return m;
            }
            case 5 -> { // unknown type
                byte[] m = new byte[4 + r.nextInt(60)];
                r.nextBytes(m);
                m[0] = (byte) (4 + r.nextInt(252));
                return m;
            }
            case 6 -> { // short messages, or a client's error message (no answer)
                return new byte[r.nextInt(5)];
            }
            default -> { // a header only with a random count
                return new byte[]{1, (byte) r.nextInt(256), 0, 0};
            }
        }
    }

    /**
     * Load: concurrent clients, RPCs of 1 MiB in/out with function 1, every byte checked; then
     * the process's file descriptors are back where they were, and its native memory is flat: the
     * RPCs run in two equal halves, and the second half may not grow the resident memory beyond
     * the Java heap by more than a few MiB (a leak grows with the RPCs, in both halves alike; what
     * the allocator keeps after the first half, e.g. freed 1 MiB blocks in its per-thread arenas,
     * it reuses in the second). The memory region and queue pair counts are printed; the
     * per-process count from {@code rdma res} did not see the queue pairs in this VM, so they are
     * not asserted.
     */
    @Test
    @Timeout(900)
    void loadConcurrentClients() throws Exception {
        int clients = LOAD_CLIENTS;
        int rpcs = LOAD_RPCS;
        // warm up at full concurrency, so the baseline includes what the JIT, the threads and the
        // allocator keep at the peak
        runLoad(clients, 1);
        Footprint before = Footprint.settled();
        long t0 = System.nanoTime();
        runLoad(clients, rpcs / 2);
        Footprint half = Footprint.settled();
        runLoad(clients, rpcs - rpcs / 2);
        long ms = (System.nanoTime() - t0) / 1_000_000;
        Footprint after = Footprint.settled();
        System.out.printf("load: %d clients x %d RPCs of 1 MiB in %d ms (%.1f MB/s both ways); fds %d -> %d -> %d,"
                        + " MRs %d -> %d, QPs %d -> %d, RSS %d -> %d -> %d KiB, Java heap committed %d -> %d -> %d KiB,"
                        + " native growth %d KiB in the first half, %d KiB in the second%n",
                clients, rpcs, ms, 2.0 * clients * rpcs * (1 << 20) / 1e3 / ms, before.fds, half.fds, after.fds, before.mrs,
                after.mrs, before.qps, after.qps, before.rssKiB, half.rssKiB, after.rssKiB, before.heapKiB, half.heapKiB,
                after.heapKiB, half.nativeGrowthSince(before), after.nativeGrowthSince(half));
        assertThat(fixture.server.connectionCount()).isZero();
        assertThat(after.fds).isEqualTo(before.fds);
        // 16 MiB: second halves measured -0.8 to +8.7 MiB; a leak of 20 KiB per 1 MiB RPC exceeds it
        assertThat(after.nativeGrowthSince(half)).as("RSS growth beyond the Java heap in the second half, KiB")
                .isLessThan(16 * 1024);
    }

    /** This process's file descriptors, RDMA resources and memory once the server has let go of every connection. */
    private record Footprint(int fds, int mrs, int qps, long rssKiB, long heapKiB) {

        static Footprint settled() throws Exception {
            // the server frees a connection on the client's disconnect, asynchronously
            long until = System.nanoTime() + 30_000_000_000L;
            while (fixture.server.connectionCount() > 0 && System.nanoTime() < until) {
                Thread.sleep(50);
            }
            System.gc();
            return new Footprint(NaaiceTestSupport.openFds(), NaaiceTestSupport.rdmaResources("mr"),
                    NaaiceTestSupport.rdmaResources("qp"), NaaiceTestSupport.rssKiB(), Runtime.getRuntime().totalMemory() / 1024);
        }

        /** Resident memory grown since {@code earlier}, less what the Java heap grew. */
        long nativeGrowthSince(Footprint earlier) {
            return (rssKiB - earlier.rssKiB) - (heapKiB - earlier.heapKiB);
        }
    }

    /** 16 concurrent clients, as the issue asks. */
    static final int LOAD_CLIENTS = 16;
    /** RPCs per client: 100, as the issue asks ({@code -Dnaaice.load.rpcs=N} for another count). */
    static final int LOAD_RPCS = Integer.getInteger("naaice.load.rpcs", 100);

    private static void runLoad(int clients, int rpcs) throws Exception {
        java.util.concurrent.ConcurrentLinkedQueue<Throwable> errors = new java.util.concurrent.ConcurrentLinkedQueue<>();
        Thread[] ts = new Thread[clients];
        for (int t = 0; t < clients; t++) {
            int me = t;
            ts[t] = Thread.ofPlatform().start(() -> {
                try (RdmaArena arena = RdmaArena.ofShared()) {
                    MemorySegment io = arena.allocate(1 << 20, 4096);
                    try (NaaClient c = fixture.client().inOut(io).build()) {
                        c.connect(Duration.ofSeconds(120));
                        c.setupRegions(Duration.ofSeconds(120));
                        for (int i = 0; i < rpcs; i++) {
                            int v = (me * 31 + i * 7) & 0xff;
                            fill(io, v);
                            c.rpc(ReferenceKernels.FN_ADD_ONE, Duration.ofSeconds(120));
                            assertAll(io, v + 1);
                        }
                    }
                } catch (Throwable e) {
                    errors.add(e);
                }
            });
        }
        for (Thread t : ts) {
            t.join(600_000);
        }
        if (!errors.isEmpty()) {
            AssertionError e = new AssertionError(errors.size() + " clients failed; first: " + errors.peek());
            errors.forEach(e::addSuppressed);
            throw e;
        }
    }
}
