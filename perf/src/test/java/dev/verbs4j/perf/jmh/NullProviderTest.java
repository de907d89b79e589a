package dev.verbs4j.perf.jmh;

import dev.verbs4j.verbs.Errno;
import dev.verbs4j.verbs.ExtendedQueuePair;
import dev.verbs4j.verbs.MemoryRegion;
import dev.verbs4j.verbs.Opcode;
import dev.verbs4j.verbs.QpState;
import dev.verbs4j.verbs.QpType;
import dev.verbs4j.verbs.ReceiveRequests;
import dev.verbs4j.verbs.SendFlags;
import dev.verbs4j.verbs.SendRequest;
import dev.verbs4j.verbs.SendRequests;
import dev.verbs4j.verbs.VerbsException;
import dev.verbs4j.verbs.WcOpcode;
import dev.verbs4j.verbs.WorkCompletion;
import dev.verbs4j.verbs.WorkCompletions;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The benchmarks' null provider (built with gcc from src/jmh/c at test time) driven through the
 * verbs layer's ordinary data path: what the Java side posts and polls is what the C functions
 * counted. This tests the binding path into a provider's ops table, not RDMA.
 */
class NullProviderTest {

    @Test
    void postsAndPollsThroughTheProvidersFunctions() {
        try (NullProvider np = NullProvider.open();
             SendRequests sends = new SendRequests(8, 1);
             WorkCompletions wcs = new WorkCompletions(16)) {
            assertThat(np.queuePair().type()).isEqualTo(QpType.RC);
            assertThat(np.queuePair().state()).isEqualTo(QpState.RTS);
            assertThat(np.queuePair().qpNum()).isEqualTo(NullProvider.QP_NUM);
            assertThat(np.memoryRegion().lkey()).isEqualTo(NullProvider.LKEY);
            assertThat(np.memoryRegion().length()).isEqualTo(4096);

            int n = 1000;
            long next = 0;
            long polled = 0;
            for (int round = 0; round < n / 8; round++) {
                for (int i = 0; i < 8; i++) {
                    sends.reset(i).wrId(next++).opcode(Opcode.SEND).flags(SendFlags.SIGNALED)
                            .sge(np.memoryRegion(), 64L * i, 64 + i);
                }
                np.queuePair().postSend(sends, 8);   // one chain of eight
                int got;
                while ((got = np.completionQueue().poll(wcs)) > 0) {
                    for (int k = 0; k < got; k++) {
                        WorkCompletion wc = wcs.get(k);
                        assertThat(wc.isSuccess()).isTrue();
                        assertThat(wc.wrId()).isEqualTo(polled);
                        assertThat(wc.opcode()).isEqualTo(WcOpcode.SEND);
                        assertThat(wc.byteLength()).isEqualTo(64 + (int) (polled % 8));
                        assertThat(wc.qpNum()).isEqualTo(NullProvider.QP_NUM);
                        polled++;
                    }
                }
            }
            assertThat(polled).isEqualTo(n);
            assertThat(np.posted()).isEqualTo(n);
            assertThat(np.polled()).isEqualTo(n);
        }
    }

    @Test
    void aRefusedPostNamesTheWorkRequestAndErrno() {
        try (NullProvider np = NullProvider.open();
             SendRequests sends = new SendRequests(1, 1)) {
            SendRequest wr = sends.reset(0).opcode(Opcode.SEND).flags(SendFlags.SIGNALED).sge(np.memoryRegion(), 0, 8);
            for (int i = 0; i < NullProvider.DEPTH; i++) {
                wr.wrId(i);
                np.queuePair().postSend(sends, 1);
            }
            assertThatThrownBy(() -> np.queuePair().postSend(sends, 1))
                    .isInstanceOfSatisfying(VerbsException.class, e -> {
                        assertThat(e.verb()).isEqualTo("ibv_post_send");
                        assertThat(e.errno()).isEqualTo(Errno.ENOMEM);
                        assertThat(e.getMessage()).contains("work request 0 of 1");
                    });
            assertThat(np.posted()).isEqualTo(NullProvider.DEPTH);
        }
    }

    @Test
    void closingBorrowedObjectsLeavesTheNativeOnesAlone() {
        NullProvider first = NullProvider.open();
        first.close();
        assertThat(first.queuePair().isClosed()).isTrue();
        try (WorkCompletions wcs = new WorkCompletions(1)) {
            assertThatThrownBy(() -> first.completionQueue().poll(wcs)).isInstanceOf(IllegalStateException.class);
        }
        // the C objects were not destroyed: a second wrapper works on them
        try (NullProvider second = NullProvider.open();
             SendRequests sends = new SendRequests(1, 1);
             WorkCompletions wcs = new WorkCompletions(1)) {
            sends.reset(0).wrId(7).opcode(Opcode.SEND).flags(SendFlags.SIGNALED).sge(second.memoryRegion(), 0, 8);
            second.queuePair().postSend(sends, 1);
            assertThat(second.completionQueue().poll(wcs)).isEqualTo(1);
            assertThat(wcs.get(0).wrId()).isEqualTo(7);
        }
    }

    @Test
    void aRegionClosedAfterAPostIsRefusedAtTheNextPostOfTheSameBatch() {
        try (NullProvider np = NullProvider.open();
             SendRequests sends = SendRequests.confined(8, 1);
             ReceiveRequests receives = ReceiveRequests.confined(8, 1);
             WorkCompletions wcs = new WorkCompletions(8)) {
            MemoryRegion mr = np.memoryRegion();
            for (int i = 0; i < 8; i++) {
                sends.reset(i).wrId(i).opcode(Opcode.SEND).flags(SendFlags.SIGNALED).sge(mr, 0, 8);
                receives.reset(i).wrId(i).sge(mr, 8, 8);
            }
            // checked once: later posts of the unchanged batch skip the per-request check ...
            for (int round = 0; round < 3; round++) {
                np.queuePair().postSend(sends, 8);
                np.queuePair().postReceive(receives, 8);
                assertThat(np.completionQueue().poll(wcs)).isEqualTo(8);
            }
            // ... until a region closes anywhere: then every request is checked again
            mr.close();
            long posted = np.posted();
            long received = np.received();
            assertThatThrownBy(() -> np.queuePair().postSend(sends, 8))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("work request 0 of 8 names MemoryRegion");
            assertThatThrownBy(() -> np.queuePair().postReceive(receives, 4))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("receive request 0 of 4 names MemoryRegion");
            assertThat(np.posted()).isEqualTo(posted);
            assertThat(np.received()).isEqualTo(received);
        }
    }

    @Test
    void aClosedSharedBatchOrCompletionArrayIsRefusedAndNeverReachesTheProvider() {
        try (NullProvider np = NullProvider.open()) {
            SendRequests sends = new SendRequests(4, 1);
            ReceiveRequests receives = new ReceiveRequests(4, 1);
            WorkCompletions wcs = new WorkCompletions(4);
            for (int i = 0; i < 4; i++) {
                sends.reset(i).wrId(i).opcode(Opcode.SEND).flags(SendFlags.SIGNALED).sge(np.memoryRegion(), 0, 8);
                receives.reset(i).wrId(i).sge(np.memoryRegion(), 8, 8);
            }
            np.queuePair().postSend(sends, 4);
            assertThat(np.completionQueue().poll(wcs)).isEqualTo(4);
            sends.close();
            receives.close();
            wcs.close();
            long posted = np.posted();
            long polled = np.polled();
            assertThatThrownBy(() -> np.queuePair().postSend(sends, 4))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("SendRequests is closed");
            assertThatThrownBy(() -> np.queuePair().postReceive(receives, 1))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("ReceiveRequests is closed");
            assertThatThrownBy(() -> np.completionQueue().poll(wcs))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("WorkCompletions is closed");
            assertThat(np.posted()).isEqualTo(posted);
            assertThat(np.polled()).isEqualTo(polled);
        }
    }

    @Test
    void concurrentPollsIntoOneSharedArrayWhileItClosesEndInExceptionsOnly() throws Exception {
        try (NullProvider np = NullProvider.open()) {
            for (int round = 0; round < 20; round++) {
                WorkCompletions wcs = new WorkCompletions(8);
                java.util.concurrent.atomic.AtomicLong polls = new java.util.concurrent.atomic.AtomicLong();
                java.util.concurrent.atomic.AtomicReference<Throwable> unexpected = new java.util.concurrent.atomic.AtomicReference<>();
                Runnable poller = () -> {
                    try {
                        while (true) {
                            np.completionQueue().poll(wcs);
                            polls.incrementAndGet();
                        }
                    } catch (IllegalStateException e) {
                        // the array closed under the loop
                    } catch (Throwable t) {
                        unexpected.set(t);
                    }
                };
                Thread a = Thread.ofPlatform().start(poller);
                Thread b = Thread.ofPlatform().start(poller);
                while (polls.get() < 1000) {
                    Thread.onSpinWait();
                }
                // a close while a poll fills the array is refused; one of the retries lands between polls
                while (true) {
                    try {
                        wcs.close();
                        break;
                    } catch (IllegalStateException e) {
                        assertThat(e).hasMessageContaining("WorkCompletions is being filled by a poll");
                    }
                }
                a.join(10_000);
                b.join(10_000);
                assertThat(a.isAlive() || b.isAlive()).isFalse();
                assertThat(unexpected.get()).isNull();
            }
        }
    }

    @Test
    void theExtendedQueuePairPostsThroughTheProvidersWrFunctions() {
        try (NullProvider np = NullProvider.open();
             WorkCompletions wcs = new WorkCompletions(32)) {
            ExtendedQueuePair x = np.extendedQueuePair().extended();
            x.start();
            for (int i = 0; i < 32; i++) {
                x.wrId(100 + i).flags(i % 2 == 0 ? SendFlags.SIGNALED : 0).send().setSge(np.memoryRegion(), 0, 16 + i);
            }
            // nothing is pollable before ibv_wr_complete()
            assertThat(np.completionQueue().poll(wcs)).isZero();
            x.complete();
            assertThat(np.completionQueue().poll(wcs)).isEqualTo(16);
            for (int k = 0; k < 16; k++) {
                assertThat(wcs.get(k).wrId()).isEqualTo(100 + 2 * k);
                assertThat(wcs.get(k).byteLength()).isEqualTo(16 + 2 * k);
            }
            assertThat(np.posted()).isEqualTo(32);
            // a region outside the registered range is refused before the provider sees it
            x.start();
            assertThatThrownBy(() -> x.wrId(1).flags(0).send().setSge(np.memoryRegion(), 4090, 64))
                    .isInstanceOf(IndexOutOfBoundsException.class);
            x.abort();
        }
    }
}
