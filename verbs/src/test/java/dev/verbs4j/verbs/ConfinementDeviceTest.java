package dev.verbs4j.verbs;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.ValueLayout;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Queue pairs and completion queues confined to one thread ({@link QueuePair#confine()}, {@link
 * CompletionQueue#confine()}) on Soft-RoCE: the confining thread's uncounted data path moves data,
 * other threads still post and poll, and only the confining thread may close them or what would
 * close them.
 */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_1)
@Timeout(120)
class ConfinementDeviceTest {

    private static Throwable onOtherThread(Runnable body) throws Exception {
        CompletableFuture<Throwable> thrown = new CompletableFuture<>();
        Thread.ofPlatform().start(() -> {
            try {
                body.run();
                thrown.complete(null);
            } catch (Throwable t) {
                thrown.complete(t);
            }
        });
        return thrown.get(30, TimeUnit.SECONDS);
    }

    @Test
    void theConfinedDataPathMovesDataAndForeignClosesAreRefusedUntilTheOwnerCloses() throws Exception {
        QpPair p = QpPair.connected(TestBed.hostA(), TestBed.hostB(), QpType.RC);
        try (SendRequests sends = SendRequests.confined(8, 1);
             ReceiveRequests recvs = ReceiveRequests.confined(8, 1);
             WorkCompletions wcs = WorkCompletions.confined(8)) {
            p.a.confine();
            p.cqA.confine();
            p.b.confine();
            p.cqB.confine();
            for (int round = 0; round < 50; round++) {
                for (int i = 0; i < 8; i++) {
                    recvs.reset(i).wrId(1000 + i).sge(p.mrB, i * 64L, 64);
                    p.mrA.segment().set(ValueLayout.JAVA_INT, i * 64L, round * 8 + i);
                    sends.reset(i).wrId(i).opcode(Opcode.SEND).flags(SendFlags.SIGNALED).sge(p.mrA, i * 64L, 64);
                }
                p.b.postReceive(recvs, 8);
                p.a.postSend(sends, 8);
                int sent = 0, received = 0;
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while ((sent < 8 || received < 8) && System.nanoTime() < deadline) {
                    int n = p.cqA.poll(wcs);
                    for (int j = 0; j < n; j++) {
                        assertThat(wcs.get(j).status()).isEqualTo(WcStatus.SUCCESS);
                    }
                    sent += n;
                    n = p.cqB.poll(wcs);
                    for (int j = 0; j < n; j++) {
                        WorkCompletion wc = wcs.get(j);
                        assertThat(wc.status()).isEqualTo(WcStatus.SUCCESS);
                        int slot = (int) (wc.wrId() - 1000);
                        assertThat(p.mrB.segment().get(ValueLayout.JAVA_INT, slot * 64L))
                                .isEqualTo(round * 8 + slot);
                    }
                    received += n;
                }
                assertThat(sent).as("send completions of round %d", round).isEqualTo(8);
                assertThat(received).as("receive completions of round %d", round).isEqualTo(8);
            }

            // another thread still posts and polls (counted), with descriptors of its own
            assertThat(onOtherThread(() -> {
                try (SendRequests own = new SendRequests(1, 1); WorkCompletions ownWcs = new WorkCompletions(1)) {
                    own.reset(0).wrId(77).opcode(Opcode.RDMA_WRITE).flags(SendFlags.SIGNALED).sge(p.mrA, 0, 64)
                            .rdma(p.mrB.remoteAddress(), p.mrB.rkey());
                    p.a.postSend(own, 1);
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                    int n = 0;
                    while (n == 0 && System.nanoTime() < deadline) {
                        n = p.cqA.poll(ownWcs);
                    }
                    assertThat(n).isEqualTo(1);
                    assertThat(ownWcs.get(0).wrId()).isEqualTo(77);
                }
            })).isNull();

            // nobody else closes them, nor what would close them
            for (NativeResource r : new NativeResource[]{p.a, p.cqA, p.pdA, p.ctxA, p.b, p.cqB, p.pdB, p.ctxB}) {
                assertThat(onOtherThread(r::close)).as("close of %s from another thread", r)
                        .isInstanceOf(IllegalStateException.class).hasMessageContaining("confined to");
                assertThat(r.isClosed()).isFalse();
            }
            assertThat(onOtherThread(() -> p.a.confine())).isInstanceOf(IllegalStateException.class);

            // the owner closes the queue pairs and queues; then anybody may close the rest
            p.a.close();
            p.b.close();
            p.cqA.close();
            p.cqB.close();
            assertThat(onOtherThread(p.ctxA::close)).isNull();
            assertThat(onOtherThread(p.ctxB::close)).isNull();
            assertThat(p.ctxA.isClosed()).isTrue();
            assertThat(p.ctxB.isClosed()).isTrue();
        } finally {
            p.close();
        }
    }

    @Test
    void theConfiningThreadClosesItsContextWithEverythingInIt() throws Exception {
        QpPair p = QpPair.connected(TestBed.loopback(), TestBed.loopback(), QpType.RC);
        p.a.confine();
        p.cqA.confine();
        p.close();
        assertThat(p.a.isClosed()).isTrue();
        assertThat(p.cqA.isClosed()).isTrue();
        try (SendRequests sends = SendRequests.confined(1, 1)) {
            assertThatThrownBy(() -> p.a.postSend(sends, 1))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
        }
    }
}
