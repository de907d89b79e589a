package dev.verbs4j.verbs;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Misuse ends in an exception that says what was wrong, never in a crash. */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_1)
class MisuseDeviceTest {

    @Test
    void scatterGatherMistakesAreCaughtBeforePosting() {
        try (QpPair p = QpPair.connected(TestBed.loopback(), TestBed.loopback(), QpType.RC);
             SendRequests sends = new SendRequests(2, 2)) {
            assertThatThrownBy(() -> sends.reset(0).sge(p.mrA, QpPair.REGION - 10, 20))
                    .isInstanceOf(IndexOutOfBoundsException.class).hasMessageContaining("outside the memory region");
            assertThatThrownBy(() -> sends.reset(0).sge(p.mrA, -1, 20)).isInstanceOf(IndexOutOfBoundsException.class);
            assertThatThrownBy(() -> sends.reset(0).sge(2, p.mrA, 0, 20))
                    .isInstanceOf(IndexOutOfBoundsException.class).hasMessageContaining("2 per request");
            assertThatThrownBy(() -> p.a.postSend(sends, 3)).isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void inlineLargerThanTheQueueAllowsNamesTheRequest() {
        try (QpPair p = QpPair.connected(TestBed.loopback(), TestBed.loopback(), QpType.RC, init -> init.maxInlineData(32));
             SendRequests sends = new SendRequests(2, 1);
             Arena arena = Arena.ofConfined()) {
            MemorySegment big = arena.allocate(p.a.maxInlineData() + 1024);
            sends.reset(0).opcode(Opcode.SEND).sge(p.mrA, 0, 8);
            sends.reset(1).opcode(Opcode.SEND).flags(SendFlags.SIGNALED).inline(big);
            assertThatThrownBy(() -> p.a.postSend(sends, 2))
                    .isInstanceOf(VerbsException.class)
                    .hasMessageContaining("ibv_post_send")
                    .hasMessageContaining("work request 1 of 2")
                    .hasMessageContaining("max_inline_data " + p.a.maxInlineData());
        }
    }

    @Test
    void postingInTheWrongStateIsAnException() {
        try (QpPair p = QpPair.unconnected(TestBed.loopback(), TestBed.loopback(), QpType.RC, init -> { });
             SendRequests sends = new SendRequests(1, 1)) {
            sends.reset(0).opcode(Opcode.SEND).sge(p.mrA, 0, 8);
            assertThatThrownBy(() -> p.a.postSend(sends, 1))
                    .isInstanceOf(VerbsException.class).hasMessageContaining("state RESET");
            assertThatThrownBy(() -> p.a.readyToSend(0)).isInstanceOf(VerbsException.class)
                    .hasMessageContaining("ibv_modify_qp").hasMessageContaining("RESET -> RTS");
        }
    }

    @Test
    void closedObjectsAndClosedMemoryAreRefused() {
        QpPair p = QpPair.connected(TestBed.loopback(), TestBed.loopback(), QpType.RC);
        try (SendRequests sends = new SendRequests(1, 1)) {
            // memory an ordinary arena can free under the region is refused; registerUnchecked takes it
            try (Arena confined = Arena.ofConfined()) {
                MemorySegment plain = confined.allocate(4096);
                assertThatThrownBy(() -> p.pdA.register(plain, Access.LOCAL_WRITE)).isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("RdmaArena").hasMessageContaining("registerUnchecked");
                p.pdA.registerUnchecked(plain, Access.LOCAL_WRITE).close();
            }
            // closing an RdmaArena closes the regions over it; they and its memory are refused after
            RdmaArena arena = RdmaArena.ofShared();
            MemorySegment seg = arena.allocate(4096);
            MemoryRegion mr = p.pdA.register(seg, Access.LOCAL_WRITE);
            arena.close();
            assertThat(mr.isClosed()).isTrue();
            assertThatThrownBy(() -> sends.reset(0).sge(mr, 0, 8)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("is closed");
            assertThatThrownBy(() -> p.pdA.register(seg, Access.LOCAL_WRITE)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("closed");
            assertThatThrownBy(() -> p.pdA.register(MemorySegment.ofArray(new byte[16]), 0))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("heap");
            mr.close(); // idempotent

            sends.reset(0).opcode(Opcode.SEND).sge(p.mrA, 0, 8);
            p.close();
            assertThat(p.a.isClosed()).isTrue();
            assertThat(p.mrA.isClosed()).isTrue();
            assertThatThrownBy(() -> p.a.postSend(sends, 1)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("is closed");
            assertThatThrownBy(() -> p.cqA.poll(p.wcs)).isInstanceOf(IllegalStateException.class);
            assertThatThrownBy(() -> p.pdA.allocateRegion(64, 0)).isInstanceOf(IllegalStateException.class);
        }
    }

    @Test
    void closingWhileOtherThreadsPostAndPollEndsTheirLoopsCleanly() throws Exception {
        for (int round = 0; round < 20; round++) {
            QpPair p = QpPair.connected(TestBed.loopback(), TestBed.loopback(), QpType.RC);
            java.util.concurrent.CountDownLatch running = new java.util.concurrent.CountDownLatch(2);
            java.util.concurrent.CompletableFuture<Throwable> poster = new java.util.concurrent.CompletableFuture<>();
            java.util.concurrent.CompletableFuture<Throwable> poller = new java.util.concurrent.CompletableFuture<>();
            Thread.ofPlatform().start(() -> {
                try (SendRequests sends = new SendRequests(1, 1)) {
                    sends.reset(0).opcode(Opcode.RDMA_WRITE).sge(p.mrA, 0, 8).rdma(p.mrB.address(), p.mrB.rkey());
                    running.countDown();
                    while (true) {
                        try {
                            p.a.postSend(sends, 1);
                        } catch (VerbsException full) {
                            Thread.onSpinWait(); // send queue full of unsignaled writes: keep trying
                        }
                    }
                } catch (Throwable e) {
                    poster.complete(e);
                }
            });
            Thread.ofPlatform().start(() -> {
                try (WorkCompletions wcs = new WorkCompletions(4)) {
                    running.countDown();
                    while (true) {
                        p.cqA.poll(wcs);
                    }
                } catch (Throwable e) {
                    poller.complete(e);
                }
            });
            running.await();
            Thread.sleep(round % 5);
            p.close();
            assertThat(poster.get(20, java.util.concurrent.TimeUnit.SECONDS)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("closed");
            assertThat(poller.get(20, java.util.concurrent.TimeUnit.SECONDS)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("closed");
        }
    }
}
