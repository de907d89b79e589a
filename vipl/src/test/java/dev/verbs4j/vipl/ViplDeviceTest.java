package dev.verbs4j.vipl;

import dev.verbs4j.verbs.TestBed;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The acceptance tests of §12 that this slice covers, on Soft-RoCE between the two test hosts
 * (client VIs on host A, server VIs on host B, in one process). Each test names the §12 test and
 * the rule it checks.
 */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_3)
@Timeout(120)
class ViplDeviceTest extends ViplTwoHosts {

    private static final byte[] DISC = {'v', 'i', 'p', 'l'};

    /** §12 test 4: ConnectWait(Timeout=0) with no request → VIP_TIMEOUT at once (the fixture's first call started host B's listener). */
    @BeforeAll
    static void connectWaitWithoutRequestTimesOutAtOnce() {
        long t0 = System.nanoTime();
        assertThatThrownBy(() -> Vipl.connectWait(b.nic, b.addr(DISC), 0)).isInstanceOf(VipException.class)
                .extracting(e -> ((VipException) e).code()).isEqualTo(VipReturn.TIMEOUT);
        assertThat(System.nanoTime() - t0).isLessThan(TimeUnit.SECONDS.toNanos(2));
    }

    /** One handler call of a Notify function, with the thread it ran on. */
    record Call(Object context, VipNic nic, VipVi vi, VipDescriptor descriptor, Boolean recvQueue, Thread thread) {
    }

    /**
     * §12 tests 27 to 30 (§9.6.9–11): Notify is one-shot and hands over the descriptor dequeued
     * (27); a head already complete is handed over at once, on the calling thread (28); DestroyVi
     * and DestroyCQ cancel pending notifications, whose handlers never run (29); a null handler is
     * INVALID_PARAMETER (30). Also: Send/RecvNotify on a CQ-attached queue is ERROR_RESOURCE, and
     * VipCQNotify hands over the entry while the descriptor stays for VipRecvDone.
     */
    @Test
    void tests27to30Notify() throws Exception {
        VipVi c = Vipl.createVi(a.nic, rd(a), null, null);
        VipVi s = Vipl.createVi(b.nic, rd(b), null, null);
        BlockingQueue<Call> calls = new LinkedBlockingQueue<>();
        VipNotifyHandler onDescriptor = (ctx, nic, vi, d) -> calls.add(new Call(ctx, nic, vi, d, null, Thread.currentThread()));
        VipCqNotifyHandler onEntry = (ctx, nic, vi, recv) -> calls.add(new Call(ctx, nic, vi, null, recv, Thread.currentThread()));

        // 30: a null handler
        VipCq cancelledCq = Vipl.createCQ(b.nic, 16);
        assertThat(Vipl.sendNotify(c, "x", null)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.recvNotify(c, "x", null)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.cqNotify(cancelledCq, "x", null)).isEqualTo(VipReturn.INVALID_PARAMETER);

        // 29: pending notifications, then DestroyVi and DestroyCQ: no handler ever runs
        VipVi idle = Vipl.createVi(b.nic, rd(b), null, null);
        assertThat(Vipl.recvNotify(idle, "cancelled", onDescriptor)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.sendNotify(idle, "cancelled", onDescriptor)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.cqNotify(cancelledCq, "cancelled", onEntry)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.destroyVi(idle)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.destroyCQ(cancelledCq)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.recvNotify(idle, "x", onDescriptor)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.cqNotify(cancelledCq, "x", onEntry)).isEqualTo(VipReturn.INVALID_PARAMETER);

        connect(c, s, new byte[]{'n', 't', 'f', 'y'});
        VipDescriptor r1 = b.desc(40).sendReceive(0).addData(b.data.asSlice(0, 64), b.dataH);
        VipDescriptor r2 = b.desc(41).sendReceive(0).addData(b.data.asSlice(64, 64), b.dataH);
        assertThat(Vipl.postRecv(s, r1, b.descH)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.postRecv(s, r2, b.descH)).isEqualTo(VipReturn.SUCCESS);
        // 27: one notification for two sends, on a library thread, with the first send dequeued
        assertThat(Vipl.sendNotify(c, "ctx27", onDescriptor)).isEqualTo(VipReturn.SUCCESS);
        VipDescriptor s1 = a.desc(40).sendReceive(0).addData(a.data.asSlice(0, 16), a.dataH);
        VipDescriptor s2 = a.desc(41).sendReceive(0).addData(a.data.asSlice(16, 16), a.dataH);
        assertThat(Vipl.postSend(c, s1, a.descH)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.postSend(c, s2, a.descH)).isEqualTo(VipReturn.SUCCESS);
        Call first = calls.poll(WAIT, TimeUnit.MILLISECONDS);
        assertThat(first).isNotNull();
        assertThat(first.context()).isEqualTo("ctx27");
        assertThat(first.nic()).isSameAs(a.nic);
        assertThat(first.vi()).isSameAs(c);
        assertThat(first.descriptor().address()).isEqualTo(s1.address());
        assertThat(first.descriptor().status()).isEqualTo(VipStatus.DONE | VipStatus.OP_SEND);
        assertThat(first.thread()).isNotSameAs(Thread.currentThread());
        // the receive side by RecvNotify: both receives, one call each
        assertThat(Vipl.recvNotify(s, "r", onDescriptor)).isEqualTo(VipReturn.SUCCESS);
        assertThat(calls.poll(WAIT, TimeUnit.MILLISECONDS).descriptor().address()).isEqualTo(r1.address());
        assertThat(Vipl.recvNotify(s, "r", onDescriptor)).isEqualTo(VipReturn.SUCCESS);
        Call r = calls.poll(WAIT, TimeUnit.MILLISECONDS);
        assertThat(r.descriptor().address()).isEqualTo(r2.address());
        assertThat(r.descriptor().length()).isEqualTo(16);
        VipDescriptor out = VipDescriptor.empty();
        assertThat(Vipl.recvDone(s, out)).isEqualTo(VipReturn.NOT_DONE);
        // the second send completes (written back by a poll that dequeues nothing), and no call follows: one-shot
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT);
        while (!s2.isDone() && System.nanoTime() < until) {
            a.nic.poll(c.send.ibvCq);
            Thread.sleep(5);
        }
        assertThat(s2.isDone()).isTrue();
        assertThat(calls.poll(300, TimeUnit.MILLISECONDS)).as("one-shot: no second call").isNull();
        // 28: the head is done already: handed over at once, on this thread, and dequeued
        assertThat(Vipl.sendNotify(c, "ctx28", onDescriptor)).isEqualTo(VipReturn.SUCCESS);
        Call second = calls.poll();
        assertThat(second).isNotNull();
        assertThat(second.context()).isEqualTo("ctx28");
        assertThat(second.thread()).isSameAs(Thread.currentThread());
        assertThat(second.descriptor().address()).isEqualTo(s2.address());
        assertThat(Vipl.sendDone(c, out)).isEqualTo(VipReturn.NOT_DONE);
        teardown(c, s);

        // VipCQNotify: the entry is handed over, the descriptor stays queued; Recv/SendNotify on a CQ-attached queue refused
        VipCq cq = Vipl.createCQ(b.nic, 16);
        VipVi c2 = Vipl.createVi(a.nic, rd(a), null, null);
        VipVi s3 = Vipl.createVi(b.nic, rd(b), null, cq);
        assertThat(Vipl.recvNotify(s3, "x", onDescriptor)).isEqualTo(VipReturn.ERROR_RESOURCE);
        connect(c2, s3, new byte[]{'c', 'q', 'n'});
        VipDescriptor r3 = b.desc(42).sendReceive(0).addData(b.data.asSlice(0, 64), b.dataH);
        assertThat(Vipl.postRecv(s3, r3, b.descH)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.cqNotify(cq, "cq", onEntry)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.postSend(c2, a.desc(42).sendReceive(0).addData(a.data.asSlice(0, 8), a.dataH), a.descH))
                .isEqualTo(VipReturn.SUCCESS);
        Call entry = calls.poll(WAIT, TimeUnit.MILLISECONDS);
        assertThat(entry).isNotNull();
        assertThat(entry.context()).isEqualTo("cq");
        assertThat(entry.nic()).isSameAs(b.nic);
        assertThat(entry.vi()).isSameAs(s3);
        assertThat(entry.recvQueue()).isTrue();
        assertThat(entry.thread()).isNotSameAs(Thread.currentThread());
        assertThat(Vipl.recvDone(s3, out)).isEqualTo(VipReturn.SUCCESS);
        assertThat(out.address()).isEqualTo(r3.address());
        sent(c2);
        assertThat(calls).isEmpty();
        teardown(c2, s3);
        assertThat(Vipl.destroyCQ(cq)).isEqualTo(VipReturn.SUCCESS);
        Thread.sleep(200);
        assertThat(calls).as("no cancelled handler ran").isEmpty();
    }

    /**
     * §12 test 39, the SetMemAttributes half (§9.8.4, D20): a region moved to another protection tag
     * reads back the new attributes, keeps its handle value, is usable by VIs of the new tag and no
     * longer of the old one, and frees the old tag; RDMA enables change in place; bad arguments give
     * the specification's codes.
     */
    @Test
    void test39SetMemAttributes() {
        VipPtag other = Vipl.createPtag(a.nic);
        MemorySegment mem = arena.allocate(4096, 4096);
        VipMemHandle h = Vipl.registerMem(a.nic, mem, VipMemAttributes.of(other));
        int value = h.value();
        VipVi vi = Vipl.createVi(a.nic, rd(a), null, null);
        VipDescriptor out = VipDescriptor.empty();
        // the region is of another tag than the VI's: a send using it is a protection error
        VipDescriptor d1 = a.desc(30).sendReceive(0).addData(mem.asSlice(0, 8), h);
        assertThat(Vipl.postSend(vi, d1, a.descH)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.sendDone(vi, out)).isEqualTo(VipReturn.SUCCESS);
        assertThat(out.status() & ~VipStatus.OP_MASK).as(VipStatus.describe(out.status()))
                .isEqualTo(VipStatus.DONE | VipStatus.PROTECTION_ERROR);
        // bad arguments
        VipMemAttributes mine = new VipMemAttributes(a.ptag, true, true);
        assertThat(Vipl.setMemAttributes(a.nic, mem.address() + 64, h, mine)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.setMemAttributes(a.nic, mem.address(), h, null)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.setMemAttributes(b.nic, mem.address(), h, mine)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.setMemAttributes(null, mem.address(), h, mine)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.setMemAttributes(a.nic, mem.address(), h, VipMemAttributes.of(b.ptag))).isEqualTo(VipReturn.INVALID_PTAG);
        assertThat(Vipl.queryMem(a.nic, mem.address(), h)).isEqualTo(VipMemAttributes.of(other));
        // 39: to the VI's tag, with RDMA enabled
        assertThat(Vipl.setMemAttributes(a.nic, mem.address(), h, mine)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.queryMem(a.nic, mem.address(), h)).isEqualTo(mine);
        assertThat(h.value()).isEqualTo(value);
        assertThat(h.remoteKey()).isEqualTo(h.mr.lkey());
        // the same descriptor now passes the checks (the VI is Idle: the send completes flushed, D10)
        VipDescriptor d2 = a.desc(31).sendReceive(0).addData(mem.asSlice(0, 8), h);
        assertThat(d2.segmentHandle(0)).isEqualTo(value);
        assertThat(Vipl.postSend(vi, d2, a.descH)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.sendDone(vi, out)).isEqualTo(VipReturn.SUCCESS);
        assertThat(out.status() & ~VipStatus.OP_MASK).as(VipStatus.describe(out.status()))
                .isEqualTo(VipStatus.DONE | VipStatus.DESC_FLUSHED_ERROR);
        // the old tag is free now
        assertThat(Vipl.destroyPtag(a.nic, other)).isEqualTo(VipReturn.SUCCESS);
        // RDMA enables off under the same tag: in place, the keys as they were on this provider
        int key = h.remoteKey();
        assertThat(Vipl.setMemAttributes(a.nic, mem.address(), h, VipMemAttributes.of(a.ptag))).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.queryMem(a.nic, mem.address(), h)).isEqualTo(VipMemAttributes.of(a.ptag));
        int none = h.remoteKey();
        // and on again: a usable remote key, the handle value unchanged
        assertThat(Vipl.setMemAttributes(a.nic, mem.address(), h, new VipMemAttributes(a.ptag, true, false)))
                .isEqualTo(VipReturn.SUCCESS);
        assertThat(h.remoteKey()).isEqualTo(h.mr.lkey()).isNotZero();
        assertThat(h.value()).isEqualTo(value);
        System.out.printf("[vipl] SetMemAttributes: handle 0x%x; remote key 0x%x after a new tag, 0x%x with RDMA off,"
                + " 0x%x with RDMA write on again%n", value, key, none, h.remoteKey());
        assertThat(Vipl.destroyVi(vi)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.deregisterMem(a.nic, mem.address(), h)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.setMemAttributes(a.nic, mem.address(), h, mine)).isEqualTo(VipReturn.INVALID_PARAMETER);
    }

    /**
     * Peer-to-peer connect of later VIPL (§13, D21): both VIs ask for each other; the lower address
     * (host A) cannot finish before the higher one asks; both end Connected and carry a message; a
     * peer that never comes gives TIMEOUT and leaves the VI Idle; misuse gives the documented codes.
     */
    @Test
    void peerToPeerConnect() throws Exception {
        VipVi c = Vipl.createVi(a.nic, rd(a), null, null);
        VipVi s = Vipl.createVi(b.nic, rd(b), null, null);
        byte[] dc = {'p', '2', 'p', 'a'};
        byte[] ds = {'p', '2', 'p', 'b'};
        assertThat(Vipl.connectPeerDone(c)).isEqualTo(VipReturn.INVALID_STATE);
        assertThat(Vipl.connectPeerRequest(c, a.addr(dc), a.addr(dc), WAIT)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.connectPeerRequest(c, a.addr(dc), b.addr(ds), 0)).isEqualTo(VipReturn.TIMEOUT);
        assertThat(Vipl.connectPeerRequest(c, a.addr(dc), b.addr(ds), WAIT)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.connectPeerRequest(c, a.addr(dc), b.addr(ds), WAIT)).isEqualTo(VipReturn.INVALID_STATE);
        Thread.sleep(200);
        assertThat(Vipl.connectPeerDone(c)).as("host A waits for B's request").isEqualTo(VipReturn.NOT_DONE);
        VipDescriptor r = b.desc(50).sendReceive(0).addData(b.data.asSlice(0, 64), b.dataH);
        assertThat(Vipl.postRecv(s, r, b.descH)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.connectPeerRequest(s, b.addr(ds), a.addr(dc), WAIT)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.connectPeerWait(s)).isEqualTo(VipReturn.SUCCESS);
        VipReturn rc = VipReturn.NOT_DONE;
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT);
        while (rc == VipReturn.NOT_DONE && System.nanoTime() < until) {
            rc = Vipl.connectPeerDone(c);
            Thread.sleep(5);
        }
        assertThat(rc).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.connectPeerDone(c)).as("the outcome was collected").isEqualTo(VipReturn.INVALID_STATE);
        assertThat(Vipl.queryVi(c).state()).isEqualTo(VipViState.CONNECTED);
        assertThat(Vipl.queryVi(s).state()).isEqualTo(VipViState.CONNECTED);
        assertThat(c.remoteAttributes().reliabilityLevel()).isEqualTo(VipReliabilityLevel.RELIABLE_DELIVERY);
        a.data.asSlice(0, 24).fill((byte) 0x5a);
        assertThat(Vipl.postSend(c, a.desc(50).sendReceive(0).addData(a.data.asSlice(0, 24), a.dataH), a.descH))
                .isEqualTo(VipReturn.SUCCESS);
        VipDescriptor got = recv(s);
        assertThat(got.address()).isEqualTo(r.address());
        assertThat(got.length()).isEqualTo(24);
        assertThat(b.data.get(ValueLayout.JAVA_BYTE, 23)).isEqualTo((byte) 0x5a);
        sent(c);
        teardown(c, s);

        // nobody answers: TIMEOUT as the outcome, the VI Idle and usable again, for either role
        VipVi lonely = Vipl.createVi(a.nic, rd(a), null, null);
        VipVi lonelyHigh = Vipl.createVi(b.nic, rd(b), null, null);
        long t0 = System.nanoTime();
        assertThat(Vipl.connectPeerRequest(lonely, a.addr(new byte[]{'l', 'o'}), b.addr(new byte[]{'n', 'o'}), 500))
                .isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.connectPeerRequest(lonelyHigh, b.addr(new byte[]{'h', 'i'}), a.addr(new byte[]{'n', 'o'}), 500))
                .isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.connectPeerWait(lonely)).isEqualTo(VipReturn.TIMEOUT);
        assertThat(Vipl.connectPeerWait(lonelyHigh)).isIn(VipReturn.TIMEOUT, VipReturn.NOT_REACHABLE);
        assertThat(System.nanoTime() - t0).isLessThan(TimeUnit.SECONDS.toNanos(30));
        assertThat(Vipl.queryVi(lonely).state()).isEqualTo(VipViState.IDLE);
        assertThat(Vipl.queryVi(lonelyHigh).state()).isEqualTo(VipViState.IDLE);
        assertThat(Vipl.destroyVi(lonely)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.destroyVi(lonelyHigh)).isEqualTo(VipReturn.SUCCESS);
    }

    /**
     * §12 test 35 (§6.3.1.2): a Send with QFENCE after an RDMA Read starts only after the Read
     * completed: it carries the bytes the Read brought into its buffer. §12 test 36 (§3.2.1): a
     * receive whose buffer region is deregistered while it is posted completes with
     * PROTECTION_ERROR when the peer's data arrives, and the memory is not written.
     */
    @Test
    void tests35and36FenceAndDeregistrationWhilePosted() throws Exception {
        VipVi c = Vipl.createVi(a.nic, rd(a), null, null);
        VipVi s = Vipl.createVi(b.nic, rd(b), null, null);
        connect(c, s, new byte[]{'f', 'e', 'n'});
        // 35: read 4 KiB of 0x5c from B into a zeroed buffer, then send that buffer fenced
        b.data.asSlice(300_000, 4096).fill((byte) 0x5c);
        a.data.asSlice(500_000, 4096).fill((byte) 0);
        b.data.asSlice(400_000, 4096).fill((byte) 0);
        VipDescriptor r = b.desc(60).sendReceive(0).addData(b.data.asSlice(400_000, 4096), b.dataH);
        assertThat(Vipl.postRecv(s, r, b.descH)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.postSend(c, a.desc(60).rdma(VipControl.OP_RDMAREAD, 0, b.data.address() + 300_000, b.dataH.value())
                .addData(a.data.asSlice(500_000, 4096), a.dataH), a.descH)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.postSend(c, a.desc(61).sendReceive(VipControl.QFENCE).addData(a.data.asSlice(500_000, 4096), a.dataH),
                a.descH)).isEqualTo(VipReturn.SUCCESS);
        VipDescriptor got = recv(s);
        assertThat(got.status()).isEqualTo(VipStatus.DONE | VipStatus.OP_RECEIVE);
        assertThat(got.length()).isEqualTo(4096);
        for (int i = 0; i < 4096; i += 512) {
            assertThat(b.data.get(ValueLayout.JAVA_BYTE, 400_000 + i)).as("byte %d", i).isEqualTo((byte) 0x5c);
        }
        assertThat(b.data.get(ValueLayout.JAVA_BYTE, 400_000 + 4095)).isEqualTo((byte) 0x5c);
        assertThat(sent(c).status()).isEqualTo(VipStatus.DONE | VipStatus.OP_RDMA_READ);
        assertThat(sent(c).status()).isEqualTo(VipStatus.DONE | VipStatus.OP_SEND);

        // 36: the receive's region is deregistered while the receive is posted
        MemorySegment region = arena.allocate(4096, 4096);
        VipMemHandle regionH = Vipl.registerMem(b.nic, region, VipMemAttributes.of(b.ptag));
        VipDescriptor gone = b.desc(62).sendReceive(0).addData(region.asSlice(0, 64), regionH);
        assertThat(Vipl.postRecv(s, gone, b.descH)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.deregisterMem(b.nic, region.address(), regionH)).isEqualTo(VipReturn.SUCCESS);
        a.data.asSlice(0, 64).fill((byte) 0x6d);
        assertThat(Vipl.postSend(c, a.desc(62).sendReceive(0).addData(a.data.asSlice(0, 64), a.dataH), a.descH))
                .isEqualTo(VipReturn.SUCCESS);
        got = recv(s);
        assertThat(got.address()).isEqualTo(gone.address());
        assertThat(got.status() & VipStatus.ERROR_MASK).as(VipStatus.describe(got.status())).isEqualTo(VipStatus.PROTECTION_ERROR);
        assertThat(region.get(ValueLayout.JAVA_BYTE, 0)).isZero();
        // the sender learns that its send failed (Reliable Delivery: the connection is broken)
        VipDescriptor d = sent(c);
        assertThat(d.status() & VipStatus.ERROR_MASK).as(VipStatus.describe(d.status())).isNotZero();
        teardown(c, s);
    }

    /**
     * §12 test 44 (§9.9.1, §5.4): the peer's Disconnect reaches a connected VI as the asynchronous
     * CONN_LOST error (ResourceCode VI, the VI and NIC named) and puts it in the Error state, where
     * a send completes flushed; the side that disconnected reports nothing.
     */
    @Test
    void test44ConnectionLostReachesTheErrorHandler() throws Exception {
        VipVi c = Vipl.createVi(a.nic, rd(a), null, null);
        VipVi s = Vipl.createVi(b.nic, rd(b), null, null);
        connect(c, s, new byte[]{'l', 'o', 's', 't'});
        assertThat(Vipl.disconnect(s)).isEqualTo(VipReturn.SUCCESS);
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT);
        while (a.errors.isEmpty() && System.nanoTime() < until) {
            Thread.sleep(10);
        }
        assertThat(a.errors).singleElement().satisfies(e -> {
            assertThat(e.errorCode()).isEqualTo(VipErrorCode.CONN_LOST);
            assertThat(e.resourceCode()).isEqualTo(VipResourceCode.VI);
            assertThat(e.vi()).isSameAs(c);
            assertThat(e.nic()).isSameAs(a.nic);
        });
        assertThat(Vipl.queryVi(c).state()).isEqualTo(VipViState.ERROR);
        assertThat(Vipl.postSend(c, a.desc(70).sendReceive(0).addData(a.data.asSlice(0, 8), a.dataH), a.descH))
                .isEqualTo(VipReturn.SUCCESS);
        VipDescriptor out = sent(c);
        assertThat(out.status() & VipStatus.DESC_FLUSHED_ERROR).as(VipStatus.describe(out.status())).isNotZero();
        assertThat(b.errors).isEmpty();
        teardown(c, s);
    }

    /** §12 test 43 (§9.10.4): consistent NIC attributes; MaxSegmentsPerDesc below 252 is the documented deviation D11. */
    @Test
    void test43QueryNic() {
        VipNicAttributes n = Vipl.queryNic(a.nic);
        assertThat(n.name()).isEqualTo(TestBed.hostA().device());
        assertThat(n.maxCqEntries()).isGreaterThanOrEqualTo(1024);
        assertThat(n.maxPtags()).as("MaxPtags >= MaxVI").isGreaterThanOrEqualTo(n.maxVi());
        assertThat(n.maxVi()).isPositive();
        assertThat(n.maxTransferSize()).isGreaterThanOrEqualTo(32768);
        assertThat(n.maxSegmentsPerDesc()).isBetween(1L, 252L);
        assertThat(n.localNicAddress()).hasSize(16);
        assertThat(n.maxDiscriminatorLen()).isGreaterThanOrEqualTo(DISC.length);
        assertThat(n.reliabilityLevelSupport()).isEqualTo(VipReliabilityLevel.UNRELIABLE.mask()
                | VipReliabilityLevel.RELIABLE_DELIVERY.mask() | VipReliabilityLevel.RELIABLE_RECEPTION.mask());
        // §2.5.1: no RDMA Read on Unreliable
        assertThat(n.rdmaReadSupport()).isEqualTo(VipReliabilityLevel.RELIABLE_DELIVERY.mask()
                | VipReliabilityLevel.RELIABLE_RECEPTION.mask());
        // §12 test 45: unknown InfoType → VIP_INVALID_PARAMETER.
        assertThat(Vipl.querySystemManagementInfo(a.nic, Vipl.SMI_PORT_ATTRIBUTES)).isNotNull();
        assertThatThrownBy(() -> Vipl.querySystemManagementInfo(a.nic, 77)).isInstanceOf(VipException.class)
                .extracting(e -> ((VipException) e).code()).isEqualTo(VipReturn.INVALID_PARAMETER);
    }

    /** §12 tests 37–42 (§3.2, §9.5): registration, Ptag life cycle and their return codes. */
    @Test
    void tests37to42MemoryAndPtags() {
        VipPtag tag = Vipl.createPtag(a.nic);
        MemorySegment mem = arena.allocate(8192, 4096);
        // 37: length 0 → INVALID_PARAMETER
        assertThatThrownBy(() -> Vipl.registerMem(a.nic, mem.asSlice(0, 0), VipMemAttributes.of(tag)))
                .extracting(e -> ((VipException) e).code()).isEqualTo(VipReturn.INVALID_PARAMETER);
        // 38: the same range twice → two distinct handles
        VipMemHandle h1 = Vipl.registerMem(a.nic, mem, new VipMemAttributes(tag, true, false));
        VipMemHandle h2 = Vipl.registerMem(a.nic, mem, VipMemAttributes.of(tag));
        assertThat(h1.value()).isNotEqualTo(h2.value());
        // 39 (QueryMem half): the attributes given
        assertThat(Vipl.queryMem(a.nic, mem.address(), h1)).isEqualTo(new VipMemAttributes(tag, true, false));
        // 40: DestroyPtag while a region or VI uses it → ERROR_RESOURCE
        VipVi vi = Vipl.createVi(a.nic, VipViAttributes.of(tag), null, null);
        assertThat(Vipl.destroyPtag(a.nic, tag)).isEqualTo(VipReturn.ERROR_RESOURCE);
        // 42: wrong VA for the handle → INVALID_PARAMETER
        assertThat(Vipl.deregisterMem(a.nic, mem.address() + 64, h1)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.deregisterMem(a.nic, mem.address(), h1)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.deregisterMem(a.nic, mem.address(), h2)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.destroyPtag(a.nic, tag)).isEqualTo(VipReturn.ERROR_RESOURCE);
        assertThat(Vipl.destroyVi(vi)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.destroyPtag(a.nic, tag)).isEqualTo(VipReturn.SUCCESS);
        // 41: an invalid (destroyed, or another NIC's) Ptag → INVALID_PTAG
        assertThatThrownBy(() -> Vipl.createVi(a.nic, VipViAttributes.of(tag), null, null))
                .extracting(e -> ((VipException) e).code()).isEqualTo(VipReturn.INVALID_PTAG);
        assertThatThrownBy(() -> Vipl.registerMem(a.nic, mem, VipMemAttributes.of(b.ptag)))
                .extracting(e -> ((VipException) e).code()).isEqualTo(VipReturn.INVALID_PTAG);
        // 46: stale handles → INVALID_PARAMETER
        assertThat(Vipl.deregisterMem(a.nic, mem.address(), h1)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.destroyVi(vi)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.destroyPtag(a.nic, tag)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThatThrownBy(() -> Vipl.queryVi(vi)).extracting(e -> ((VipException) e).code()).isEqualTo(VipReturn.INVALID_PARAMETER);
    }

    /** §12 tests 22, 24, 25 and 19 (first half): CQ lifetime, forbidden waits, resizing; VI attribute checks of §9.3.1. */
    @Test
    void tests22to25CompletionQueueRules() {
        assertThatThrownBy(() -> Vipl.createCQ(a.nic, 0)).extracting(e -> ((VipException) e).code())
                .isEqualTo(VipReturn.INVALID_PARAMETER);
        VipCq cq = Vipl.createCQ(a.nic, 16);
        // 24: a CQ of another NIC → INVALID_PARAMETER
        VipCq other = Vipl.createCQ(b.nic, 16);
        assertThatThrownBy(() -> Vipl.createVi(a.nic, rd(a), null, other)).extracting(e -> ((VipException) e).code())
                .isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.destroyCQ(other)).isEqualTo(VipReturn.SUCCESS);
        // §9.3.1: attribute codes
        assertThatThrownBy(() -> Vipl.createVi(a.nic, rd(a).withMaxTransferSize(1024), null, null))
                .extracting(e -> ((VipException) e).code()).isEqualTo(VipReturn.INVALID_MTU);
        assertThatThrownBy(() -> Vipl.createVi(a.nic, rd(a).withQos(3), null, null))
                .extracting(e -> ((VipException) e).code()).isEqualTo(VipReturn.INVALID_QOS);
        assertThatThrownBy(() -> Vipl.createVi(a.nic, rd(a).withReliabilityLevel(null), null, null))
                .extracting(e -> ((VipException) e).code()).isEqualTo(VipReturn.INVALID_RELIABILITY_LEVEL);
        VipVi vi = Vipl.createVi(a.nic, rd(a), null, cq);
        assertThat(Vipl.queryVi(vi).state()).isEqualTo(VipViState.IDLE);
        // 22: RecvWait / SendWait on a CQ-attached queue → ERROR_RESOURCE (D2); SendWait on the CQ-less queue is allowed
        VipDescriptor out = VipDescriptor.empty();
        assertThat(Vipl.recvWait(vi, 10, out)).isEqualTo(VipReturn.ERROR_RESOURCE);
        long t0 = System.nanoTime();
        assertThat(Vipl.sendWait(vi, 50, out)).as("19: nothing posted").isEqualTo(VipReturn.TIMEOUT);
        assertThat(System.nanoTime() - t0).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(50));
        // 26 (first half): an empty CQ → NOT_DONE
        assertThat(Vipl.cqDone(cq, new VipCqEntry())).isEqualTo(VipReturn.NOT_DONE);
        assertThat(Vipl.cqWait(cq, 20, new VipCqEntry())).isEqualTo(VipReturn.TIMEOUT);
        // 24: DestroyCQ while a VI uses it → ERROR_RESOURCE, after DestroyVi → SUCCESS
        assertThat(Vipl.destroyCQ(cq)).isEqualTo(VipReturn.ERROR_RESOURCE);
        // 25: resize 16 → 2048
        assertThat(Vipl.resizeCQ(cq, 2048)).isEqualTo(VipReturn.SUCCESS);
        assertThat(cq.entryCount()).isEqualTo(2048);
        assertThat(Vipl.destroyVi(vi)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.destroyCQ(cq)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.destroyCQ(cq)).as("46: stale").isEqualTo(VipReturn.INVALID_PARAMETER);
    }

    /**
     * §12 tests 10, 11, 9 and 7 on an Idle VI (§5.1, §6.2, §9.3.2): receives wait for a connection,
     * sends complete flushed (D10), DestroyVi refuses queued descriptors, Disconnect flushes them;
     * descriptors are chained through Next/NextHandle while queued.
     */
    @Test
    void tests9to11IdleVi() {
        VipVi vi = Vipl.createVi(a.nic, rd(a), null, null);
        VipDescriptor r0 = a.desc(0).sendReceive(0).addData(a.data.asSlice(0, 64), a.dataH);
        VipDescriptor r1 = a.desc(1).sendReceive(0).addData(a.data.asSlice(64, 64), a.dataH);
        assertThat(Vipl.postRecv(vi, r0, a.descH)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.postRecv(vi, r1, a.descH)).isEqualTo(VipReturn.SUCCESS);
        assertThat(r0.next()).isEqualTo(r1.address());
        assertThat(r0.nextHandle()).isEqualTo(a.descH.value());
        VipDescriptor out = VipDescriptor.empty();
        assertThat(Vipl.recvDone(vi, out)).isEqualTo(VipReturn.NOT_DONE);
        // 11: a send while Idle completes in error
        VipDescriptor s = a.desc(2).sendReceive(0).addData(a.data.asSlice(128, 8), a.dataH);
        assertThat(Vipl.postSend(vi, s, a.descH)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.sendDone(vi, out)).isEqualTo(VipReturn.SUCCESS);
        assertThat(out.address()).isEqualTo(s.address());
        assertThat(out.status()).isEqualTo(VipStatus.DONE | VipStatus.DESC_FLUSHED_ERROR | VipStatus.OP_SEND);
        // 9: receives still queued → ERROR_RESOURCE
        assertThat(Vipl.destroyVi(vi)).isEqualTo(VipReturn.ERROR_RESOURCE);
        assertThat(Vipl.queryVi(vi).recvQueueEmpty()).isFalse();
        // 7: Disconnect flushes them, in order
        assertThat(Vipl.disconnect(vi)).isEqualTo(VipReturn.SUCCESS);
        for (VipDescriptor expected : new VipDescriptor[]{r0, r1}) {
            assertThat(Vipl.recvDone(vi, out)).isEqualTo(VipReturn.SUCCESS);
            assertThat(out.address()).isEqualTo(expected.address());
            assertThat(out.status()).isEqualTo(VipStatus.DONE | VipStatus.DESC_FLUSHED_ERROR | VipStatus.OP_RECEIVE);
        }
        assertThat(Vipl.destroyVi(vi)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.postRecv(vi, r0, a.descH)).as("46: stale").isEqualTo(VipReturn.INVALID_PARAMETER);
    }

    /**
     * §12 tests 16, 17, 18 (§10.2–10.4, §3.2.2.1): malformed descriptors complete with FORMAT,
     * LENGTH or PROTECTION status, never an exception; a descriptor outside the region of its
     * handle, or in a region of another tag, is a protection error and the asynchronous POST_DESC
     * error.
     */
    @Test
    void tests16to18DescriptorErrorsGiveStatus() {
        VipPtag otherTag = Vipl.createPtag(a.nic);
        MemorySegment otherMem = arena.allocate(4096, 4096);
        VipMemHandle otherH = Vipl.registerMem(a.nic, otherMem, VipMemAttributes.of(otherTag));
        // the descriptor region registered a second time, under the other tag
        VipMemHandle otherDescH = Vipl.registerMem(a.nic, a.descs, VipMemAttributes.of(otherTag));
        VipVi vi = Vipl.createVi(a.nic, rd(a), null, null);
        VipDescriptor out = VipDescriptor.empty();
        record Case(String what, VipDescriptor d, VipMemHandle h, boolean receive, int error) {
        }
        List<Case> cases = List.of(
                new Case("17 op 11b", a.desc(10).sendReceive(0).control(3), a.descH, false, VipStatus.FORMAT_ERROR),
                new Case("17 reserved control bit", a.desc(11).sendReceive(0x100), a.descH, false, VipStatus.FORMAT_ERROR),
                new Case("17 RDMA write on the receive queue", a.desc(12).rdma(VipControl.OP_RDMAWRITE, 0, 0, 0), a.descH, true,
                        VipStatus.FORMAT_ERROR),
                new Case("16 Length != sum", a.desc(13).sendReceive(0).addData(a.data.asSlice(0, 8), a.dataH).length(9), a.descH,
                        false, VipStatus.LENGTH_ERROR),
                new Case("18 region of another Ptag", a.desc(14).sendReceive(0).addData(otherMem.asSlice(0, 8), otherH), a.descH,
                        false, VipStatus.PROTECTION_ERROR),
                new Case("18 VA outside the region", a.desc(15).sendReceive(0).addData(a.data.address() + (1 << 20) - 4,
                        a.dataH.value(), 8), a.descH, true, VipStatus.PROTECTION_ERROR),
                new Case("18 unknown handle", a.desc(16).sendReceive(0).addData(a.data.address(), 0x7777777, 8), a.descH, false,
                        VipStatus.PROTECTION_ERROR),
                new Case("18 descriptor outside its handle's region", a.desc(17).sendReceive(0), a.dataH, false,
                        VipStatus.PROTECTION_ERROR),
                new Case("17 non-zero Reserved word", a.desc(18).sendReceive(0).reserved(1), a.descH, false, VipStatus.FORMAT_ERROR),
                new Case("18 descriptor in memory of another Ptag", a.desc(19).sendReceive(0), otherDescH, true,
                        VipStatus.PROTECTION_ERROR));
        for (Case c : cases) {
            VipReturn rc = c.receive ? Vipl.postRecv(vi, c.d, c.h) : Vipl.postSend(vi, c.d, c.h);
            assertThat(rc).as(c.what).isEqualTo(VipReturn.SUCCESS);
            assertThat(c.receive ? Vipl.recvDone(vi, out) : Vipl.sendDone(vi, out)).as(c.what).isEqualTo(VipReturn.SUCCESS);
            assertThat(out.address()).isEqualTo(c.d.address());
            assertThat(out.status() & ~VipStatus.OP_MASK).as(c.what + ": " + VipStatus.describe(out.status()))
                    .isEqualTo(VipStatus.DONE | c.error);
        }
        assertThat(a.errors).hasSize(2).allSatisfy(e -> {
            assertThat(e.errorCode()).isEqualTo(VipErrorCode.POST_DESC);
            assertThat(e.resourceCode()).isEqualTo(VipResourceCode.DESCRIPTOR);
            assertThat(e.vi()).isSameAs(vi);
        });
        assertThat(a.errors).extracting(VipErrorDescriptor::descriptorAddress)
                .containsExactly(a.desc(17).address(), a.desc(19).address());
        assertThat(Vipl.queryVi(vi).state()).isEqualTo(VipViState.IDLE);
        assertThat(Vipl.destroyVi(vi)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.deregisterMem(a.nic, otherMem.address(), otherH)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.deregisterMem(a.nic, a.descs.address(), otherDescH)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.destroyPtag(a.nic, otherTag)).isEqualTo(VipReturn.SUCCESS);
    }

    /**
     * §12 tests 1, 6, 10, 12–15, 31, 32, 34, 7, 9 over one Reliable Delivery connection: connect and
     * accept, pre-posted receives, ping-pong of 1 byte and 32 KiB, immediate data without data
     * segments, FIFO of 100 sends, scatter/gather, RDMA Write (no receive consumed), RDMA Write
     * with immediate data, RDMA Read, then Disconnect flushing posted receives.
     */
    @Test
    void tests1and12to15and31to34ConnectedDataPath() throws Exception {
        VipVi c = Vipl.createVi(a.nic, rd(a), null, null);
        VipVi s = Vipl.createVi(b.nic, rd(b), null, null);
        // 10: a receive posted before the connection is completed by the first send after it
        VipDescriptor pre = b.desc(0).sendReceive(0).addData(b.data.asSlice(0, 64), b.dataH);
        assertThat(Vipl.postRecv(s, pre, b.descH)).isEqualTo(VipReturn.SUCCESS);
        connect(c, s, DISC);
        assertThat(Vipl.queryVi(c).state()).isEqualTo(VipViState.CONNECTED);
        assertThat(Vipl.queryVi(s).state()).isEqualTo(VipViState.CONNECTED);
        assertThat(c.remoteAttributes().reliabilityLevel()).isEqualTo(VipReliabilityLevel.RELIABLE_DELIVERY);
        assertThat(c.remoteAttributes().enableRdmaRead()).isTrue();
        // 6: ConnectRequest on a connected VI → error (INVALID_STATE, D5)
        assertThat(Vipl.connectRequest(c, a.addr(new byte[]{1}), b.addr(DISC), 100)).isEqualTo(VipReturn.INVALID_STATE);
        // 9: DestroyVi while connected → ERROR_RESOURCE
        assertThat(Vipl.destroyVi(c)).isEqualTo(VipReturn.ERROR_RESOURCE);

        // 12: 1 byte, then 32 KiB
        for (int size : new int[]{1, 32 * 1024}) {
            VipDescriptor r = size == 1 ? pre : b.desc(1).sendReceive(0).addData(b.data.asSlice(0, size), b.dataH);
            if (size != 1) {
                assertThat(Vipl.postRecv(s, r, b.descH)).isEqualTo(VipReturn.SUCCESS);
            }
            a.data.asSlice(0, size).fill((byte) (size & 0x7f | 1));
            VipDescriptor d = a.desc(0).sendReceive(0).addData(a.data.asSlice(0, size), a.dataH);
            assertThat(Vipl.postSend(c, d, a.descH)).isEqualTo(VipReturn.SUCCESS);
            VipDescriptor got = recv(s);
            assertThat(got.address()).isEqualTo(r.address());
            assertThat(got.status()).isEqualTo(VipStatus.DONE | VipStatus.OP_RECEIVE);
            assertThat(got.length()).isEqualTo(size);
            assertThat(b.data.get(ValueLayout.JAVA_BYTE, size - 1)).isEqualTo((byte) (size & 0x7f | 1));
            VipDescriptor done = sent(c);
            assertThat(done.status()).isEqualTo(VipStatus.DONE | VipStatus.OP_SEND);
            assertThat(done.length()).isEqualTo(size);
        }

        // 13: immediate data, no data segments
        VipDescriptor ir = b.desc(2).sendReceive(0);
        assertThat(Vipl.postRecv(s, ir, b.descH)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.postSend(c, a.desc(1).sendReceive(VipControl.IMMEDIATE).immediateData(0xDEADBEEF), a.descH))
                .isEqualTo(VipReturn.SUCCESS);
        VipDescriptor got = recv(s);
        assertThat(got.status()).isEqualTo(VipStatus.DONE | VipStatus.OP_RECEIVE | VipStatus.IMMEDIATE);
        assertThat(got.immediateData()).isEqualTo(0xDEADBEEF);
        assertThat(got.length()).isZero();
        assertThat(sent(c).status()).isEqualTo(VipStatus.DONE | VipStatus.OP_SEND);

        // 14: 100 sends, received and dequeued in order; SendWait returns them in post order
        for (int i = 0; i < 100; i++) {
            assertThat(Vipl.postRecv(s, b.desc(100 + i).sendReceive(0).addData(b.data.asSlice(4096 + i * 8L, 8), b.dataH), b.descH))
                    .isEqualTo(VipReturn.SUCCESS);
        }
        for (int i = 0; i < 100; i++) {
            a.data.set(ValueLayout.JAVA_INT, 4096 + i * 8L, i);
            assertThat(Vipl.postSend(c, a.desc(100 + i).sendReceive(0).addData(a.data.asSlice(4096 + i * 8L, 4), a.dataH), a.descH))
                    .isEqualTo(VipReturn.SUCCESS);
        }
        for (int i = 0; i < 100; i++) {
            VipDescriptor r = recv(s);
            assertThat(r.address()).isEqualTo(b.desc(100 + i).address());
            assertThat(b.data.get(ValueLayout.JAVA_INT, 4096 + i * 8L)).isEqualTo(i);
            assertThat(sent(c).address()).isEqualTo(a.desc(100 + i).address());
        }

        // 15: 3 send segments (one of length 0) into 2 receive segments
        a.data.asSlice(8192, 3).copyFrom(MemorySegment.ofArray(new byte[]{1, 2, 3}));
        a.data.asSlice(9000, 4).copyFrom(MemorySegment.ofArray(new byte[]{4, 5, 6, 7}));
        VipDescriptor sg = b.desc(3).sendReceive(0).addData(b.data.asSlice(8192, 2), b.dataH).addData(b.data.asSlice(9000, 16), b.dataH);
        assertThat(Vipl.postRecv(s, sg, b.descH)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.postSend(c, a.desc(2).sendReceive(0).addData(a.data.asSlice(8192, 3), a.dataH)
                .addData(a.data.asSlice(8500, 0), a.dataH).addData(a.data.asSlice(9000, 4), a.dataH), a.descH)).isEqualTo(VipReturn.SUCCESS);
        assertThat(recv(s).length()).isEqualTo(7);
        assertThat(b.data.asSlice(8192, 2).toArray(ValueLayout.JAVA_BYTE)).containsExactly(1, 2);
        assertThat(b.data.asSlice(9000, 5).toArray(ValueLayout.JAVA_BYTE)).containsExactly(3, 4, 5, 6, 7);
        assertThat(sent(c).length()).isEqualTo(7);

        // 31: RDMA Write lands and consumes no receive
        VipDescriptor spare = b.desc(4).sendReceive(0);
        assertThat(Vipl.postRecv(s, spare, b.descH)).isEqualTo(VipReturn.SUCCESS);
        a.data.asSlice(16384, 256).fill((byte) 0x5A);
        long target = b.data.address() + 65536;
        VipDescriptor w = a.desc(3).rdma(VipControl.OP_RDMAWRITE, 0, target, b.dataH.value()).addData(a.data.asSlice(16384, 256), a.dataH);
        assertThat(w.segCount()).isEqualTo(2);
        assertThat(Vipl.postSend(c, w, a.descH)).isEqualTo(VipReturn.SUCCESS);
        VipDescriptor wd = sent(c);
        assertThat(wd.status()).isEqualTo(VipStatus.DONE | VipStatus.OP_RDMA_WRITE);
        assertThat(wd.length()).isEqualTo(256);
        assertThat(b.data.get(ValueLayout.JAVA_BYTE, 65536 + 255)).isEqualTo((byte) 0x5A);
        VipDescriptor none = VipDescriptor.empty();
        assertThat(Vipl.recvDone(s, none)).isEqualTo(VipReturn.NOT_DONE);
        // 32: RDMA Write with immediate data consumes that receive
        assertThat(Vipl.postSend(c, a.desc(4).rdma(VipControl.OP_RDMAWRITE, VipControl.IMMEDIATE, target, b.dataH.value())
                .immediateData(0x12345678).addData(a.data.asSlice(16384, 16), a.dataH), a.descH)).isEqualTo(VipReturn.SUCCESS);
        VipDescriptor wi = recv(s);
        assertThat(wi.address()).isEqualTo(spare.address());
        assertThat(wi.status()).isEqualTo(VipStatus.DONE | VipStatus.OP_REMOTE_RDMA_WRITE | VipStatus.IMMEDIATE);
        assertThat(wi.immediateData()).isEqualTo(0x12345678);
        assertThat(wi.length()).as("nothing lands in the receive's segments (decision §10.3)").isZero();
        assertThat(sent(c).status()).isEqualTo(VipStatus.DONE | VipStatus.OP_RDMA_WRITE);
        // 34: RDMA Read (the immediate bit is ignored)
        b.data.asSlice(131072, 100).fill((byte) 0x33);
        assertThat(Vipl.postSend(c, a.desc(5).rdma(VipControl.OP_RDMAREAD, VipControl.IMMEDIATE, b.data.address() + 131072,
                b.dataH.value()).addData(a.data.asSlice(20000, 60), a.dataH).addData(a.data.asSlice(30000, 40), a.dataH), a.descH))
                .isEqualTo(VipReturn.SUCCESS);
        VipDescriptor rd = sent(c);
        assertThat(rd.status()).isEqualTo(VipStatus.DONE | VipStatus.OP_RDMA_READ);
        assertThat(rd.length()).isEqualTo(100);
        assertThat(a.data.get(ValueLayout.JAVA_BYTE, 20059)).isEqualTo((byte) 0x33);
        assertThat(a.data.get(ValueLayout.JAVA_BYTE, 30039)).isEqualTo((byte) 0x33);

        // 7: Disconnect with N receives posted: all complete DESC_FLUSHED, the VI is Idle
        for (int i = 0; i < 5; i++) {
            assertThat(Vipl.postRecv(s, b.desc(10 + i).sendReceive(0).addData(b.data.asSlice(0, 64), b.dataH), b.descH))
                    .isEqualTo(VipReturn.SUCCESS);
        }
        assertThat(Vipl.disconnect(s)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.queryVi(s).state()).isEqualTo(VipViState.IDLE);
        for (int i = 0; i < 5; i++) {
            assertThat(Vipl.recvDone(s, none)).isEqualTo(VipReturn.SUCCESS);
            assertThat(none.address()).isEqualTo(b.desc(10 + i).address());
            assertThat(none.status()).isEqualTo(VipStatus.DONE | VipStatus.DESC_FLUSHED_ERROR | VipStatus.OP_RECEIVE);
        }
        teardown(c, s);
    }

    /** §12 test 2 (§4.1, §9.4.3): ConnectReject → the client's request returns VIP_REJECT, its VI is Idle; the handle is consumed. */
    @Test
    void test2Reject() throws Exception {
        VipVi c = Vipl.createVi(a.nic, rd(a), null, null);
        byte[] disc = {'r', 'e', 'j'};
        Future<VipConnHandle> waited = pool.submit(() -> {
            VipConnHandle h = Vipl.connectWait(b.nic, b.addr(disc), WAIT);
            assertThat(Vipl.connectReject(h)).isEqualTo(VipReturn.SUCCESS);
            return h;
        });
        assertThat(Vipl.connectRequest(c, a.addr(new byte[0]), b.addr(disc), WAIT)).isEqualTo(VipReturn.REJECT);
        assertThat(Vipl.queryVi(c).state()).isEqualTo(VipViState.IDLE);
        VipConnHandle h = await(waited);
        assertThat(Vipl.connectReject(h)).isEqualTo(VipReturn.INVALID_PARAMETER);
        VipVi s = Vipl.createVi(b.nic, rd(b), null, null);
        assertThat(Vipl.connectAccept(h, s)).isEqualTo(VipReturn.INVALID_PARAMETER);
        teardown(c, s);
    }

    /**
     * §12 test 3 (§4.1, §9.4.2): accepting with another reliability level fails without telling the
     * client; SetViAttributes and a second accept on the same handle connect.
     */
    @Test
    void test3AcceptMismatchThenRetry() throws Exception {
        VipVi c = Vipl.createVi(a.nic, rd(a).withReliabilityLevel(VipReliabilityLevel.RELIABLE_RECEPTION), null, null);
        VipVi s = Vipl.createVi(b.nic, rd(b), null, null);
        byte[] disc = {'m', 'i', 's'};
        Future<VipReturn> server = pool.submit(() -> {
            VipConnHandle h = Vipl.connectWait(b.nic, b.addr(disc), WAIT);
            assertThat(Vipl.connectAccept(h, s)).isEqualTo(VipReturn.INVALID_RELIABILITY_LEVEL);
            assertThat(h.isConsumed()).isFalse();
            assertThat(Vipl.connectAccept(h, Vipl.createVi(b.nic, rd(b).withMaxTransferSize(65536)
                    .withReliabilityLevel(VipReliabilityLevel.RELIABLE_RECEPTION), null, null))).isEqualTo(VipReturn.INVALID_MTU);
            assertThat(Vipl.setViAttributes(s, rd(b).withReliabilityLevel(VipReliabilityLevel.RELIABLE_RECEPTION)))
                    .isEqualTo(VipReturn.SUCCESS);
            return Vipl.connectAccept(h, s);
        });
        assertThat(Vipl.connectRequest(c, a.addr(new byte[0]), b.addr(disc), WAIT)).isEqualTo(VipReturn.SUCCESS);
        assertThat(await(server)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.queryVi(s).attributes().reliabilityLevel()).isEqualTo(VipReliabilityLevel.RELIABLE_RECEPTION);
        // 6: SetViAttributes and ConnectAccept need an Idle VI
        assertThat(Vipl.setViAttributes(s, rd(b))).isEqualTo(VipReturn.INVALID_STATE);
        teardown(c, s);
    }

    /**
     * §12 tests 4 and 5 (§4.1, §4.3, §9.4.1, §9.4.4): timeouts, and a request for another
     * discriminator neither completes the server's wait nor connects.
     */
    @Test
    void tests4and5TimeoutsAndDiscriminators() throws Exception {
        VipVi c = Vipl.createVi(a.nic, rd(a), null, null);
        long t0 = System.nanoTime();
        assertThatThrownBy(() -> Vipl.connectWait(b.nic, b.addr(DISC), 100)).extracting(e -> ((VipException) e).code())
                .isEqualTo(VipReturn.TIMEOUT);
        assertThat(System.nanoTime() - t0).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(100));
        assertThat(Vipl.connectRequest(c, a.addr(new byte[0]), b.addr(DISC), 0)).as("D3").isEqualTo(VipReturn.TIMEOUT);
        // nobody listens on host A's address
        assertThat(Vipl.connectRequest(c, a.addr(new byte[0]), a.addr(DISC), 3000)).isIn(VipReturn.NOT_REACHABLE, VipReturn.TIMEOUT);
        assertThat(Vipl.queryVi(c).state()).isEqualTo(VipViState.IDLE);
        // 5: the server waits on X, the client asks for Y
        Future<VipReturn> server = pool.submit(() -> {
            try {
                Vipl.connectWait(b.nic, b.addr(new byte[]{'X'}), 1500);
                return VipReturn.SUCCESS;
            } catch (VipException e) {
                return e.code();
            }
        });
        assertThat(Vipl.connectRequest(c, a.addr(new byte[0]), b.addr(new byte[]{'Y'}), 1000)).isEqualTo(VipReturn.TIMEOUT);
        assertThat(await(server)).isEqualTo(VipReturn.TIMEOUT);
        assertThat(Vipl.queryVi(c).state()).isEqualTo(VipViState.IDLE);
        assertThat(Vipl.destroyVi(c)).isEqualTo(VipReturn.SUCCESS);
    }

    /** §12 tests 21 and 23 (§6.4.2, §9.6.7–8): CQWait gives (VI, queue), RecvDone then dequeues; a CQ shared by two VIs. */
    @Test
    void tests21and23CompletionQueueModel() throws Exception {
        VipCq cq = Vipl.createCQ(b.nic, 1024);
        VipVi c1 = Vipl.createVi(a.nic, rd(a), null, null);
        VipVi c2 = Vipl.createVi(a.nic, rd(a), null, null);
        VipVi s1 = Vipl.createVi(b.nic, rd(b), null, cq);
        VipVi s2 = Vipl.createVi(b.nic, rd(b), cq, cq);
        connect(c1, s1, new byte[]{'c', '1'});
        connect(c2, s2, new byte[]{'c', '2'});
        VipDescriptor r1 = b.desc(20).sendReceive(0).addData(b.data.asSlice(0, 64), b.dataH);
        VipDescriptor r2 = b.desc(21).sendReceive(0).addData(b.data.asSlice(64, 64), b.dataH);
        assertThat(Vipl.postRecv(s1, r1, b.descH)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.postRecv(s2, r2, b.descH)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.postSend(c2, a.desc(20).sendReceive(0).addData(a.data.asSlice(0, 8), a.dataH), a.descH)).isEqualTo(VipReturn.SUCCESS);
        VipCqEntry e = new VipCqEntry();
        assertThat(Vipl.cqWait(cq, Vipl.INFINITE, e)).isEqualTo(VipReturn.SUCCESS);
        assertThat(e.vi()).isSameAs(s2);
        assertThat(e.recvQueue()).isTrue();
        assertThat(Vipl.postSend(c1, a.desc(21).sendReceive(0).addData(a.data.asSlice(0, 8), a.dataH), a.descH)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.cqWait(cq, WAIT, e)).isEqualTo(VipReturn.SUCCESS);
        assertThat(e.vi()).isSameAs(s1);
        VipDescriptor out = VipDescriptor.empty();
        assertThat(Vipl.recvDone(s1, out)).isEqualTo(VipReturn.SUCCESS);
        assertThat(out.address()).isEqualTo(r1.address());
        assertThat(Vipl.recvDone(s1, out)).isEqualTo(VipReturn.NOT_DONE);
        assertThat(Vipl.recvDone(s2, out)).isEqualTo(VipReturn.SUCCESS);
        assertThat(out.address()).isEqualTo(r2.address());
        // s2's send queue is on the same CQ: its send completes as a (s2, send) entry
        assertThat(Vipl.postRecv(c2, a.desc(22).sendReceive(0).addData(a.data.asSlice(64, 8), a.dataH), a.descH)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.postSend(s2, b.desc(22).sendReceive(0).addData(b.data.asSlice(0, 8), b.dataH), b.descH)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.cqWait(cq, WAIT, e)).isEqualTo(VipReturn.SUCCESS);
        assertThat(e.vi()).isSameAs(s2);
        assertThat(e.recvQueue()).isFalse();
        assertThat(Vipl.sendDone(s2, out)).isEqualTo(VipReturn.SUCCESS);
        recv(c2);
        for (VipVi vi : new VipVi[]{c1, c2}) {
            while (Vipl.sendDone(vi, out) == VipReturn.NOT_DONE) {
                Thread.onSpinWait();
            }
        }
        teardown(c1, c2, s1, s2);
        assertThat(Vipl.destroyCQ(cq)).isEqualTo(VipReturn.SUCCESS);
    }

    /**
     * The protection violation under Reliable Delivery, §12 tests 33, 8 and 20: an RDMA
     * Write to a VI that does not enable it (the region does: the most protective wins) fails, the
     * VI is in Error with the asynchronous RDMAW_PROT, the target is unchanged, posts in Error
     * complete flushed; after Disconnect the VIs reconnect (the server's VI now enabling Write) and
     * a Write into a region that does not enable it fails the same way; a send that finds no receive
     * breaks the connection with RECVQ_EMPTY.
     */
    /**
     * The Unreliable level (§2.5.1, D18: a UC queue pair): connect only to Unreliable (§2.5),
     * send/receive of one and many packets, immediate data, RDMA Write with and without immediate
     * data; RDMA Read is a format error (§12 test 17); a send that finds no receive posted is
     * dropped and the VI stays Connected (test 20); so do a receive too small for the message
     * (test 16) and an RDMA Write the target does not enable (§7.1: no transport-level reporting);
     * after each, the next message arrives intact. Disconnect flushes what is posted (test 7).
     */
    @Test
    void unreliableLevel() throws Exception {
        VipViAttributes ua = rd(a).withReliabilityLevel(VipReliabilityLevel.UNRELIABLE);
        VipViAttributes ub = VipViAttributes.of(b.ptag).withReliabilityLevel(VipReliabilityLevel.UNRELIABLE)
                .withRdma(true, false);
        VipVi c = Vipl.createVi(a.nic, ua, null, null);
        VipVi rdServer = Vipl.createVi(b.nic, rd(b), null, null);
        byte[] disc = {'u', 'c'};
        // §2.5: only VIs of the same reliability level connect
        Future<VipReturn> refused = pool.submit(() -> Vipl.connectAccept(Vipl.connectWait(b.nic, b.addr(disc), WAIT), rdServer));
        VipReturn rc = Vipl.connectRequest(c, a.addr(new byte[]{2}), b.addr(disc), 3_000);
        assertThat(await(refused)).isEqualTo(VipReturn.INVALID_RELIABILITY_LEVEL);
        assertThat(rc).isIn(VipReturn.TIMEOUT, VipReturn.NOT_REACHABLE, VipReturn.REJECT);
        assertThat(Vipl.queryVi(c).state()).isEqualTo(VipViState.IDLE);
        assertThat(Vipl.destroyVi(rdServer)).isEqualTo(VipReturn.SUCCESS);

        VipVi s = Vipl.createVi(b.nic, ub, null, null);
        connect(c, s, new byte[]{'u', 'c', '2'});
        assertThat(Vipl.queryVi(c).state()).isEqualTo(VipViState.CONNECTED);
        assertThat(c.remoteAttributes().reliabilityLevel()).isEqualTo(VipReliabilityLevel.UNRELIABLE);
        int slot = 40;
        // one packet, then many (32 KiB: eight at the veth pair's path MTU), then immediate data alone
        for (int size : new int[]{1, 32 * 1024}) {
            VipDescriptor r = b.desc(slot).sendReceive(0).addData(b.data.asSlice(0, size), b.dataH);
            assertThat(Vipl.postRecv(s, r, b.descH)).isEqualTo(VipReturn.SUCCESS);
            a.data.asSlice(0, size).fill((byte) (size & 0x7f | 2));
            assertThat(Vipl.postSend(c, a.desc(slot++).sendReceive(0).addData(a.data.asSlice(0, size), a.dataH), a.descH))
                    .isEqualTo(VipReturn.SUCCESS);
            assertThat(sent(c).status()).isEqualTo(VipStatus.DONE | VipStatus.OP_SEND);
            VipDescriptor got = recv(s);
            assertThat(got.status()).as(VipStatus.describe(got.status())).isEqualTo(VipStatus.DONE | VipStatus.OP_RECEIVE);
            assertThat(got.length()).isEqualTo(size);
            assertThat(b.data.get(ValueLayout.JAVA_BYTE, size - 1)).isEqualTo((byte) (size & 0x7f | 2));
        }
        assertThat(Vipl.postRecv(s, b.desc(slot).sendReceive(0), b.descH)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.postSend(c, a.desc(slot++).sendReceive(VipControl.IMMEDIATE).immediateData(0xC0FFEE), a.descH))
                .isEqualTo(VipReturn.SUCCESS);
        VipDescriptor imm = recv(s);
        assertThat(imm.status()).isEqualTo(VipStatus.DONE | VipStatus.OP_RECEIVE | VipStatus.IMMEDIATE);
        assertThat(imm.immediateData()).isEqualTo(0xC0FFEE);
        assertThat(sent(c).status()).isEqualTo(VipStatus.DONE | VipStatus.OP_SEND);

        // RDMA Write, then RDMA Write with immediate data (which consumes a receive)
        a.data.asSlice(16384, 5000).fill((byte) 0x4B);
        long target = b.data.address() + 65536;
        assertThat(Vipl.postSend(c, a.desc(slot++).rdma(VipControl.OP_RDMAWRITE, 0, target, b.dataH.value())
                .addData(a.data.asSlice(16384, 5000), a.dataH), a.descH)).isEqualTo(VipReturn.SUCCESS);
        assertThat(sent(c).status()).isEqualTo(VipStatus.DONE | VipStatus.OP_RDMA_WRITE);
        VipDescriptor wr = b.desc(slot).sendReceive(0);
        assertThat(Vipl.postRecv(s, wr, b.descH)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.postSend(c, a.desc(slot++).rdma(VipControl.OP_RDMAWRITE, VipControl.IMMEDIATE, target + 8192,
                b.dataH.value()).immediateData(7).addData(a.data.asSlice(16384, 16), a.dataH), a.descH)).isEqualTo(VipReturn.SUCCESS);
        VipDescriptor wi = recv(s);
        assertThat(wi.status()).isEqualTo(VipStatus.DONE | VipStatus.OP_REMOTE_RDMA_WRITE | VipStatus.IMMEDIATE);
        assertThat(wi.immediateData()).isEqualTo(7);
        assertThat(sent(c).status()).isEqualTo(VipStatus.DONE | VipStatus.OP_RDMA_WRITE);
        assertThat(b.data.get(ValueLayout.JAVA_BYTE, 65536 + 4999)).isEqualTo((byte) 0x4B);
        assertThat(b.data.get(ValueLayout.JAVA_BYTE, 65536 + 8192 + 15)).isEqualTo((byte) 0x4B);

        // 17: RDMA Read on an Unreliable VI → FORMAT_ERROR; the VI stays Connected
        assertThat(Vipl.postSend(c, a.desc(slot++).rdma(VipControl.OP_RDMAREAD, 0, target, b.dataH.value())
                .addData(a.data.asSlice(0, 8), a.dataH), a.descH)).isEqualTo(VipReturn.SUCCESS);
        VipDescriptor read = sent(c);
        assertThat(read.status()).isEqualTo(VipStatus.DONE | VipStatus.FORMAT_ERROR | VipStatus.OP_RDMA_READ);
        assertThat(Vipl.queryVi(c).state()).isEqualTo(VipViState.CONNECTED);

        // 20: no receive posted: the message is dropped, the sender's descriptor completes, the VI stays Connected
        a.data.asSlice(0, 64).fill((byte) 0x11);
        assertThat(Vipl.postSend(c, a.desc(slot++).sendReceive(0).addData(a.data.asSlice(0, 64), a.dataH), a.descH))
                .isEqualTo(VipReturn.SUCCESS);
        assertThat(sent(c).status()).isEqualTo(VipStatus.DONE | VipStatus.OP_SEND);
        Thread.sleep(300);
        nextMessageArrives(c, s, slot++, (byte) 0x21);
        slot++;

        // 16: a receive too small for the message: reported on the receive only, both VIs stay Connected
        VipDescriptor small = b.desc(slot).sendReceive(0).addData(b.data.asSlice(0, 16), b.dataH);
        assertThat(Vipl.postRecv(s, small, b.descH)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.postSend(c, a.desc(slot++).sendReceive(0).addData(a.data.asSlice(0, 100), a.dataH), a.descH))
                .isEqualTo(VipReturn.SUCCESS);
        assertThat(sent(c).status()).isEqualTo(VipStatus.DONE | VipStatus.OP_SEND);
        VipDescriptor tooSmall = recv(s);
        assertThat(tooSmall.address()).isEqualTo(small.address());
        assertThat(tooSmall.status()).as(VipStatus.describe(tooSmall.status()))
                .isEqualTo(VipStatus.DONE | VipStatus.LENGTH_ERROR | VipStatus.OP_RECEIVE);
        assertThat(tooSmall.length()).isZero();
        assertThat(Vipl.queryVi(s).state()).isEqualTo(VipViState.CONNECTED);
        nextMessageArrives(c, s, slot++, (byte) 0x22);
        slot++;

        // an RDMA Write the target VI does not enable for its region... here the descriptor region: dropped, no error
        b.descs.set(ValueLayout.JAVA_BYTE, 250 * DESC_SIZE, (byte) 0);
        assertThat(Vipl.postSend(c, a.desc(slot++).rdma(VipControl.OP_RDMAWRITE, 0, b.descs.address() + 250 * DESC_SIZE,
                b.descH.value()).addData(a.data.asSlice(0, 8), a.dataH), a.descH)).isEqualTo(VipReturn.SUCCESS);
        assertThat(sent(c).status()).isEqualTo(VipStatus.DONE | VipStatus.OP_RDMA_WRITE);
        nextMessageArrives(c, s, slot++, (byte) 0x23);
        slot++;
        assertThat(b.descs.get(ValueLayout.JAVA_BYTE, 250 * DESC_SIZE)).isZero();
        assertThat(Vipl.queryVi(c).state()).isEqualTo(VipViState.CONNECTED);
        assertThat(Vipl.queryVi(s).state()).isEqualTo(VipViState.CONNECTED);
        assertThat(a.errors).isEmpty();
        assertThat(b.errors).isEmpty();

        // 7: Disconnect flushes the posted receives
        assertThat(Vipl.postRecv(s, b.desc(slot).sendReceive(0).addData(b.data.asSlice(0, 8), b.dataH), b.descH))
                .isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.disconnect(s)).isEqualTo(VipReturn.SUCCESS);
        VipDescriptor out = VipDescriptor.empty();
        assertThat(Vipl.recvDone(s, out)).isEqualTo(VipReturn.SUCCESS);
        assertThat(out.status()).isEqualTo(VipStatus.DONE | VipStatus.DESC_FLUSHED_ERROR | VipStatus.OP_RECEIVE);
        teardown(c, s);
    }

    /**
     * §12 test 19 (blocking waits with a 50 ms timeout: TIMEOUT with nothing posted, SUCCESS when
     * the peer sends 10 ms later), test 16 under Reliable Delivery (a receive too small for the
     * message: the receive's LENGTH_ERROR with Length 0, both VIs in Error) and test 20 under
     * Reliable Reception (no receive posted: the sender's descriptor gets REMOTE_DESC_ERROR).
     */
    @Test
    void tests19and16and20WaitsAndErrorsByLevel() throws Exception {
        VipVi c = Vipl.createVi(a.nic, rd(a), null, null);
        VipVi s = Vipl.createVi(b.nic, rd(b), null, null);
        connect(c, s, new byte[]{'w', '1', '9'});
        VipDescriptor out = VipDescriptor.empty();
        long t0 = System.nanoTime();
        assertThat(Vipl.recvWait(s, 50, out)).isEqualTo(VipReturn.TIMEOUT);
        assertThat(Vipl.sendWait(c, 50, out)).isEqualTo(VipReturn.TIMEOUT);
        assertThat(System.nanoTime() - t0).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(100));
        VipDescriptor r = b.desc(60).sendReceive(0).addData(b.data.asSlice(0, 64), b.dataH);
        assertThat(Vipl.postRecv(s, r, b.descH)).isEqualTo(VipReturn.SUCCESS);
        Future<VipReturn> later = pool.submit(() -> {
            Thread.sleep(10);
            return Vipl.postSend(c, a.desc(60).sendReceive(0).addData(a.data.asSlice(0, 8), a.dataH), a.descH);
        });
        assertThat(Vipl.recvWait(s, WAIT, out)).isEqualTo(VipReturn.SUCCESS);
        assertThat(out.address()).isEqualTo(r.address());
        assertThat(await(later)).isEqualTo(VipReturn.SUCCESS);
        assertThat(sent(c).status()).isEqualTo(VipStatus.DONE | VipStatus.OP_SEND);

        // 16 (RD): 100 bytes into a 16-byte receive
        VipDescriptor small = b.desc(61).sendReceive(0).addData(b.data.asSlice(0, 16), b.dataH);
        assertThat(Vipl.postRecv(s, small, b.descH)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.postSend(c, a.desc(61).sendReceive(0).addData(a.data.asSlice(0, 100), a.dataH), a.descH))
                .isEqualTo(VipReturn.SUCCESS);
        VipDescriptor got = recv(s);
        assertThat(got.status()).as(VipStatus.describe(got.status()))
                .isEqualTo(VipStatus.DONE | VipStatus.LENGTH_ERROR | VipStatus.OP_RECEIVE);
        assertThat(got.length()).isZero();
        assertThat(Vipl.queryVi(s).state()).isEqualTo(VipViState.ERROR);
        VipDescriptor failed = sent(c);
        assertThat(failed.status() & VipStatus.ERROR_MASK).as(VipStatus.describe(failed.status())).isNotZero();
        assertThat(Vipl.queryVi(c).state()).isEqualTo(VipViState.ERROR);
        teardown(c, s);

        // 20 (RR): a send that finds no receive posted
        VipViAttributes rr = rd(a).withReliabilityLevel(VipReliabilityLevel.RELIABLE_RECEPTION);
        VipVi c2 = Vipl.createVi(a.nic, rr, null, null);
        VipVi s2 = Vipl.createVi(b.nic, rd(b).withReliabilityLevel(VipReliabilityLevel.RELIABLE_RECEPTION), null, null);
        connect(c2, s2, new byte[]{'r', 'r', '2', '0'});
        assertThat(Vipl.postSend(c2, a.desc(62).sendReceive(0).addData(a.data.asSlice(0, 8), a.dataH), a.descH))
                .isEqualTo(VipReturn.SUCCESS);
        VipDescriptor d = sent(c2);
        assertThat(d.status()).as(VipStatus.describe(d.status()))
                .isEqualTo(VipStatus.DONE | VipStatus.REMOTE_DESC_ERROR | VipStatus.OP_SEND);
        assertThat(Vipl.queryVi(c2).state()).isEqualTo(VipViState.ERROR);
        teardown(c2, s2);
    }

    /** A receive posted on {@code s}, a 64-byte message of {@code fill} from {@code c}: it arrives intact. */
    private static void nextMessageArrives(VipVi c, VipVi s, int slot, byte fill) {
        VipDescriptor r = b.desc(slot).sendReceive(0).addData(b.data.asSlice(1024, 64), b.dataH);
        assertThat(Vipl.postRecv(s, r, b.descH)).isEqualTo(VipReturn.SUCCESS);
        a.data.asSlice(2048, 64).fill(fill);
        assertThat(Vipl.postSend(c, a.desc(slot).sendReceive(0).addData(a.data.asSlice(2048, 64), a.dataH), a.descH))
                .isEqualTo(VipReturn.SUCCESS);
        assertThat(sent(c).status()).isEqualTo(VipStatus.DONE | VipStatus.OP_SEND);
        VipDescriptor got = recv(s);
        assertThat(got.address()).isEqualTo(r.address());
        assertThat(got.status()).as(VipStatus.describe(got.status())).isEqualTo(VipStatus.DONE | VipStatus.OP_RECEIVE);
        assertThat(got.length()).isEqualTo(64);
        assertThat(b.data.get(ValueLayout.JAVA_BYTE, 1024 + 63)).isEqualTo(fill);
    }

    @Test
    void tests33and8and20ProtectionViolationDrivesErrorState() throws Exception {
        VipVi c = Vipl.createVi(a.nic, rd(a), null, null);
        VipVi s = Vipl.createVi(b.nic, VipViAttributes.of(b.ptag), null, null);
        byte[] disc = {'p', 'v'};
        connect(c, s, disc);
        assertThat(c.remoteAttributes().enableRdmaWrite()).isFalse();
        b.data.asSlice(200_000, 64).fill((byte) 0);
        a.data.asSlice(40_000, 64).fill((byte) 0x77);
        assertThat(Vipl.postSend(c, a.desc(30).rdma(VipControl.OP_RDMAWRITE, 0, b.data.address() + 200_000, b.dataH.value())
                .addData(a.data.asSlice(40_000, 64), a.dataH), a.descH)).isEqualTo(VipReturn.SUCCESS);
        VipDescriptor d = sent(c);
        assertThat(d.status() & VipStatus.ERROR_MASK).as(VipStatus.describe(d.status())).isEqualTo(VipStatus.TRANSPORT_ERROR);
        assertThat(Vipl.queryVi(c).state()).isEqualTo(VipViState.ERROR);
        assertThat(a.errors).extracting(VipErrorDescriptor::errorCode).containsExactly(VipErrorCode.RDMAW_PROT);
        assertThat(a.errors.get(0).resourceCode()).isEqualTo(VipResourceCode.VI);
        assertThat(b.data.get(ValueLayout.JAVA_BYTE, 200_000)).isZero();
        // §5.4: in Error, posted descriptors complete in error
        assertThat(Vipl.postRecv(c, a.desc(31).sendReceive(0), a.descH)).isEqualTo(VipReturn.SUCCESS);
        VipDescriptor out = VipDescriptor.empty();
        assertThat(Vipl.recvDone(c, out)).isEqualTo(VipReturn.SUCCESS);
        assertThat(out.status()).isEqualTo(VipStatus.DONE | VipStatus.DESC_FLUSHED_ERROR | VipStatus.OP_RECEIVE);
        assertThat(Vipl.disconnect(c)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.disconnect(s)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.queryVi(c).state()).isEqualTo(VipViState.IDLE);

        // 8: reconnect the same VIs, the server's now enabling RDMA Write; 33: the region (descriptor memory) does not
        assertThat(Vipl.setViAttributes(s, rd(b))).isEqualTo(VipReturn.SUCCESS);
        connect(c, s, disc);
        a.errors.clear();
        b.descs.set(ValueLayout.JAVA_BYTE, 255 * DESC_SIZE, (byte) 0);
        assertThat(Vipl.postSend(c, a.desc(33).rdma(VipControl.OP_RDMAWRITE, 0, b.descs.address() + 255 * DESC_SIZE, b.descH.value())
                .addData(a.data.asSlice(40_000, 64), a.dataH), a.descH)).isEqualTo(VipReturn.SUCCESS);
        d = sent(c);
        assertThat(d.status() & VipStatus.ERROR_MASK).as(VipStatus.describe(d.status())).isEqualTo(VipStatus.TRANSPORT_ERROR);
        assertThat(Vipl.queryVi(c).state()).isEqualTo(VipViState.ERROR);
        assertThat(a.errors).extracting(VipErrorDescriptor::errorCode).containsExactly(VipErrorCode.RDMAW_PROT);
        assertThat(b.descs.get(ValueLayout.JAVA_BYTE, 255 * DESC_SIZE)).isZero();
        assertThat(Vipl.disconnect(c)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.disconnect(s)).isEqualTo(VipReturn.SUCCESS);
        connect(c, s, disc);
        a.errors.clear();
        // 20 (RD): a send that finds the receive queue empty
        assertThat(Vipl.postSend(c, a.desc(32).sendReceive(0).addData(a.data.asSlice(0, 8), a.dataH), a.descH)).isEqualTo(VipReturn.SUCCESS);
        d = sent(c);
        assertThat(d.status() & VipStatus.ERROR_MASK).as(VipStatus.describe(d.status())).isEqualTo(VipStatus.TRANSPORT_ERROR);
        assertThat(Vipl.queryVi(c).state()).isEqualTo(VipViState.ERROR);
        assertThat(a.errors).extracting(VipErrorDescriptor::errorCode).containsExactly(VipErrorCode.RECVQ_EMPTY);
        teardown(c, s);
    }
}
