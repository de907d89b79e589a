package dev.verbs4j.vipl;

import dev.verbs4j.verbs.RdmaArena;
import dev.verbs4j.verbs.TestBed;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Safety of VIPL (issue 13) on Soft-RoCE between the two test hosts: registered memory must be of
 * an RdmaArena (or the global arena), a handle whose RdmaArena was closed is a clear error, and
 * calls racing on one VI or NIC from several threads (disconnect, destroy and close against a
 * connection in progress, waits with their own deadlines, error handlers calling back) end in
 * return codes, never a crash or a hang.
 */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_3)
@Timeout(180)
class ViplSafetyDeviceTest extends ViplTwoHosts {

    private static VipReturn code(Runnable call) {
        try {
            call.run();
        } catch (VipException e) {
            return e.code();
        }
        return VipReturn.SUCCESS;
    }

    /**
     * VipRegisterMem of memory that could be freed under the NIC (a confined, shared or automatic
     * arena's) is INVALID_PARAMETER, the message naming RdmaArena, and registers nothing (the tag
     * is free to go); memory of the global arena or of an RdmaArena registers.
     */
    @Test
    void registeringMemoryOfAnotherArenaIsRefused() {
        VipPtag tag = Vipl.createPtag(a.nic);
        try (Arena confined = Arena.ofConfined(); Arena shared = Arena.ofShared()) {
            for (MemorySegment m : List.of(confined.allocate(4096, 4096), shared.allocate(4096, 4096),
                    Arena.ofAuto().allocate(4096, 4096))) {
                assertThatThrownBy(() -> Vipl.registerMem(a.nic, m, VipMemAttributes.of(tag)))
                        .isInstanceOf(VipException.class)
                        .hasMessageContaining("RdmaArena")
                        .extracting(e -> ((VipException) e).code()).isEqualTo(VipReturn.INVALID_PARAMETER);
            }
        }
        // a closed RdmaArena's memory: INVALID_PARAMETER too
        RdmaArena closed = RdmaArena.ofShared();
        MemorySegment gone = closed.allocate(4096, 4096);
        closed.close();
        assertThat(code(() -> Vipl.registerMem(a.nic, gone, VipMemAttributes.of(tag)))).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.destroyPtag(a.nic, tag)).as("nothing was registered under the tag").isEqualTo(VipReturn.SUCCESS);

        VipPtag tag2 = Vipl.createPtag(a.nic);
        MemorySegment global = Arena.global().allocate(4096, 4096);
        VipMemHandle g = Vipl.registerMem(a.nic, global, VipMemAttributes.of(tag2));
        try (RdmaArena rdma = RdmaArena.ofShared()) {
            MemorySegment m = rdma.allocate(4096, 4096);
            VipMemHandle h = Vipl.registerMem(a.nic, m, VipMemAttributes.of(tag2));
            assertThat(Vipl.queryMem(a.nic, m.address(), h).ptag()).isSameAs(tag2);
            assertThat(Vipl.deregisterMem(a.nic, m.address(), h)).isEqualTo(VipReturn.SUCCESS);
        }
        assertThat(Vipl.deregisterMem(a.nic, global.address(), g)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.destroyPtag(a.nic, tag2)).isEqualTo(VipReturn.SUCCESS);
    }

    /**
     * Closing the RdmaArena of a registered region deregisters it (before the memory is freed),
     * and its handle is then a clear error everywhere: VipQueryMem, VipSetMemAttributes and
     * VipDeregisterMem give INVALID_PARAMETER, a send naming it completes with PROTECTION_ERROR
     * (and breaks the reliable connection, as for a deregistered region, §3.2.1) without sending,
     * a receive posted on it before the close completes in error when a message comes; its tag is
     * free to be destroyed, and a new registration may reuse its key.
     */
    @Test
    void handleOfAClosedRdmaArenaIsAClearError() throws Exception {
        VipPtag tag = Vipl.createPtag(b.nic);
        VipVi c = Vipl.createVi(a.nic, rd(a), null, null);
        VipVi s = Vipl.createVi(b.nic, rd(b), null, null);
        connect(c, s, new byte[]{'r', 'a', 'c'});
        RdmaArena own = RdmaArena.ofShared();
        MemorySegment mem = own.allocate(4096, 4096);
        VipMemHandle h = Vipl.registerMem(b.nic, mem, VipMemAttributes.of(b.ptag));
        VipMemHandle other = Vipl.registerMem(b.nic, mem, VipMemAttributes.of(tag));
        // a receive on it, posted while it is live
        assertThat(Vipl.postRecv(s, b.desc(0).sendReceive(0).addData(mem.asSlice(0, 64), h), b.descH))
                .isEqualTo(VipReturn.SUCCESS);
        own.close();
        assertThat(h.isDestroyed()).isTrue();
        assertThat(other.isDestroyed()).isTrue();
        assertThat(code(() -> Vipl.queryMem(b.nic, mem.address(), h))).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.setMemAttributes(b.nic, mem.address(), h, VipMemAttributes.of(b.ptag))).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.deregisterMem(b.nic, mem.address(), h)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.destroyPtag(b.nic, tag)).as("the closed arena's region no longer uses the tag").isEqualTo(VipReturn.SUCCESS);

        // the message reaches the receive whose region is gone: an error, nothing written anywhere
        a.data.asSlice(0, 64).fill((byte) 0x13);
        assertThat(Vipl.postSend(c, a.desc(0).sendReceive(0).addData(a.data.asSlice(0, 64), a.dataH), a.descH))
                .isEqualTo(VipReturn.SUCCESS);
        VipDescriptor got = recv(s);
        assertThat(got.status() & VipStatus.ERROR_MASK).as(VipStatus.describe(got.status())).isNotZero();
        assertThat(sent(c).status() & VipStatus.ERROR_MASK).isNotZero();
        teardown(c, s);

        // a send naming it, from host B's VI of a fresh connection: PROTECTION_ERROR at once, the peer receives nothing
        VipVi c2 = Vipl.createVi(a.nic, rd(a), null, null);
        VipVi s2 = Vipl.createVi(b.nic, rd(b), null, null);
        connect(c2, s2, new byte[]{'r', 'a', 'd'});
        assertThat(Vipl.postRecv(c2, a.desc(1).sendReceive(0).addData(a.data.asSlice(4096, 64), a.dataH), a.descH))
                .isEqualTo(VipReturn.SUCCESS);
        VipDescriptor bad = b.desc(1).sendReceive(0).addData(mem.asSlice(0, 64), h);
        assertThat(Vipl.postSend(s2, bad, b.descH)).isEqualTo(VipReturn.SUCCESS);
        VipDescriptor out = sent(s2);
        assertThat(out.status()).as(VipStatus.describe(out.status()))
                .isEqualTo(VipStatus.DONE | VipStatus.PROTECTION_ERROR | VipStatus.OP_SEND);
        VipDescriptor flushed = recv(c2);
        assertThat(flushed.status() & VipStatus.ERROR_MASK).as(VipStatus.describe(flushed.status()))
                .isEqualTo(VipStatus.DESC_FLUSHED_ERROR);
        teardown(c2, s2);

        // the key may be reused: a new registration is a valid handle
        try (RdmaArena again = RdmaArena.ofShared()) {
            MemorySegment m2 = again.allocate(4096, 4096);
            VipMemHandle h2 = Vipl.registerMem(b.nic, m2, VipMemAttributes.of(b.ptag));
            assertThat(h2.isDestroyed()).isFalse();
            assertThat(Vipl.queryMem(b.nic, m2.address(), h2).ptag()).isSameAs(b.ptag);
            assertThat(Vipl.deregisterMem(b.nic, m2.address(), h2)).isEqualTo(VipReturn.SUCCESS);
        }
    }

    /**
     * VipDisconnect, then VipDestroyVi, on one thread while VipConnectRequest runs on another, at
     * every moment of the attempt (a random delay each round, some accepted by the server, some
     * not): each call returns a code (the request SUCCESS, or INVALID_STATE when the disconnect
     * cancelled it, or an ordinary failure), nothing throws, and the VI ends Idle or destroyed.
     */
    @Test
    void disconnectAndDestroyDuringConnectRequest() throws Exception {
        List<VipReturn> outcomes = new ArrayList<>();
        for (int round = 0; round < 16; round++) {
            byte[] disc = {'r', 'c', (byte) round};
            VipVi c = Vipl.createVi(a.nic, rd(a), null, null);
            VipVi s = Vipl.createVi(b.nic, rd(b), null, null);
            boolean serve = round % 3 != 2;
            Future<VipReturn> server = pool.submit(() -> {
                if (!serve) {
                    return VipReturn.SUCCESS;
                }
                try {
                    return Vipl.connectAccept(Vipl.connectWait(b.nic, b.addr(disc), 1_500), s);
                } catch (VipException e) {
                    return e.code();
                }
            });
            Future<VipReturn> request = pool.submit(() -> Vipl.connectRequest(c, a.addr(new byte[]{1}), b.addr(disc), 3_000));
            Thread.sleep(ThreadLocalRandom.current().nextInt(0, 150));
            assertThat(Vipl.disconnect(c)).isEqualTo(VipReturn.SUCCESS);
            VipReturn destroyed = Vipl.destroyVi(c);
            VipReturn rc = await(request);
            outcomes.add(rc);
            assertThat(rc).isIn(VipReturn.SUCCESS, VipReturn.INVALID_STATE, VipReturn.INVALID_PARAMETER, VipReturn.ERROR_RESOURCE,
                    VipReturn.TIMEOUT, VipReturn.REJECT, VipReturn.NOT_REACHABLE);
            await(server);
            if (destroyed != VipReturn.SUCCESS) {
                // the request got through after the disconnect (or the disconnect found the VI Idle, before it started)
                assertThat(destroyed).isIn(VipReturn.ERROR_RESOURCE);
                assertThat(Vipl.disconnect(c)).isEqualTo(VipReturn.SUCCESS);
                drain(c);
                assertThat(Vipl.destroyVi(c)).isEqualTo(VipReturn.SUCCESS);
            } else {
                assertThat(c.isDestroyed()).isTrue();
            }
            assertThat(Vipl.disconnect(s)).isEqualTo(VipReturn.SUCCESS);
            drain(s);
            assertThat(Vipl.destroyVi(s)).isEqualTo(VipReturn.SUCCESS);
        }
        System.out.println("[vipl] connect requests racing a disconnect: " + outcomes);
        // the NIC is still healthy: a connection after all that
        VipVi c = Vipl.createVi(a.nic, rd(a), null, null);
        VipVi s = Vipl.createVi(b.nic, rd(b), null, null);
        connect(c, s, new byte[]{'r', 'c', 'x'});
        teardown(c, s);
    }

    private static void drain(VipVi vi) {
        VipDescriptor out = VipDescriptor.empty();
        while (Vipl.sendDone(vi, out) != VipReturn.NOT_DONE | Vipl.recvDone(vi, out) != VipReturn.NOT_DONE) {
            // flushed
        }
    }

    /**
     * VipCloseNic while VipConnectRequest and VipConnectAccept run on the NIC's VIs, and while a
     * VipConnectWait waits on it: every call returns (the attempts INVALID_PARAMETER or a failure,
     * the wait INVALID_PARAMETER or TIMEOUT), nothing throws anything but VipException, and the
     * other NICs are unaffected. The server's NIC listens on a port of its own (host B's address
     * and the usual port are the fixture's).
     */
    @Test
    void closeNicDuringConnectRequestAndAccept() throws Exception {
        String property = "dev.verbs4j.vipl.port";
        String saved = System.getProperty(property);
        System.setProperty(property, Integer.toString(Vipl.port() + 1));
        try {
            for (int round = 0; round < 6; round++) {
                VipNic nicA = Vipl.openNic(TestBed.hostA().device());
                VipNic nicB = Vipl.openNic(TestBed.hostB().device());
                VipPtag tagA = Vipl.createPtag(nicA);
                VipPtag tagB = Vipl.createPtag(nicB);
                VipVi c = Vipl.createVi(nicA, VipViAttributes.of(tagA), null, null);
                VipVi s = Vipl.createVi(nicB, VipViAttributes.of(tagB), null, null);
                byte[] disc = {'c', 'n', (byte) round};
                listen(nicB, b.address);
                Future<VipReturn> server = pool.submit(() -> {
                    try {
                        return Vipl.connectAccept(Vipl.connectWait(nicB, VipNetAddress.of(b.address, disc), 3_000), s);
                    } catch (VipException e) {
                        return e.code();
                    }
                });
                Future<VipReturn> request = pool.submit(() -> Vipl.connectRequest(c, VipNetAddress.of(a.address, new byte[]{1}),
                        VipNetAddress.of(b.address, disc), 3_000));
                Thread.sleep(ThreadLocalRandom.current().nextInt(0, 60));
                VipNic victim = round % 2 == 0 ? nicA : nicB;
                assertThat(Vipl.closeNic(victim)).isEqualTo(VipReturn.SUCCESS);
                VipReturn rc = await(request);
                VipReturn sc = await(server);
                System.out.println("[vipl] VipCloseNic of the " + (victim == nicA ? "client" : "server") + ": request " + rc
                        + ", accept " + sc);
                assertThat(Vipl.closeNic(victim)).isEqualTo(VipReturn.INVALID_PARAMETER);
                assertThat(Vipl.closeNic(victim == nicA ? nicB : nicA)).isEqualTo(VipReturn.SUCCESS);
                assertThat(c.isDestroyed()).isTrue();
                assertThat(s.isDestroyed()).isTrue();
            }
        } finally {
            if (saved == null) {
                System.clearProperty(property);
            } else {
                System.setProperty(property, saved);
            }
        }
        VipVi c = Vipl.createVi(a.nic, rd(a), null, null);
        VipVi s = Vipl.createVi(b.nic, rd(b), null, null);
        connect(c, s, new byte[]{'c', 'n', 'x'});
        teardown(c, s);
    }

    /**
     * VipConnectPeerRequest waiting (with an infinite timeout) for a peer that never comes:
     * VipDestroyVi cancels it, VipConnectPeerWait returns INVALID_PARAMETER at once instead of
     * waiting forever, and the attempt's thread ends.
     */
    @Test
    void destroyViCancelsAPeerRequest() throws Exception {
        VipVi lower = Vipl.createVi(a.nic, rd(a), null, null);
        // host A's address is the lower one: it waits for the peer's request
        assertThat(Vipl.connectPeerRequest(lower, a.addr(new byte[]{'p', 'x'}), b.addr(new byte[]{'p', 'y'}), Vipl.INFINITE))
                .isEqualTo(VipReturn.SUCCESS);
        Thread attemptThread = lower.peerConnect.thread;
        Thread.sleep(300);
        assertThat(Vipl.connectPeerDone(lower)).isEqualTo(VipReturn.NOT_DONE);
        Future<VipReturn> waiting = pool.submit(() -> Vipl.connectPeerWait(lower));
        Thread.sleep(100);
        assertThat(Vipl.destroyVi(lower)).isEqualTo(VipReturn.SUCCESS);
        assertThat(waiting.get(5, TimeUnit.SECONDS)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(attemptThread.join(Duration.ofSeconds(5))).as("the attempt's thread ended").isTrue();
    }

    /**
     * Several VipConnectWait calls on one address from several threads, each with its own
     * timeout: a short wait times out on time while another waits long (it does not queue behind
     * it), and the long one still gets its request.
     */
    @Test
    void concurrentConnectWaitsKeepTheirOwnDeadlines() throws Exception {
        byte[] longDisc = {'w', 'l'};
        CountDownLatch started = new CountDownLatch(1);
        Future<VipConnHandle> longWait = pool.submit(() -> {
            started.countDown();
            return Vipl.connectWait(b.nic, b.addr(longDisc), 20_000);
        });
        started.await();
        Thread.sleep(200); // the long wait now reads the listener's channel
        for (int i = 0; i < 3; i++) {
            long t0 = System.nanoTime();
            assertThat(code(() -> Vipl.connectWait(b.nic, b.addr(new byte[]{'w', 's'}), 100))).isEqualTo(VipReturn.TIMEOUT);
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertThat(ms).as("a 100 ms wait beside a 20 s one").isBetween(90L, 1_500L);
            assertThat(code(() -> Vipl.connectWait(b.nic, b.addr(new byte[]{'w', 's'}), 0))).isEqualTo(VipReturn.TIMEOUT);
        }
        VipVi c = Vipl.createVi(a.nic, rd(a), null, null);
        Future<VipReturn> request = pool.submit(() -> Vipl.connectRequest(c, a.addr(new byte[]{1}), b.addr(longDisc), WAIT));
        VipConnHandle h = await(longWait);
        assertThat(Vipl.connectReject(h)).isEqualTo(VipReturn.SUCCESS);
        assertThat(Vipl.connectReject(h)).as("consumed").isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(await(request)).isEqualTo(VipReturn.REJECT);
        assertThat(Vipl.destroyVi(c)).isEqualTo(VipReturn.SUCCESS);
    }

    /**
     * The error handler runs without the NIC's lock: a handler that waits for another thread's
     * VIPL call on the same NIC (which needs the lock) does not deadlock, and the error is
     * delivered before the call that detected it returns.
     */
    @Test
    void errorHandlerRunsWithoutTheLock() throws Exception {
        VipVi vi = Vipl.createVi(a.nic, rd(a), null, null);
        AtomicReference<String> seen = new AtomicReference<>();
        assertThat(Vipl.errorCallback(a.nic, null, (ctx, e) -> {
            Future<VipViQuery> other = pool.submit(() -> Vipl.queryVi(vi));
            try {
                seen.set(e.errorCode() + " " + other.get(5, TimeUnit.SECONDS).state());
            } catch (Exception ex) {
                seen.set("blocked: " + ex);
            }
        })).isEqualTo(VipReturn.SUCCESS);
        try {
            // a descriptor outside the region named for it: PROTECTION_ERROR and the asynchronous POST_DESC
            assertThat(Vipl.postSend(vi, a.desc(0).sendReceive(0).addData(a.data.asSlice(0, 8), a.dataH), a.dataH))
                    .isEqualTo(VipReturn.SUCCESS);
            assertThat(seen.get()).isEqualTo(VipErrorCode.POST_DESC + " " + VipViState.IDLE);
            drain(vi);
            assertThat(Vipl.destroyVi(vi)).isEqualTo(VipReturn.SUCCESS);
        } finally {
            a.collectErrors();
        }
    }
}
