package dev.verbs4j.vipl;

import dev.verbs4j.verbs.Access;
import dev.verbs4j.verbs.MemoryRegion;
import dev.verbs4j.verbs.MemoryWindow;
import dev.verbs4j.verbs.RdmaArena;
import dev.verbs4j.verbs.TestBed;
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
@Tag(TestBed.SHARD_3)
@Timeout(120)
class ViplRulesDeviceTest extends ViplTwoHosts {

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
     * A descriptor whose memory (its RdmaArena) is closed: posting it is INVALID_PARAMETER; closed
     * while posted, its completion is dequeued with DESCRIPTOR_ERROR and the completions polled
     * with it are not lost (the next receive gets its message). The close deregistered the
     * region of the memory too: its handle is invalid (VipDeregisterMem INVALID_PARAMETER).
     */
    @Test
    void descriptorMemoryClosedWhilePosted() throws Exception {
        VipVi c = Vipl.createVi(a.nic, rd(a), null, null);
        VipVi s = Vipl.createVi(b.nic, rd(b), null, null);
        connect(c, s, new byte[]{'a', 'r', 'n'});
        RdmaArena small = RdmaArena.ofShared();
        MemorySegment mem = small.allocate(DESC_SIZE, 64);
        VipMemHandle memH = Vipl.registerMem(b.nic, mem, VipMemAttributes.of(b.ptag));
        VipDescriptor first = VipDescriptor.at(mem, 0, SEGS).sendReceive(0).addData(b.data.asSlice(0, 64), b.dataH);
        VipDescriptor second = b.desc(1).sendReceive(0).addData(b.data.asSlice(64, 64), b.dataH);
        assertThat(Vipl.postRecv(s, first, memH)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.postRecv(s, second, b.descH)).isEqualTo(VipReturn.SUCCESS);
        small.close(); // deregisters memH's region, then frees the memory
        assertThat(memH.isDestroyed()).isTrue();
        assertThat(Vipl.deregisterMem(b.nic, mem.address(), memH)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.postRecv(s, first, b.descH)).as("closed memory").isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.postSend(c, VipDescriptor.wrap(mem), a.descH)).as("closed memory").isEqualTo(VipReturn.INVALID_PARAMETER);
        // memory confined to another thread: INVALID_PARAMETER as well, and the queue is unchanged
        try (Arena confined = Arena.ofConfined()) {
            VipDescriptor other = VipDescriptor.at(confined.allocate(DESC_SIZE, 64), 0, SEGS).sendReceive(0);
            assertThat(pool.submit(() -> Vipl.postSend(c, other, a.descH)).get(WAIT, TimeUnit.MILLISECONDS))
                    .isEqualTo(VipReturn.INVALID_PARAMETER);
        }
        assertThat(Vipl.queryVi(c).sendQueueEmpty()).isTrue();
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
     * VipDeregisterMem of a region that has a memory window bound to it (made here through the
     * verbs objects behind the handles, which VIPL itself never does): the provider refuses to
     * deregister a region with a bound window, so the verbs layer closes the window first; the
     * call succeeds, the window is closed, the handle is invalid afterwards, and a descriptor
     * naming it is a protection error; the tag is then free to destroy.
     */
    @Test
    void deregisteringARegionWithABoundWindowClosesTheWindowFirst() throws Exception {
        VipPtag tag = Vipl.createPtag(b.nic);
        VipVi c = Vipl.createVi(a.nic, rd(a), null, null);
        VipVi s = Vipl.createVi(b.nic, VipViAttributes.of(tag).withRdma(true, true), null, null);
        connect(c, s, new byte[]{'m', 'w'});
        MemorySegment mem = Arena.global().allocate(4096, 4096);
        // registered as VipRegisterMem registers, with the right to bind memory windows added
        MemoryRegion mr = tag.pd.register(mem, Access.LOCAL_WRITE | Access.MW_BIND);
        VipMemHandle h = new VipMemHandle(b.nic, mr, mem, VipMemAttributes.of(tag));
        synchronized (b.nic.lock) {
            b.nic.regions.put(h.value(), h);
            tag.users.add(h);
        }
        MemoryWindow mw = tag.pd.allocateMemoryWindow(MemoryWindow.Type.TYPE_1);
        mw.bind(s.qp, mr, 0, 2048, Access.REMOTE_WRITE, 0, 0);
        Thread.sleep(500); // the provider binds it asynchronously
        assertThat(Vipl.deregisterMem(b.nic, mem.address(), h)).isEqualTo(VipReturn.SUCCESS);
        assertThat(mw.isClosed()).isTrue();
        assertThat(mr.isClosed()).isTrue();
        assertThat(Vipl.deregisterMem(b.nic, mem.address(), h)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThatThrownBy(() -> Vipl.queryMem(b.nic, mem.address(), h))
                .extracting(e -> ((VipException) e).code()).isEqualTo(VipReturn.INVALID_PARAMETER);
        // a descriptor naming the handle is a protection error, not an exception
        assertThat(Vipl.postRecv(s, b.desc(0).sendReceive(0).addData(mem.asSlice(0, 8), h), b.descH))
                .isEqualTo(VipReturn.SUCCESS);
        VipDescriptor out = VipDescriptor.empty();
        assertThat(Vipl.recvDone(s, out)).isEqualTo(VipReturn.SUCCESS);
        assertThat(out.status() & VipStatus.ERROR_MASK).isEqualTo(VipStatus.PROTECTION_ERROR);
        teardown(c, s);
        assertThat(Vipl.destroyPtag(b.nic, tag)).isEqualTo(VipReturn.SUCCESS);
        assertThatThrownBy(() -> Vipl.createVi(b.nic, VipViAttributes.of(tag), null, null))
                .extracting(e -> ((VipException) e).code()).isEqualTo(VipReturn.INVALID_PTAG);
    }

    /**
     * §12 test 6 (§5, D5): VipConnectAccept with a VI that is not Idle (here Connected) is
     * INVALID_STATE and does not consume the connection request: the same ConnHandle is then
     * accepted with a fresh Idle VI, and the client's request succeeds.
     */
    @Test
    void test6AcceptWithAConnectedVi() throws Exception {
        VipVi c1 = Vipl.createVi(a.nic, rd(a), null, null);
        VipVi s1 = Vipl.createVi(b.nic, rd(b), null, null);
        connect(c1, s1, new byte[]{'s', '6', 'a'});
        VipVi c2 = Vipl.createVi(a.nic, rd(a), null, null);
        byte[] disc = {'s', '6', 'b'};
        Future<VipReturn> request = pool.submit(() -> Vipl.connectRequest(c2, a.addr(new byte[]{2}), b.addr(disc), WAIT));
        VipConnHandle h = Vipl.connectWait(b.nic, b.addr(disc), WAIT);
        assertThat(Vipl.connectAccept(h, s1)).isEqualTo(VipReturn.INVALID_STATE);
        assertThat(Vipl.queryVi(s1).state()).isEqualTo(VipViState.CONNECTED);
        VipVi s2 = Vipl.createVi(b.nic, rd(b), null, null);
        assertThat(Vipl.connectAccept(h, s2)).isEqualTo(VipReturn.SUCCESS);
        assertThat(await(request)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.queryVi(s2).state()).isEqualTo(VipViState.CONNECTED);
        assertThat(Vipl.connectAccept(h, s2)).as("consumed now").isEqualTo(VipReturn.INVALID_PARAMETER);
        // each connection carries its own traffic
        assertThat(Vipl.postRecv(s2, b.desc(0).sendReceive(0).addData(b.data.asSlice(0, 8), b.dataH), b.descH))
                .isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.postSend(c2, sendOf(a, 0, 0, 8), a.descH)).isEqualTo(VipReturn.SUCCESS);
        assertThat(recv(s2).status()).isEqualTo(VipStatus.DONE | VipStatus.OP_RECEIVE);
        assertThat(sent(c2).status()).isEqualTo(VipStatus.DONE | VipStatus.OP_SEND);
        assertThat(Vipl.queryVi(s1).state()).isEqualTo(VipViState.CONNECTED);
        teardown(c1, s1, c2, s2);
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

    /**
     * §12 test 23 (§3.4) with one VI whose send and receive queues are on two distinct CQs: each
     * completion is an entry of its queue's CQ, naming the VI and the queue, and the other CQ stays
     * empty. §12 test 38 (§9.5.3): the same range registered twice gives two handles, both usable
     * for a transfer.
     */
    @Test
    void tests23and38TwoCqsAndTwoHandles() throws Exception {
        VipCq sendCq = Vipl.createCQ(a.nic, 64);
        VipCq recvCq = Vipl.createCQ(a.nic, 64);
        VipVi c = Vipl.createVi(a.nic, rd(a), sendCq, recvCq);
        VipVi s = Vipl.createVi(b.nic, rd(b), null, null);
        connect(c, s, new byte[]{'c', '2', '3'});
        VipCqEntry e = new VipCqEntry();
        // a send: an entry on the send CQ only
        assertThat(Vipl.postRecv(s, b.desc(0).sendReceive(0).addData(b.data.asSlice(0, 64), b.dataH), b.descH))
                .isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.postSend(c, sendOf(a, 0, 0, 16), a.descH)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.cqWait(sendCq, WAIT, e)).isEqualTo(VipReturn.SUCCESS);
        assertThat(e.vi()).isSameAs(c);
        assertThat(e.recvQueue()).isFalse();
        assertThat(Vipl.cqDone(recvCq, e)).isEqualTo(VipReturn.NOT_DONE);
        VipDescriptor out = VipDescriptor.empty();
        assertThat(Vipl.sendDone(c, out)).isEqualTo(VipReturn.SUCCESS);
        assertThat(out.status()).isEqualTo(VipStatus.DONE | VipStatus.OP_SEND);
        recv(s);
        // a receive: an entry on the receive CQ only
        VipDescriptor r = a.desc(1).sendReceive(0).addData(a.data.asSlice(4096, 64), a.dataH);
        assertThat(Vipl.postRecv(c, r, a.descH)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.postSend(s, sendOf(b, 1, 0, 32), b.descH)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.cqWait(recvCq, WAIT, e)).isEqualTo(VipReturn.SUCCESS);
        assertThat(e.vi()).isSameAs(c);
        assertThat(e.recvQueue()).isTrue();
        assertThat(Vipl.cqDone(sendCq, e)).isEqualTo(VipReturn.NOT_DONE);
        assertThat(Vipl.recvDone(c, out)).isEqualTo(VipReturn.SUCCESS);
        assertThat(out.address()).isEqualTo(r.address());
        assertThat(out.length()).isEqualTo(32);
        sent(s);

        // 38: one range, two handles, each used for a send
        MemorySegment mem = arena.allocate(4096, 4096);
        VipMemHandle h1 = Vipl.registerMem(a.nic, mem, VipMemAttributes.of(a.ptag));
        VipMemHandle h2 = Vipl.registerMem(a.nic, mem, VipMemAttributes.of(a.ptag));
        assertThat(h1.value()).isNotEqualTo(h2.value());
        int slot = 2;
        for (VipMemHandle h : new VipMemHandle[]{h1, h2}) {
            byte fill = (byte) (h == h1 ? 0x38 : 0x39);
            mem.asSlice(0, 32).fill(fill);
            assertThat(Vipl.postRecv(s, b.desc(slot).sendReceive(0).addData(b.data.asSlice(2048, 32), b.dataH), b.descH))
                    .isEqualTo(VipReturn.SUCCESS);
            assertThat(Vipl.postSend(c, a.desc(slot).sendReceive(0).addData(mem.asSlice(0, 32), h), a.descH))
                    .isEqualTo(VipReturn.SUCCESS);
            assertThat(Vipl.cqWait(sendCq, WAIT, e)).isEqualTo(VipReturn.SUCCESS);
            assertThat(Vipl.sendDone(c, out)).isEqualTo(VipReturn.SUCCESS);
            assertThat(out.status()).isEqualTo(VipStatus.DONE | VipStatus.OP_SEND);
            assertThat(recv(s).length()).isEqualTo(32);
            assertThat(b.data.get(ValueLayout.JAVA_BYTE, 2048 + 31)).isEqualTo(fill);
            slot++;
        }
        teardown(c, s);
        assertThat(Vipl.deregisterMem(a.nic, mem.address(), h1)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.deregisterMem(a.nic, mem.address(), h2)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.destroyCQ(sendCq)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.destroyCQ(recvCq)).isEqualTo(VipReturn.SUCCESS);
    }

    /** Posts {@code n} receives of 8 bytes on {@code s} (slots from {@code first}), then {@code n} numbered sends from {@code c}. */
    private static Future<?> traffic(VipVi c, VipVi s, int first, int n) {
        for (int i = 0; i < n; i++) {
            assertThat(Vipl.postRecv(s, b.desc(first + i).sendReceive(0).addData(b.data.asSlice(8L * (first + i), 8), b.dataH),
                    b.descH)).isEqualTo(VipReturn.SUCCESS);
        }
        return pool.submit(() -> {
            for (int i = 0; i < n; i++) {
                a.data.set(ValueLayout.JAVA_INT, 8L * (first + i), first + i);
                assertThat(Vipl.postSend(c, a.desc(first + i).sendReceive(0).addData(a.data.asSlice(8L * (first + i), 4), a.dataH),
                        a.descH)).isEqualTo(VipReturn.SUCCESS);
                if (i % 8 == 7) {
                    Thread.sleep(1);
                }
            }
            for (int i = 0; i < n; i++) {
                assertThat(sent(c).status()).isEqualTo(VipStatus.DONE | VipStatus.OP_SEND);
            }
            return null;
        });
    }

    /**
     * §12 test 25 (§9.7.3): ResizeCQ below the number of entries waiting is an error (and the
     * entries stay); growing 16 → 2048 while messages arrive loses no completion.
     */
    @Test
    void test25ResizeCq() throws Exception {
        VipCq cq = Vipl.createCQ(b.nic, 16);
        VipVi c = Vipl.createVi(a.nic, rd(a), null, null);
        VipVi s = Vipl.createVi(b.nic, rd(b), null, cq);
        connect(c, s, new byte[]{'r', '2', '5'});
        traffic(c, s, 0, 5).get(WAIT, TimeUnit.MILLISECONDS);
        Thread.sleep(200);
        assertThat(Vipl.resizeCQ(cq, 3)).as("5 entries waiting").isEqualTo(VipReturn.ERROR_RESOURCE);
        assertThat(cq.entryCount()).isEqualTo(16);
        VipCqEntry e = new VipCqEntry();
        VipDescriptor out = VipDescriptor.empty();
        for (int i = 0; i < 5; i++) {
            assertThat(Vipl.cqDone(cq, e)).isEqualTo(VipReturn.SUCCESS);
            assertThat(Vipl.recvDone(s, out)).isEqualTo(VipReturn.SUCCESS);
            assertThat(out.address()).isEqualTo(b.desc(i).address());
        }
        assertThat(Vipl.cqDone(cq, e)).isEqualTo(VipReturn.NOT_DONE);
        // grow while 200 messages flow
        int n = 200;
        Future<?> sender = traffic(c, s, 10, n);
        for (int i = 0; i < n; i++) {
            if (i == 20) {
                assertThat(Vipl.resizeCQ(cq, 2048)).isEqualTo(VipReturn.SUCCESS);
            }
            assertThat(Vipl.cqWait(cq, WAIT, e)).as("entry %d", i).isEqualTo(VipReturn.SUCCESS);
            assertThat(e.vi()).isSameAs(s);
            assertThat(e.recvQueue()).isTrue();
            assertThat(Vipl.recvDone(s, out)).isEqualTo(VipReturn.SUCCESS);
            assertThat(out.status()).isEqualTo(VipStatus.DONE | VipStatus.OP_RECEIVE);
            assertThat(out.address()).isEqualTo(b.desc(10 + i).address());
            assertThat(b.data.get(ValueLayout.JAVA_INT, 8L * (10 + i))).isEqualTo(10 + i);
        }
        await(sender);
        assertThat(cq.entryCount()).isEqualTo(2048);
        assertThat(Vipl.cqDone(cq, e)).isEqualTo(VipReturn.NOT_DONE);
        teardown(c, s);
        assertThat(Vipl.destroyCQ(cq)).isEqualTo(VipReturn.SUCCESS);
    }

    /**
     * §12 test 26 (§9.6.7): the race the specification describes. Thread A takes CQ entries and
     * then calls RecvDone for the VI named; thread B calls RecvDone directly. Every descriptor is
     * dequeued exactly once, A tolerates NOT_DONE, and nothing throws.
     */
    @Test
    void test26CqDoneRace() throws Exception {
        VipCq cq = Vipl.createCQ(b.nic, 256);
        VipVi c = Vipl.createVi(a.nic, rd(a), null, null);
        VipVi s = Vipl.createVi(b.nic, rd(b), null, cq);
        connect(c, s, new byte[]{'r', '2', '6'});
        int n = 200;
        Set<Long> dequeued = ConcurrentHashMap.newKeySet();
        AtomicInteger duplicates = new AtomicInteger();
        AtomicInteger notDoneForA = new AtomicInteger();
        AtomicInteger byA = new AtomicInteger();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        Future<?> sender = traffic(c, s, 0, n);
        Future<?> threadA = pool.submit(() -> {
            VipCqEntry e = new VipCqEntry();
            VipDescriptor out = VipDescriptor.empty();
            while (dequeued.size() < n && System.nanoTime() < deadline) {
                VipReturn rc = Vipl.cqDone(cq, e);
                assertThat(rc).isIn(VipReturn.SUCCESS, VipReturn.NOT_DONE);
                if (rc == VipReturn.NOT_DONE) {
                    Thread.onSpinWait();
                    continue;
                }
                assertThat(e.vi()).isSameAs(s);
                VipReturn done = Vipl.recvDone(e.vi(), out);
                assertThat(done).isIn(VipReturn.SUCCESS, VipReturn.NOT_DONE);
                if (done == VipReturn.SUCCESS) {
                    byA.incrementAndGet();
                    if (!dequeued.add(out.address())) {
                        duplicates.incrementAndGet();
                    }
                } else {
                    notDoneForA.incrementAndGet();
                }
            }
            return null;
        });
        Future<?> threadB = pool.submit(() -> {
            VipDescriptor out = VipDescriptor.empty();
            while (dequeued.size() < n && System.nanoTime() < deadline) {
                VipReturn rc = Vipl.recvDone(s, out);
                assertThat(rc).isIn(VipReturn.SUCCESS, VipReturn.NOT_DONE);
                if (rc == VipReturn.SUCCESS) {
                    assertThat(out.status()).isEqualTo(VipStatus.DONE | VipStatus.OP_RECEIVE);
                    if (!dequeued.add(out.address())) {
                        duplicates.incrementAndGet();
                    }
                } else {
                    Thread.onSpinWait();
                }
            }
            return null;
        });
        threadA.get(90, TimeUnit.SECONDS);
        threadB.get(90, TimeUnit.SECONDS);
        await(sender);
        assertThat(duplicates).hasValue(0);
        assertThat(dequeued).hasSize(n);
        for (int i = 0; i < n; i++) {
            assertThat(dequeued).contains(b.desc(i).address());
        }
        // the entries of descriptors B took are still there; they name the VI, whose queue is empty
        VipCqEntry e = new VipCqEntry();
        int left = 0;
        while (Vipl.cqDone(cq, e) == VipReturn.SUCCESS) {
            left++;
            assertThat(Vipl.recvDone(s, VipDescriptor.empty())).isEqualTo(VipReturn.NOT_DONE);
        }
        assertThat(left + byA.get() + notDoneForA.get()).isEqualTo(n);
        teardown(c, s);
        assertThat(Vipl.destroyCQ(cq)).isEqualTo(VipReturn.SUCCESS);
    }

    /**
     * §12 test 32 (§2.5, §9.9.1): an RDMA Write with immediate data that finds no receive posted.
     * Reliable Delivery: the VI goes to Error (asynchronous RECVQ_EMPTY, or a transport error);
     * Reliable Reception: the initiator's descriptor gets REMOTE_DESC_ERROR.
     */
    @Test
    void test32WriteWithImmediateWithoutReceive() throws Exception {
        for (VipReliabilityLevel level : new VipReliabilityLevel[]{VipReliabilityLevel.RELIABLE_DELIVERY,
                VipReliabilityLevel.RELIABLE_RECEPTION}) {
            a.errors.clear();
            VipVi c = Vipl.createVi(a.nic, rd(a).withReliabilityLevel(level), null, null);
            VipVi s = Vipl.createVi(b.nic, rd(b).withReliabilityLevel(level), null, null);
            connect(c, s, new byte[]{'w', '3', '2', (byte) level.ordinal()});
            assertThat(Vipl.postSend(c, a.desc(0).rdma(VipControl.OP_RDMAWRITE, VipControl.IMMEDIATE, b.data.address() + 8192,
                    b.dataH.value()).immediateData(32).addData(a.data.asSlice(0, 16), a.dataH), a.descH)).isEqualTo(VipReturn.SUCCESS);
            VipDescriptor d = sent(c);
            if (level == VipReliabilityLevel.RELIABLE_DELIVERY) {
                assertThat(d.status() & VipStatus.ERROR_MASK).as(VipStatus.describe(d.status())).isNotZero();
                assertThat(a.errors).extracting(VipErrorDescriptor::errorCode).containsAnyOf(VipErrorCode.RECVQ_EMPTY,
                        VipErrorCode.CONN_LOST);
            } else {
                assertThat(d.status()).as(VipStatus.describe(d.status()))
                        .isEqualTo(VipStatus.DONE | VipStatus.REMOTE_DESC_ERROR | VipStatus.OP_RDMA_WRITE);
            }
            assertThat(Vipl.queryVi(c).state()).isEqualTo(VipViState.ERROR);
            teardown(c, s);
        }
    }

    /**
     * §12 tests 33 and 34 (§3.2.2.2, §2.5) under Reliable Reception: an RDMA Write into a VI, or
     * into a region, that does not enable it completes with DONE|RDMA_PROT_ERROR at the initiator,
     * without an asynchronous error there, and the target memory is unchanged; an RDMA Read from a
     * VI that does not enable RDMA Read completes with RDMA_PROT_ERROR, under both reliable levels.
     */
    @Test
    void tests33and34RdmaProtection() throws Exception {
        record Case(String what, VipReliabilityLevel level, VipViAttributes target, int op, long address, int handle,
                    MemorySegment watched) {
        }
        MemorySegment writable = b.data.asSlice(600_000, 64);
        MemorySegment descMem = b.descs.asSlice(500L * DESC_SIZE, 64);
        VipReliabilityLevel rrl = VipReliabilityLevel.RELIABLE_RECEPTION;
        List<Case> cases = new ArrayList<>();
        cases.add(new Case("33 VI without RDMA Write", rrl, rr(b).withRdma(false, true), VipControl.OP_RDMAWRITE,
                writable.address(), b.dataH.value(), writable));
        cases.add(new Case("33 region without RDMA Write", rrl, rr(b), VipControl.OP_RDMAWRITE, descMem.address(),
                b.descH.value(), descMem));
        cases.add(new Case("34 RR VI without RDMA Read", rrl, rr(b).withRdma(true, false), VipControl.OP_RDMAREAD,
                writable.address(), b.dataH.value(), null));
        cases.add(new Case("34 RD VI without RDMA Read", VipReliabilityLevel.RELIABLE_DELIVERY, rd(b).withRdma(true, false),
                VipControl.OP_RDMAREAD, writable.address(), b.dataH.value(), null));
        int n = 0;
        for (Case k : cases) {
            a.errors.clear();
            VipVi c = Vipl.createVi(a.nic, rd(a).withReliabilityLevel(k.level), null, null);
            VipVi s = Vipl.createVi(b.nic, k.target, null, null);
            connect(c, s, new byte[]{'p', '3', '3', (byte) n++});
            if (k.watched != null) {
                k.watched.fill((byte) 0);
            }
            a.data.asSlice(0, 64).fill((byte) 0x33);
            assertThat(Vipl.postSend(c, a.desc(n).rdma(k.op, 0, k.address, k.handle).addData(a.data.asSlice(0, 64), a.dataH), a.descH))
                    .isEqualTo(VipReturn.SUCCESS);
            VipDescriptor d = sent(c);
            int op = k.op == VipControl.OP_RDMAWRITE ? VipStatus.OP_RDMA_WRITE : VipStatus.OP_RDMA_READ;
            assertThat(d.status()).as(k.what + ": " + VipStatus.describe(d.status()))
                    .isEqualTo(VipStatus.DONE | VipStatus.RDMA_PROT_ERROR | op);
            if (k.level == rrl) {
                assertThat(a.errors).as(k.what).isEmpty();
            }
            if (k.watched != null) {
                assertThat(k.watched.get(ValueLayout.JAVA_BYTE, 0)).as(k.what).isZero();
                assertThat(k.watched.get(ValueLayout.JAVA_BYTE, 63)).as(k.what).isZero();
            }
            teardown(c, s);
        }
    }

    /**
     * §12 test 44 (§9.9.1): VipErrorCallback with a null handler restores the default handler,
     * which logs the asynchronous error (here CONN_LOST, when the peer disconnects) to the
     * "dev.verbs4j.vipl" logger.
     */
    @Test
    void test44DefaultHandlerLogs() throws Exception {
        List<LogRecord> records = new CopyOnWriteArrayList<>();
        Handler capture = new Handler() {
            @Override
            public void publish(LogRecord r) {
                records.add(r);
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        Logger logger = Logger.getLogger("dev.verbs4j.vipl");
        logger.addHandler(capture);
        try {
            assertThat(Vipl.errorCallback(a.nic, null, null)).isEqualTo(VipReturn.SUCCESS);
            VipVi c = Vipl.createVi(a.nic, rd(a), null, null);
            VipVi s = Vipl.createVi(b.nic, rd(b), null, null);
            connect(c, s, new byte[]{'l', 'o', 'g'});
            assertThat(Vipl.disconnect(s)).isEqualTo(VipReturn.SUCCESS);
            awaitState(c, VipViState.ERROR);
            long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT);
            while (records.isEmpty() && System.nanoTime() < until) {
                Thread.sleep(10);
            }
            assertThat(records).anySatisfy(r -> {
                assertThat(r.getLevel()).isEqualTo(java.util.logging.Level.WARNING);
                assertThat(String.valueOf(r.getMessage()) + " " + java.util.Arrays.toString(r.getParameters()))
                        .contains("CONN_LOST");
            });
            assertThat(a.errors).isEmpty();
            teardown(c, s);
        } finally {
            logger.removeHandler(capture);
            a.collectErrors();
        }
    }

    /**
     * The name service of later VIPL (§13.1): host B's address found from its numeric text, a
     * name index past the last address and an unknown name give ERROR_NAMESERVICE, a null name
     * or a negative index INVALID_PARAMETER; the address found (with a discriminator appended)
     * serves a VipConnectRequest.
     */
    @Test
    void nameService() throws Exception {
        assertThat(Vipl.nsInit(a.nic, null)).isEqualTo(VipReturn.SUCCESS);
        VipNetAddress found = Vipl.nsGetHostByName(a.nic, b.address, 0);
        assertThat(found.inetAddress().getHostAddress()).isEqualTo(b.address);
        assertThat(found.discriminator()).isEmpty();
        assertThatThrownBy(() -> Vipl.nsGetHostByName(a.nic, b.address, 1))
                .extracting(e -> ((VipException) e).code()).isEqualTo(VipReturn.ERROR_NAMESERVICE);
        assertThatThrownBy(() -> Vipl.nsGetHostByName(a.nic, "no-such-host.invalid", 0))
                .extracting(e -> ((VipException) e).code()).isEqualTo(VipReturn.ERROR_NAMESERVICE);
        assertThatThrownBy(() -> Vipl.nsGetHostByName(a.nic, null, 0))
                .extracting(e -> ((VipException) e).code()).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThatThrownBy(() -> Vipl.nsGetHostByName(a.nic, b.address, -1))
                .extracting(e -> ((VipException) e).code()).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThatThrownBy(() -> Vipl.nsGetHostByAddr(a.nic, null))
                .extracting(e -> ((VipException) e).code()).isEqualTo(VipReturn.INVALID_PARAMETER);
        // the local host's name maps back to one of its addresses
        VipNetAddress local = Vipl.nsGetHostByName(a.nic, "localhost", 0);
        assertThat(local.inetAddress().isLoopbackAddress()).isTrue();
        assertThat(Vipl.nsGetHostByAddr(a.nic, local)).isNotBlank();

        byte[] disc = {'n', 's'};
        VipNetAddress remote = new VipNetAddress(found.hostAddress(), disc);
        VipVi c = Vipl.createVi(a.nic, rd(a), null, null);
        VipVi s = Vipl.createVi(b.nic, rd(b), null, null);
        Future<VipReturn> accepted = pool.submit(() -> Vipl.connectAccept(Vipl.connectWait(b.nic, b.addr(disc), WAIT), s));
        assertThat(Vipl.connectRequest(c, a.addr(new byte[]{1}), remote, WAIT)).isEqualTo(VipReturn.SUCCESS);
        assertThat(await(accepted)).isEqualTo(VipReturn.SUCCESS);
        teardown(c, s);
        assertThat(Vipl.nsShutdown(a.nic)).isEqualTo(VipReturn.SUCCESS);
    }

    /**
     * §12 test 46: stale handles give INVALID_PARAMETER and nothing crashes: the data path on a
     * destroyed VI, the CQ functions on a destroyed CQ, and every function on a closed NIC
     * (VipCloseNic twice included), whose VIs and CQs became invalid with it.
     */
    @Test
    void test46StaleHandles() {
        VipDescriptor out = VipDescriptor.empty();
        VipVi vi = Vipl.createVi(a.nic, rd(a), null, null);
        assertThat(Vipl.destroyVi(vi)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.postSend(vi, sendOf(a, 0, 0, 8), a.descH)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.postRecv(vi, sendOf(a, 0, 0, 8), a.descH)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.sendDone(vi, out)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.recvDone(vi, out)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.sendWait(vi, 10, out)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.recvWait(vi, 10, out)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.disconnect(vi)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.setViAttributes(vi, rd(a))).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.connectRequest(vi, a.addr(new byte[]{1}), b.addr(new byte[]{9}), 10)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.connectPeerRequest(vi, a.addr(new byte[]{1}), b.addr(new byte[]{9}), 10))
                .isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.connectPeerDone(vi)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.connectPeerWait(vi)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.sendNotify(vi, null, (ctx, nic, v, d) -> { })).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.recvNotify(vi, null, (ctx, nic, v, d) -> { })).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThatThrownBy(() -> Vipl.queryVi(vi)).extracting(e -> ((VipException) e).code()).isEqualTo(VipReturn.INVALID_PARAMETER);
        VipCq cq = Vipl.createCQ(a.nic, 16);
        assertThat(Vipl.destroyCQ(cq)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.cqDone(cq, new VipCqEntry())).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.cqWait(cq, 10, new VipCqEntry())).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.resizeCQ(cq, 32)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.destroyCQ(cq)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.cqNotify(cq, null, (ctx, nic, v, recv) -> { })).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThatThrownBy(() -> Vipl.createVi(a.nic, rd(a), cq, null)).extracting(e -> ((VipException) e).code())
                .isEqualTo(VipReturn.INVALID_PARAMETER);

        // a NIC closed with a VI, a CQ, a tag and a region still open
        VipNic nic = Vipl.openNic(TestBed.hostA().device());
        VipPtag tag = Vipl.createPtag(nic);
        MemorySegment mem = arena.allocate(4096, 4096);
        VipMemHandle h = Vipl.registerMem(nic, mem, VipMemAttributes.of(tag));
        VipCq ncq = Vipl.createCQ(nic, 16);
        VipVi nvi = Vipl.createVi(nic, VipViAttributes.of(tag), null, ncq);
        assertThat(Vipl.closeNic(nic)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.closeNic(nic)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.errorCallback(nic, null, null)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.nsInit(nic, null)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.nsShutdown(nic)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.deregisterMem(nic, mem.address(), h)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.setMemAttributes(nic, mem.address(), h, VipMemAttributes.of(tag))).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.destroyPtag(nic, tag)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.postSend(nvi, sendOf(a, 0, 0, 8), a.descH)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.recvDone(nvi, out)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.destroyVi(nvi)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.cqDone(ncq, new VipCqEntry())).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.cqWait(ncq, 10, new VipCqEntry())).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.resizeCQ(ncq, 32)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.destroyCQ(ncq)).isEqualTo(VipReturn.INVALID_PARAMETER);
        for (Runnable call : List.<Runnable>of(
                () -> Vipl.createPtag(nic),
                () -> Vipl.createCQ(nic, 16),
                () -> Vipl.createVi(nic, VipViAttributes.of(tag), null, null),
                () -> Vipl.registerMem(nic, mem, VipMemAttributes.of(tag)),
                () -> Vipl.queryNic(nic),
                () -> Vipl.queryMem(nic, mem.address(), h),
                () -> Vipl.queryVi(nvi),
                () -> Vipl.querySystemManagementInfo(nic, Vipl.SMI_PORT_ATTRIBUTES),
                () -> Vipl.connectWait(nic, a.addr(new byte[]{9}), 0),
                () -> Vipl.nsGetHostByName(nic, b.address, 0))) {
            assertThatThrownBy(call::run).isInstanceOf(VipException.class)
                    .extracting(e -> ((VipException) e).code()).isEqualTo(VipReturn.INVALID_PARAMETER);
        }
    }
}
