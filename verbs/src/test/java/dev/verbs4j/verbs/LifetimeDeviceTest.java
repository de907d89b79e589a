package dev.verbs4j.verbs;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The lifetime model on a real device (package documentation): what a descriptor names is checked
 * and held when it is posted, inline data is copied, registered memory is deregistered before it
 * is freed, and the extended API and the event path follow the same close protocol. Each case is
 * one that reached freed memory, or hung, before the model.
 */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_1)
class LifetimeDeviceTest {

    /** Big enough to be mapped on its own: freed, it is unmapped, and a read of it faults. */
    private static final long MAPPED = 1 << 20;

    @Test
    void inlineDataIsCopiedWhenSetSoItsMemoryMayGoAway() {
        try (QpPair p = QpPair.connected(TestBed.loopback(), TestBed.loopback(), QpType.RC, init -> init.maxInlineData(64));
             SendRequests sends = new SendRequests(1, 1);
             ReceiveRequests recvs = new ReceiveRequests(1, 1)) {
            recvs.get(0).wrId(7).sge(p.mrB, 0, 64);
            p.b.postReceive(recvs, 1);
            Arena arena = Arena.ofConfined();
            MemorySegment data = arena.allocate(MAPPED);
            data.asSlice(0, 48).fill((byte) 'i');
            sends.reset(0).wrId(8).opcode(Opcode.SEND).flags(SendFlags.SIGNALED).inline(data.asSlice(0, 48));
            arena.close();
            p.a.postSend(sends, 1);
            p.awaitSuccess(p.cqA, WcOpcode.SEND);
            assertThat(p.awaitSuccess(p.cqB, WcOpcode.RECV).byteLength()).isEqualTo(48);
            assertThat(RcDataPathDeviceTest.count(p.mrB.segment(), 0, 48, (byte) 'i')).isEqualTo(48);
        }
    }

    @Test
    void aClosedAddressHandleIsRefusedAtThePostAndAUdSendNeedsOne() {
        try (QpPair p = QpPair.unconnected(TestBed.hostA(), TestBed.hostB(), QpType.UD, init -> { });
             SendRequests sends = new SendRequests(2, 1)) {
            for (QueuePair qp : new QueuePair[]{p.a, p.b}) {
                qp.init(1);
                qp.readyToReceive();
                qp.readyToSend(0);
            }
            QueuePairEndpoint eb = p.b.localEndpoint(p.gidB, 0);
            AddressHandle ah = p.pdA.createAddressHandle(AddressVector.global(1, eb.gid(), p.gidA));
            sends.reset(0).wrId(1).opcode(Opcode.SEND).flags(SendFlags.SIGNALED).sge(p.mrA, 0, 64)
                    .ud(ah, eb.qpn(), QueuePair.DEFAULT_QKEY);
            ah.close();
            assertThatThrownBy(() -> p.a.postSend(sends, 1)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("work request 0 of 1").hasMessageContaining("AddressHandle");
            assertThatThrownBy(() -> sends.reset(1).ud(ah, eb.qpn(), 0)).isInstanceOf(IllegalStateException.class);

            sends.reset(0).wrId(2).opcode(Opcode.SEND).flags(SendFlags.SIGNALED).sge(p.mrA, 0, 64);
            assertThatThrownBy(() -> p.a.postSend(sends, 1)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("no destination");
            // the queue pair still works
            try (AddressHandle live = p.pdA.createAddressHandle(AddressVector.global(1, eb.gid(), p.gidA))) {
                sends.reset(0).wrId(3).opcode(Opcode.SEND).flags(SendFlags.SIGNALED).sge(p.mrA, 0, 64)
                        .ud(live, eb.qpn(), QueuePair.DEFAULT_QKEY);
                p.a.postSend(sends, 1);
                assertThat(p.awaitOne(p.cqA).wrId()).isEqualTo(3);
            }
        }
    }

    @Test
    void aRegionClosedBetweenFillAndPostIsRefused() {
        try (QpPair p = QpPair.connected(TestBed.loopback(), TestBed.loopback(), QpType.RC);
             SendRequests sends = new SendRequests(2, 2);
             ReceiveRequests recvs = new ReceiveRequests(1, 1)) {
            MemoryRegion extra = p.pdA.allocateRegion(4096, QpPair.ACCESS);
            sends.reset(0).wrId(1).opcode(Opcode.RDMA_WRITE).flags(SendFlags.SIGNALED).sge(p.mrA, 0, 8)
                    .rdma(p.mrB.remoteAddress(), p.mrB.rkey());
            sends.reset(1).wrId(2).opcode(Opcode.RDMA_WRITE).flags(SendFlags.SIGNALED).sge(0, p.mrA, 0, 8)
                    .sge(1, extra, 0, 8).rdma(p.mrB.remoteAddress(), p.mrB.rkey());
            recvs.get(0).wrId(3).sge(extra, 0, 64);
            extra.close();
            assertThatThrownBy(() -> p.a.postSend(sends, 2)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("work request 1 of 2").hasMessageContaining("MemoryRegion");
            assertThatThrownBy(() -> p.a.postReceive(recvs, 1)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("receive request 0 of 1");
            assertThatThrownBy(() -> sends.get(0).sge(extra, 0, 8)).isInstanceOf(IllegalStateException.class);
            // the first request alone still goes through
            p.a.postSend(sends, 1);
            assertThat(p.awaitOne(p.cqA).status()).isEqualTo(WcStatus.SUCCESS);
        }
    }

    @Test
    void aRegionClosedWhileItsRequestIsOutstandingEndsInAnErrorCompletion() {
        try (QpPair p = QpPair.connected(TestBed.hostA(), TestBed.hostB(), QpType.RC);
             ReceiveRequests recvs = new ReceiveRequests(1, 1);
             SendRequests sends = new SendRequests(1, 1)) {
            MemoryRegion landing = p.pdB.allocateRegion(4096, Access.LOCAL_WRITE);
            recvs.get(0).wrId(5).sge(landing, 0, 4096);
            p.b.postReceive(recvs, 1);
            landing.close();
            sends.reset(0).wrId(6).opcode(Opcode.SEND).flags(SendFlags.SIGNALED).sge(p.mrA, 0, 256);
            p.a.postSend(sends, 1);
            WorkCompletion atReceiver = p.awaitOne(p.cqB);
            assertThat(atReceiver.wrId()).isEqualTo(5);
            assertThat(atReceiver.status()).isNotEqualTo(WcStatus.SUCCESS);
        }
    }

    @Test
    void aClosedWindowOrRegionIsRefusedInABindRequest() {
        try (QpPair p = QpPair.connected(TestBed.loopback(), TestBed.loopback(), QpType.RC);
             SendRequests sends = new SendRequests(1, 1)) {
            MemoryRegion target = p.pdB.allocateRegion(8192, QpPair.ACCESS | Access.MW_BIND);
            MemoryWindow mw = p.pdB.allocateMemoryWindow(MemoryWindow.Type.TYPE_2);
            int rkey = MemoryWindow.nextRkey(mw.rkey());
            sends.reset(0).wrId(1).flags(SendFlags.SIGNALED).bindMemoryWindow(mw, rkey, target, 0, 4096, Access.REMOTE_WRITE);
            mw.close();
            assertThatThrownBy(() -> p.b.postSend(sends, 1)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("MemoryWindow");
            MemoryWindow second = p.pdB.allocateMemoryWindow(MemoryWindow.Type.TYPE_2);
            sends.reset(0).wrId(2).flags(SendFlags.SIGNALED)
                    .bindMemoryWindow(second, MemoryWindow.nextRkey(second.rkey()), target, 0, 4096, Access.REMOTE_WRITE);
            target.close();
            assertThatThrownBy(() -> p.b.postSend(sends, 1)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("MemoryRegion");
            assertThatThrownBy(() -> sends.reset(0).opcode(Opcode.BIND_MW)).isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void aBoundWindowClosesBeforeItsRegion() {
        try (QpPair p = QpPair.connected(TestBed.loopback(), TestBed.loopback(), QpType.RC);
             SendRequests sends = new SendRequests(1, 1)) {
            MemoryWindow mw = p.pdB.allocateMemoryWindow(MemoryWindow.Type.TYPE_2);
            MemoryRegion target = p.pdB.allocateRegion(8192, QpPair.ACCESS | Access.MW_BIND);
            sends.reset(0).wrId(1).flags(SendFlags.SIGNALED)
                    .bindMemoryWindow(mw, MemoryWindow.nextRkey(mw.rkey()), target, 0, 4096, Access.REMOTE_WRITE);
            p.b.postSend(sends, 1);
            p.awaitSuccess(p.cqB, WcOpcode.BIND_MW);
            target.close(); // the provider refuses to deregister a region with a bound window
            assertThat(mw.isClosed()).isTrue();
            assertThat(target.isClosed()).isTrue();
        }
    }

    @Test
    void theExtendedQueuePairRefusesUseAfterCloseAndMisorderedCalls() {
        try (Context ctx = Context.open(TestBed.loopback().device())) {
            ProtectionDomain pd = ctx.allocateProtectionDomain();
            CompletionQueue cq = ctx.createCompletionQueue(16);
            QueuePair qp = pd.createQueuePair(QueuePairInit.of(QpType.RC, cq).sendOps(SendOps.SEND));
            ExtendedQueuePair x = qp.extended();
            assertThatThrownBy(() -> x.wrId(1)).isInstanceOf(IllegalStateException.class).hasMessageContaining("start()");
            assertThatThrownBy(x::send).isInstanceOf(IllegalStateException.class).hasMessageContaining("start()");
            assertThatThrownBy(x::complete).isInstanceOf(IllegalStateException.class);
            x.start();
            assertThatThrownBy(x::start).isInstanceOf(IllegalStateException.class).hasMessageContaining("again");
            try (SendRequests sends = new SendRequests(1, 1)) {
                assertThatThrownBy(() -> qp.postSend(sends, 1)).isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("complete()");
            }
            AtomicReference<Throwable> other = new AtomicReference<>();
            Thread t = Thread.ofPlatform().start(() -> {
                try {
                    x.wrId(5);
                } catch (Throwable e) {
                    other.set(e);
                }
            });
            join(t);
            assertThat(other.get()).isInstanceOf(IllegalStateException.class).hasMessageContaining("another thread");
            x.abort();
            qp.close();
            assertThatThrownBy(x::start).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
            assertThatThrownBy(() -> x.flags(0)).isInstanceOf(IllegalStateException.class);
        }
    }

    @Test
    void extendedPollerReadersRacingACloseNeverReachFreedMemory() throws Exception {
        for (int round = 0; round < 20; round++) {
            try (Context ctx = Context.open(TestBed.loopback().device())) {
                CompletionQueue cq = ctx.createExtendedCompletionQueue(16, null, 0, ExtendedPoller.STANDARD);
                ExtendedPoller poller = cq.extended();
                AtomicBoolean stop = new AtomicBoolean();
                AtomicReference<Throwable> unexpected = new AtomicReference<>();
                Thread reader = Thread.ofPlatform().start(() -> {
                    while (!stop.get()) {
                        try {
                            if (poller.start()) {
                                poller.wrId();
                                poller.end();
                            }
                        } catch (IllegalStateException e) {
                            return; // closed
                        } catch (Throwable e) {
                            unexpected.set(e);
                            return;
                        }
                    }
                });
                Thread.sleep(round % 5);
                cq.close();
                stop.set(true);
                join(reader);
                assertThat(unexpected.get()).isNull();
                assertThatThrownBy(poller::start).isInstanceOf(IllegalStateException.class);
            }
        }
    }

    @Test
    void memoryOfAnotherArenaIsNotRegisteredAndAnRdmaArenaDeregistersBeforeFreeing() {
        try (QpPair p = QpPair.connected(TestBed.hostA(), TestBed.hostB(), QpType.RC);
             SendRequests sends = new SendRequests(1, 1);
             Arena plain = Arena.ofShared()) {
            assertThatThrownBy(() -> p.pdB.register(plain.allocate(4096), Access.LOCAL_WRITE))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("RdmaArena").hasMessageContaining("registerUnchecked");
            assertThatThrownBy(() -> p.pdB.register(Arena.ofAuto().allocate(4096), Access.LOCAL_WRITE))
                    .isInstanceOf(IllegalArgumentException.class);
            try (MemoryRegion unchecked = p.pdB.registerUnchecked(plain.allocate(4096), Access.LOCAL_WRITE)) {
                assertThat(unchecked.lkey()).isNotZero();
            }

            RdmaArena arena = RdmaArena.ofShared();
            MemorySegment memory = arena.allocate(MAPPED, 4096);
            MemoryRegion mr = p.pdB.register(memory, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
            RcDataPathDeviceTest.fill(p.mrA.segment(), 0, 64, (byte) 'a');
            sends.reset(0).wrId(1).opcode(Opcode.RDMA_WRITE).flags(SendFlags.SIGNALED).sge(p.mrA, 0, 64)
                    .rdma(mr.remoteAddress(), mr.rkey());
            p.a.postSend(sends, 1);
            assertThat(p.awaitOne(p.cqA).status()).isEqualTo(WcStatus.SUCCESS);
            assertThat(memory.get(ValueLayout.JAVA_BYTE, 63)).isEqualTo((byte) 'a');

            arena.close();
            assertThat(mr.isClosed()).isTrue();
            assertThat(memory.scope().isAlive()).isFalse();
            // the peer's next write with the old key is refused by the device, not written anywhere
            p.a.postSend(sends, 1);
            assertThat(p.awaitOne(p.cqA).status()).isEqualTo(WcStatus.REM_ACCESS_ERR);
            assertThatThrownBy(() -> p.pdB.register(memory, Access.LOCAL_WRITE)).isInstanceOf(IllegalStateException.class);
        }
    }

    @Test
    void closingACompletionQueueWhileAnotherThreadTakesItsEventsDoesNotHang() throws Exception {
        for (int round = 0; round < 10; round++) {
            try (QpPair p = QpPair.connected(TestBed.loopback(), TestBed.loopback(), QpType.RC);
                 SendRequests sends = new SendRequests(1, 1)) {
                CompletionChannel channel = p.ctxA.createCompletionChannel();
                CompletionQueue cq = p.ctxA.createCompletionQueue(64, channel, 0);
                QueuePair qp = p.pdA.createQueuePair(QueuePairInit.of(QpType.RC, cq).maxSendWr(32));
                QueuePair peer = p.pdB.createQueuePair(QueuePairInit.of(QpType.RC, p.cqB));
                qp.connect(1, peer.localEndpoint(p.gidB, 0), p.gidA, 0);
                peer.connect(1, qp.localEndpoint(p.gidA, 0), p.gidB, 0);
                AtomicBoolean stop = new AtomicBoolean();
                Thread taker = Thread.ofPlatform().start(() -> {
                    while (!stop.get()) {
                        try {
                            channel.tryGetEvent();
                        } catch (IllegalStateException e) {
                            return;
                        }
                    }
                });
                for (int i = 0; i < 8; i++) {
                    cq.requestNotify(false);
                    sends.reset(0).wrId(i).opcode(Opcode.RDMA_WRITE).flags(SendFlags.SIGNALED).sge(p.mrA, 0, 8)
                            .rdma(p.mrB.remoteAddress(), p.mrB.rkey());
                    qp.postSend(sends, 1);
                    p.awaitOne(cq);
                }
                CompletableFuture<Void> closed = CompletableFuture.runAsync(cq::close);
                closed.get(20, TimeUnit.SECONDS);
                stop.set(true);
                join(taker);
                assertThat(cq.isClosed()).isTrue();
                assertThat(qp.isClosed()).isTrue();
            }
        }
    }

    private static void join(Thread t) {
        try {
            assertThat(t.join(Duration.ofSeconds(20))).as("thread ended").isTrue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
