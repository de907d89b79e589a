package dev.verbs4j.vipl;

import dev.verbs4j.verbs.RdmaArena;
import dev.verbs4j.verbs.TestBed;
import dev.verbs4j.verbs.ToolRunner;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The fixture of the VIPL device tests: a NIC on each of the two test hosts (client VIs on host A,
 * server VIs on host B, in one process), each with a tag, a data region with RDMA enabled and a
 * region of descriptors, all in one RdmaArena closed after the class; and the steps the tests
 * share (connect, wait, tear down).
 */
abstract class ViplTwoHosts {

    static final int DESC_SIZE = 256;
    static final int SEGS = (DESC_SIZE - VipDescriptor.CONTROL_SIZE) / VipDescriptor.SEGMENT_SIZE;
    static final long WAIT = 10_000;
    private static final String POOL_THREAD = "vipl-test-";

    /** One host's NIC, tag, a data region (RDMA enabled) and a descriptor region. */
    static final class Side {
        final VipNic nic;
        final VipPtag ptag;
        final MemorySegment data;
        final VipMemHandle dataH;
        final MemorySegment descs;
        final VipMemHandle descH;
        final List<VipErrorDescriptor> errors = new CopyOnWriteArrayList<>();
        final String address;

        Side(VipNic nic, VipPtag ptag, MemorySegment data, VipMemHandle dataH, MemorySegment descs, VipMemHandle descH,
             String address) {
            this.nic = nic;
            this.ptag = ptag;
            this.data = data;
            this.dataH = dataH;
            this.descs = descs;
            this.descH = descH;
            this.address = address;
        }

        VipDescriptor desc(int slot) {
            return VipDescriptor.at(descs, (long) slot * DESC_SIZE, SEGS);
        }

        VipNetAddress addr(byte[] disc) {
            return VipNetAddress.of(address, disc);
        }

        /** Registers the error handler that collects into {@link #errors} (context "ctx"). */
        void collectErrors() {
            assertThat(Vipl.errorCallback(nic, "ctx", (ctx, e) -> {
                assertThat(ctx).isEqualTo("ctx");
                errors.add(e);
            })).isEqualTo(VipReturn.SUCCESS);
        }
    }

    static RdmaArena arena;
    static Side a;
    static Side b;
    static ExecutorService pool;

    private static Side side(TestBed.Host host) {
        VipNic nic = Vipl.openNic(host.device());
        VipPtag ptag = Vipl.createPtag(nic);
        MemorySegment data = arena.allocate(1 << 20, 4096);
        MemorySegment descs = arena.allocate(512 * DESC_SIZE, 4096);
        VipMemHandle dataH = Vipl.registerMem(nic, data, new VipMemAttributes(ptag, true, true));
        VipMemHandle descH = Vipl.registerMem(nic, descs, VipMemAttributes.of(ptag));
        Side s = new Side(nic, ptag, data, dataH, descs, descH, host.address());
        s.collectErrors();
        return s;
    }

    @BeforeAll
    static void open() {
        arena = RdmaArena.ofShared();
        pool = Executors.newCachedThreadPool(Thread.ofPlatform().name(POOL_THREAD, 0).factory());
        a = side(TestBed.hostA());
        b = side(TestBed.hostB());
        listen(b.nic, b.address);
    }

    /**
     * Starts {@code nic}'s listener before any request comes (VipConnectWait starts it; with
     * timeout 0 it returns TIMEOUT at once), so that no request finds the port closed.
     */
    static void listen(VipNic nic, String address) {
        assertThatThrownBy(() -> Vipl.connectWait(nic, VipNetAddress.of(address, new byte[]{0}), 0))
                .isInstanceOf(VipException.class).extracting(e -> ((VipException) e).code()).isEqualTo(VipReturn.TIMEOUT);
    }

    @AfterAll
    static void close() {
        if (a != null) {
            Vipl.closeNic(a.nic);
        }
        if (b != null) {
            Vipl.closeNic(b.nic);
        }
        pool.shutdownNow();
        arena.close();
    }

    @BeforeEach
    void clearErrors() {
        a.errors.clear();
        b.errors.clear();
    }

    static VipViAttributes rd(Side s) {
        return VipViAttributes.of(s.ptag).withRdma(true, true);
    }

    static VipViAttributes rr(Side s) {
        return rd(s).withReliabilityLevel(VipReliabilityLevel.RELIABLE_RECEPTION);
    }

    /**
     * How long {@link #await} waits for a call on {@link #pool} before it calls it hung. The calls
     * the tests make end within {@link #WAIT} (their own timeouts are shorter); once, with other
     * VMs busy on the host, two connection attempts cancelled under way did not, and the cause is
     * not known: {@link #await} says where the pool's threads were when {@link #WAIT} had passed.
     */
    static final long HUNG = 60_000;

    /**
     * The result of {@code f}, a call on {@link #pool}, waiting at most {@link #HUNG}. When it
     * takes longer than {@link #WAIT}, prints where each of the pool's threads was then, and how
     * long the call took; when it takes {@link #HUNG}, fails with those stacks.
     */
    static <T> T await(Future<T> f) throws Exception {
        long t0 = System.nanoTime();
        try {
            return f.get(WAIT, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            String where = poolThreads();
            System.out.println("[vipl] a call on the test pool still runs after " + WAIT + " ms; the pool's threads:" + where);
            try {
                T result = f.get(HUNG - WAIT, TimeUnit.MILLISECONDS);
                System.out.printf("[vipl] ... it ended after %d ms%n", (System.nanoTime() - t0) / 1_000_000);
                return result;
            } catch (TimeoutException hung) {
                throw new AssertionError("no result after " + HUNG + " ms; the pool's threads after " + WAIT + " ms:" + where
                        + "\nand now:" + poolThreads(), hung);
            }
        }
    }

    private static String poolThreads() {
        StringBuilder where = new StringBuilder();
        Thread.getAllStackTraces().forEach((t, stack) -> {
            boolean idle = Arrays.stream(stack).anyMatch(f -> f.getMethodName().equals("getTask"));
            if (t.getName().startsWith(POOL_THREAD) && !idle) {
                where.append("\n  ").append(t.getName()).append(" ").append(t.getState()).append(ToolRunner.stack(stack));
            }
        });
        return where.toString();
    }

    /**
     * Connects {@code client} (host A) to {@code server} (host B) waiting on {@code disc}, checking
     * §12 test 1 on the way: each side receives the other's address and attributes, and both VIs
     * are Connected.
     */
    static void connect(VipVi client, VipVi server, byte[] disc) throws Exception {
        Future<VipReturn> accepted = pool.submit(() -> {
            VipConnHandle h = Vipl.connectWait(b.nic, b.addr(disc), WAIT);
            assertThat(h.remoteAttributes()).isEqualTo(withoutTag(client.attributes()));
            assertThat(h.remoteAddress().inetAddress().getHostAddress()).isEqualTo(a.address);
            return Vipl.connectAccept(h, server);
        });
        assertThat(Vipl.connectRequest(client, a.addr(new byte[]{1}), b.addr(disc), WAIT)).isEqualTo(VipReturn.SUCCESS);
        assertThat(await(accepted)).isEqualTo(VipReturn.SUCCESS);
        assertThat(client.remoteAttributes()).isEqualTo(withoutTag(server.attributes()));
        assertThat(server.remoteAttributes()).isEqualTo(withoutTag(client.attributes()));
        assertThat(Vipl.queryVi(client).state()).isEqualTo(VipViState.CONNECTED);
        assertThat(Vipl.queryVi(server).state()).isEqualTo(VipViState.CONNECTED);
    }

    /** {@code v} as the peer sees it: the tag is local and does not travel. */
    static VipViAttributes withoutTag(VipViAttributes v) {
        return new VipViAttributes(v.reliabilityLevel(), v.maxTransferSize(), v.qos(), null, v.enableRdmaWrite(), v.enableRdmaRead());
    }

    /** The next receive of {@code vi}, waited for. */
    static VipDescriptor recv(VipVi vi) {
        VipDescriptor out = VipDescriptor.empty();
        assertThat(Vipl.recvWait(vi, WAIT, out)).isEqualTo(VipReturn.SUCCESS);
        return out;
    }

    /** The next completed send of {@code vi}, waited for. */
    static VipDescriptor sent(VipVi vi) {
        VipDescriptor out = VipDescriptor.empty();
        assertThat(Vipl.sendWait(vi, WAIT, out)).isEqualTo(VipReturn.SUCCESS);
        return out;
    }

    /** Disconnects, dequeues everything (each descriptor done) and destroys each VI. */
    static void teardown(VipVi... vis) {
        VipDescriptor out = VipDescriptor.empty();
        for (VipVi vi : vis) {
            assertThat(Vipl.disconnect(vi)).isEqualTo(VipReturn.SUCCESS);
            VipReturn rs;
            VipReturn rr;
            while ((rs = Vipl.sendDone(vi, out)) != VipReturn.NOT_DONE | (rr = Vipl.recvDone(vi, out)) != VipReturn.NOT_DONE) {
                assertThat(rs).isIn(VipReturn.SUCCESS, VipReturn.NOT_DONE, VipReturn.DESCRIPTOR_ERROR);
                assertThat(rr).isIn(VipReturn.SUCCESS, VipReturn.NOT_DONE, VipReturn.DESCRIPTOR_ERROR);
            }
            assertThat(Vipl.destroyVi(vi)).isEqualTo(VipReturn.SUCCESS);
        }
    }
}
