package dev.verbs4j.vipl;

import dev.verbs4j.verbs.TestBed;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The §12 rules ViplDeviceTest covers only in part, on Soft-RoCE between the two test hosts
 * (client VIs on host A, server VIs on host B, in one process), and the handling of descriptors
 * and regions that go away while posted. Each test names the §12 test and the rule it checks.
 */
@Tag(TestBed.TAG)
@Timeout(120)
class ViplRulesDeviceTest {

    private static final int DESC_SIZE = 256;
    private static final int SEGS = (DESC_SIZE - VipDescriptor.CONTROL_SIZE) / VipDescriptor.SEGMENT_SIZE;
    private static final long WAIT = 10_000;

    /** One host's NIC, tag, a data region (RDMA enabled) and a descriptor region. */
    record Side(VipNic nic, VipPtag ptag, MemorySegment data, VipMemHandle dataH, MemorySegment descs, VipMemHandle descH,
                List<VipErrorDescriptor> errors, String address) {

        VipDescriptor desc(int slot) {
            return VipDescriptor.at(descs, (long) slot * DESC_SIZE, SEGS);
        }

        VipNetAddress addr(byte[] disc) {
            return VipNetAddress.of(address, disc);
        }

        void collectErrors() {
            assertThat(Vipl.errorCallback(nic, "ctx", (ctx, e) -> errors.add(e))).isEqualTo(VipReturn.SUCCESS);
        }
    }

    private static Arena arena;
    private static Side a;
    private static Side b;
    private static ExecutorService pool;

    private static Side side(TestBed.Host host) {
        VipNic nic = Vipl.openNic(host.device());
        VipPtag ptag = Vipl.createPtag(nic);
        MemorySegment data = arena.allocate(1 << 20, 4096);
        MemorySegment descs = arena.allocate(512 * DESC_SIZE, 4096);
        VipMemHandle dataH = Vipl.registerMem(nic, data, new VipMemAttributes(ptag, true, true));
        VipMemHandle descH = Vipl.registerMem(nic, descs, VipMemAttributes.of(ptag));
        Side s = new Side(nic, ptag, data, dataH, descs, descH, new CopyOnWriteArrayList<>(), host.address());
        s.collectErrors();
        return s;
    }

    @BeforeAll
    static void open() {
        arena = Arena.ofShared();
        pool = Executors.newCachedThreadPool();
        a = side(TestBed.hostA());
        b = side(TestBed.hostB());
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

    private static VipViAttributes rd(Side s) {
        return VipViAttributes.of(s.ptag).withRdma(true, true);
    }

    private static VipViAttributes rr(Side s) {
        return rd(s).withReliabilityLevel(VipReliabilityLevel.RELIABLE_RECEPTION);
    }

    /** Connects {@code client} (host A) to {@code server} (host B) waiting on {@code disc}. */
    private static void connect(VipVi client, VipVi server, byte[] disc) throws Exception {
        Future<VipReturn> accepted = pool.submit(() -> Vipl.connectAccept(Vipl.connectWait(b.nic, b.addr(disc), WAIT), server));
        assertThat(Vipl.connectRequest(client, a.addr(new byte[]{1}), b.addr(disc), WAIT)).isEqualTo(VipReturn.SUCCESS);
        assertThat(accepted.get(WAIT, TimeUnit.MILLISECONDS)).isEqualTo(VipReturn.SUCCESS);
    }

    private static VipDescriptor recv(VipVi vi) {
        VipDescriptor out = VipDescriptor.empty();
        assertThat(Vipl.recvWait(vi, WAIT, out)).isEqualTo(VipReturn.SUCCESS);
        return out;
    }

    private static VipDescriptor sent(VipVi vi) {
        VipDescriptor out = VipDescriptor.empty();
        assertThat(Vipl.sendWait(vi, WAIT, out)).isEqualTo(VipReturn.SUCCESS);
        return out;
    }

    /** Disconnects, dequeues everything and destroys each VI. */
    private static void teardown(VipVi... vis) {
        VipDescriptor out = VipDescriptor.empty();
        for (VipVi vi : vis) {
            assertThat(Vipl.disconnect(vi)).isEqualTo(VipReturn.SUCCESS);
            VipReturn rc;
            while ((rc = Vipl.sendDone(vi, out)) != VipReturn.NOT_DONE | (rc = Vipl.recvDone(vi, out)) != VipReturn.NOT_DONE) {
                assertThat(rc).isIn(VipReturn.SUCCESS, VipReturn.NOT_DONE, VipReturn.DESCRIPTOR_ERROR);
            }
            assertThat(Vipl.destroyVi(vi)).isEqualTo(VipReturn.SUCCESS);
        }
    }

    /** Waits until {@code vi} is in {@code state}. */
    private static void awaitState(VipVi vi, VipViState state) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT);
        while (Vipl.queryVi(vi).state() != state && System.nanoTime() < until) {
            Thread.sleep(10);
        }
        assertThat(Vipl.queryVi(vi).state()).isEqualTo(state);
    }

    private static VipDescriptor sendOf(Side s, int slot, long offset, int length) {
        return s.desc(slot).sendReceive(0).addData(s.data.asSlice(offset, length), s.dataH);
    }

    /**
     * §12 test 36 (§3.2.1) on an Idle VI: a receive posted while Idle whose buffer region is then
     * deregistered, before the connection hands it to the device, completes with PROTECTION_ERROR
     * when the peer's message reaches it, and the memory is not written (not FORMAT_ERROR, not an
     * asynchronous VI overrun).
     */
    @Test
    void test36DeregisteredBeforeTheConnection() throws Exception {
        VipVi c = Vipl.createVi(a.nic, rd(a), null, null);
        VipVi s = Vipl.createVi(b.nic, rd(b), null, null);
        MemorySegment region = arena.allocate(4096, 4096);
        VipMemHandle regionH = Vipl.registerMem(b.nic, region, VipMemAttributes.of(b.ptag));
        VipDescriptor gone = b.desc(0).sendReceive(0).addData(region.asSlice(0, 64), regionH);
        assertThat(Vipl.postRecv(s, gone, b.descH)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.deregisterMem(b.nic, region.address(), regionH)).isEqualTo(VipReturn.SUCCESS);
        connect(c, s, new byte[]{'d', '3', '6'});
        VipDescriptor out = VipDescriptor.empty();
        assertThat(Vipl.recvDone(s, out)).as("nothing reached it yet").isEqualTo(VipReturn.NOT_DONE);
        a.data.asSlice(0, 64).fill((byte) 0x36);
        assertThat(Vipl.postSend(c, sendOf(a, 0, 0, 64), a.descH)).isEqualTo(VipReturn.SUCCESS);
        VipDescriptor got = recv(s);
        assertThat(got.address()).isEqualTo(gone.address());
        assertThat(got.status() & VipStatus.ERROR_MASK).as(VipStatus.describe(got.status())).isEqualTo(VipStatus.PROTECTION_ERROR);
        assertThat(region.get(ValueLayout.JAVA_BYTE, 0)).isZero();
        assertThat(b.errors).extracting(VipErrorDescriptor::errorCode).doesNotContain(VipErrorCode.VI_OVERRUN);
        assertThat(sent(c).status() & VipStatus.ERROR_MASK).isNotZero();
        teardown(c, s);
    }

    /**
     * A descriptor whose memory (its arena) is closed: posting it is INVALID_PARAMETER; closed
     * while posted, its completion is dequeued with DESCRIPTOR_ERROR and the completions polled
     * with it are not lost (the next receive gets its message).
     */
    @Test
    void descriptorMemoryClosedWhilePosted() throws Exception {
        VipVi c = Vipl.createVi(a.nic, rd(a), null, null);
        VipVi s = Vipl.createVi(b.nic, rd(b), null, null);
        connect(c, s, new byte[]{'a', 'r', 'n'});
        Arena small = Arena.ofShared();
        MemorySegment mem = small.allocate(DESC_SIZE, 64);
        VipMemHandle memH = Vipl.registerMem(b.nic, mem, VipMemAttributes.of(b.ptag));
        VipDescriptor first = VipDescriptor.at(mem, 0, SEGS).sendReceive(0).addData(b.data.asSlice(0, 64), b.dataH);
        VipDescriptor second = b.desc(1).sendReceive(0).addData(b.data.asSlice(64, 64), b.dataH);
        assertThat(Vipl.postRecv(s, first, memH)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.postRecv(s, second, b.descH)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.deregisterMem(b.nic, mem.address(), memH)).isEqualTo(VipReturn.SUCCESS);
        small.close();
        assertThat(Vipl.postRecv(s, first, b.descH)).as("closed memory").isEqualTo(VipReturn.INVALID_PARAMETER);
        // both messages complete in one poll
        b.data.asSlice(0, 128).fill((byte) 0);
        a.data.asSlice(0, 64).fill((byte) 0x41);
        a.data.asSlice(64, 64).fill((byte) 0x42);
        assertThat(Vipl.postSend(c, sendOf(a, 0, 0, 64), a.descH)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.postSend(c, sendOf(a, 1, 64, 64), a.descH)).isEqualTo(VipReturn.SUCCESS);
        assertThat(sent(c).status()).isEqualTo(VipStatus.DONE | VipStatus.OP_SEND);
        assertThat(sent(c).status()).isEqualTo(VipStatus.DONE | VipStatus.OP_SEND);
        VipDescriptor out = VipDescriptor.empty();
        assertThat(Vipl.recvWait(s, WAIT, out)).isEqualTo(VipReturn.DESCRIPTOR_ERROR);
        assertThat(out.address()).isEqualTo(mem.address());
        VipDescriptor got = recv(s);
        assertThat(got.address()).isEqualTo(second.address());
        assertThat(got.status()).isEqualTo(VipStatus.DONE | VipStatus.OP_RECEIVE);
        assertThat(b.data.get(ValueLayout.JAVA_BYTE, 64 + 63)).isEqualTo((byte) 0x42);
        assertThat(Vipl.queryVi(s).state()).isEqualTo(VipViState.CONNECTED);
        // the queue goes on: a descriptor posted after the closed one is linked and completes
        assertThat(Vipl.postRecv(s, b.desc(2).sendReceive(0).addData(b.data.asSlice(0, 8), b.dataH), b.descH))
                .isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.postSend(c, sendOf(a, 2, 0, 8), a.descH)).isEqualTo(VipReturn.SUCCESS);
        assertThat(recv(s).status()).isEqualTo(VipStatus.DONE | VipStatus.OP_RECEIVE);
        assertThat(sent(c).status()).isEqualTo(VipStatus.DONE | VipStatus.OP_SEND);
        teardown(c, s);
    }

    /**
     * §12 test 16 (§6.4.1, §2.5): a receive too small for the incoming send gets LENGTH_ERROR with
     * Length 0; under Reliable Reception both VIs end in Error; under Reliable Delivery the other
     * receives posted come back DESC_FLUSHED. A send larger than MaxTransferSize is LENGTH_ERROR.
     */
    @Test
    void test16ReceiveTooSmallAndTooLargeSend() throws Exception {
        for (VipReliabilityLevel level : new VipReliabilityLevel[]{VipReliabilityLevel.RELIABLE_RECEPTION,
                VipReliabilityLevel.RELIABLE_DELIVERY}) {
            VipVi c = Vipl.createVi(a.nic, rd(a).withReliabilityLevel(level), null, null);
            VipVi s = Vipl.createVi(b.nic, rd(b).withReliabilityLevel(level), null, null);
            connect(c, s, new byte[]{'l', '1', '6', (byte) level.ordinal()});
            VipDescriptor small = b.desc(0).sendReceive(0).addData(b.data.asSlice(0, 16), b.dataH);
            assertThat(Vipl.postRecv(s, small, b.descH)).isEqualTo(VipReturn.SUCCESS);
            for (int i = 1; i <= 2; i++) {
                assertThat(Vipl.postRecv(s, b.desc(i).sendReceive(0).addData(b.data.asSlice(i * 1024L, 256), b.dataH), b.descH))
                        .isEqualTo(VipReturn.SUCCESS);
            }
            assertThat(Vipl.postSend(c, sendOf(a, 0, 0, 100), a.descH)).isEqualTo(VipReturn.SUCCESS);
            VipDescriptor got = recv(s);
            assertThat(got.address()).isEqualTo(small.address());
            assertThat(got.status()).as(level + ": " + VipStatus.describe(got.status()))
                    .isEqualTo(VipStatus.DONE | VipStatus.LENGTH_ERROR | VipStatus.OP_RECEIVE);
            assertThat(got.length()).isZero();
            for (int i = 1; i <= 2; i++) {
                VipDescriptor rest = recv(s);
                assertThat(rest.address()).isEqualTo(b.desc(i).address());
                assertThat(rest.status()).as(level + ": " + VipStatus.describe(rest.status()))
                        .isEqualTo(VipStatus.DONE | VipStatus.DESC_FLUSHED_ERROR | VipStatus.OP_RECEIVE);
            }
            assertThat(sent(c).status() & VipStatus.ERROR_MASK).isNotZero();
            awaitState(s, VipViState.ERROR);
            awaitState(c, VipViState.ERROR);
            teardown(c, s);
        }
        // a send above the VI's MaxTransferSize, through VipPostSend
        VipVi vi = Vipl.createVi(a.nic, rd(a).withMaxTransferSize(32 * 1024), null, null);
        VipDescriptor big = sendOf(a, 5, 0, 32 * 1024 + 1);
        assertThat(Vipl.postSend(vi, big, a.descH)).isEqualTo(VipReturn.SUCCESS);
        VipDescriptor out = VipDescriptor.empty();
        assertThat(Vipl.sendDone(vi, out)).isEqualTo(VipReturn.SUCCESS);
        assertThat(out.status()).isEqualTo(VipStatus.DONE | VipStatus.LENGTH_ERROR | VipStatus.OP_SEND);
        assertThat(Vipl.destroyVi(vi)).isEqualTo(VipReturn.SUCCESS);
    }

    /**
     * §12 test 18 (§3.2.2.1, D13) on a Connected Reliable Delivery pair: a send whose data segment
     * lies in a region of another tag completes with PROTECTION_ERROR, sends nothing (the peer's
     * receive gets no data: it is flushed when the broken connection reaches the peer, decision of
     * VipVi.enterError), and the VI is in Error.
     */
    @Test
    void test18ProtectionErrorOnAConnectedVi() throws Exception {
        VipPtag other = Vipl.createPtag(a.nic);
        MemorySegment otherMem = arena.allocate(4096, 4096);
        VipMemHandle otherH = Vipl.registerMem(a.nic, otherMem, VipMemAttributes.of(other));
        VipVi c = Vipl.createVi(a.nic, rd(a), null, null);
        VipVi s = Vipl.createVi(b.nic, rd(b), null, null);
        connect(c, s, new byte[]{'p', '1', '8'});
        b.data.asSlice(0, 64).fill((byte) 0);
        otherMem.asSlice(0, 64).fill((byte) 0x18);
        VipDescriptor r = b.desc(0).sendReceive(0).addData(b.data.asSlice(0, 64), b.dataH);
        assertThat(Vipl.postRecv(s, r, b.descH)).isEqualTo(VipReturn.SUCCESS);
        VipDescriptor bad = a.desc(0).sendReceive(0).addData(otherMem.asSlice(0, 64), otherH);
        assertThat(Vipl.postSend(c, bad, a.descH)).isEqualTo(VipReturn.SUCCESS);
        VipDescriptor out = sent(c);
        assertThat(out.address()).isEqualTo(bad.address());
        assertThat(out.status()).isEqualTo(VipStatus.DONE | VipStatus.PROTECTION_ERROR | VipStatus.OP_SEND);
        assertThat(Vipl.queryVi(c).state()).isEqualTo(VipViState.ERROR);
        VipDescriptor peer = recv(s);
        assertThat(peer.status()).as(VipStatus.describe(peer.status()))
                .isEqualTo(VipStatus.DONE | VipStatus.DESC_FLUSHED_ERROR | VipStatus.OP_RECEIVE);
        assertThat(b.data.get(ValueLayout.JAVA_BYTE, 0)).isZero();
        teardown(c, s);
        assertThat(Vipl.deregisterMem(a.nic, otherMem.address(), otherH)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.destroyPtag(a.nic, other)).isEqualTo(VipReturn.SUCCESS);
    }

    /**
     * §12 test 20 under Reliable Delivery, the receiver's side (§2.5.2, §9.9.1): a send that finds
     * no receive posted puts the sender in Error with RECVQ_EMPTY, and the receiver learns of the
     * broken connection at once (decision of VipVi.enterError): Error state and CONN_LOST, without
     * a transfer of its own.
     */
    @Test
    void test20ReceiverSideGoesToError() throws Exception {
        VipVi c = Vipl.createVi(a.nic, rd(a), null, null);
        VipVi s = Vipl.createVi(b.nic, rd(b), null, null);
        connect(c, s, new byte[]{'q', '2', '0'});
        assertThat(Vipl.postSend(c, sendOf(a, 0, 0, 8), a.descH)).isEqualTo(VipReturn.SUCCESS);
        VipDescriptor d = sent(c);
        assertThat(d.status() & VipStatus.ERROR_MASK).as(VipStatus.describe(d.status())).isEqualTo(VipStatus.TRANSPORT_ERROR);
        assertThat(a.errors).extracting(VipErrorDescriptor::errorCode).containsExactly(VipErrorCode.RECVQ_EMPTY);
        awaitState(s, VipViState.ERROR);
        assertThat(b.errors).extracting(VipErrorDescriptor::errorCode).containsExactly(VipErrorCode.CONN_LOST);
        assertThat(b.errors.get(0).vi()).isSameAs(s);
        // in Error, a receive posted now completes flushed
        assertThat(Vipl.postRecv(s, b.desc(0).sendReceive(0), b.descH)).isEqualTo(VipReturn.SUCCESS);
        assertThat(recv(s).status()).isEqualTo(VipStatus.DONE | VipStatus.DESC_FLUSHED_ERROR | VipStatus.OP_RECEIVE);
        teardown(c, s);
    }
}
