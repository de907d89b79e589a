package dev.verbs4j.verbs.event;

import dev.verbs4j.verbs.Access;
import dev.verbs4j.verbs.CompletionChannel;
import dev.verbs4j.verbs.CompletionQueue;
import dev.verbs4j.verbs.Context;
import dev.verbs4j.verbs.MemoryRegion;
import dev.verbs4j.verbs.Opcode;
import dev.verbs4j.verbs.ProtectionDomain;
import dev.verbs4j.verbs.QpType;
import dev.verbs4j.verbs.QueuePair;
import dev.verbs4j.verbs.QueuePairInit;
import dev.verbs4j.verbs.ReceiveRequests;
import dev.verbs4j.verbs.SendFlags;
import dev.verbs4j.verbs.SendRequests;
import dev.verbs4j.verbs.TestBed;
import dev.verbs4j.verbs.WcStatus;
import dev.verbs4j.verbs.WorkCompletion;
import dev.verbs4j.verbs.WorkCompletions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The dispatcher on a device's completion queue and channel: messages to three queue pairs that
 * share one queue reach the handler of each, woken through the channel; a retired queue pair's
 * flushed receives reach its handler before the retire or the orphans during it, never after.
 */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_1)
@Timeout(120)
class CompletionDispatcherDeviceTest {

    private static final int PAIRS = 3;
    private static final int MESSAGES = 4;

    @Test
    void eachQueuePairsCompletionsReachItsHandlerAndARetiredOnesNeverComeAfter() throws Exception {
        TestBed.Host host = TestBed.loopback();
        int gid = host.gidIndex();
        Map<Integer, List<Long>> taken = new ConcurrentHashMap<>();
        List<Long> orphans = new CopyOnWriteArrayList<>();
        CompletionDispatcher.Sink<Integer> sink = new CompletionDispatcher.Sink<>() {
            @Override
            public void take(Integer qp, WorkCompletions polled, Integer[] owners, int first, int count) {
                for (int i = first; i < count; i++) {
                    if (owners[i] == qp) {
                        WorkCompletion wc = polled.get(i);
                        assertThat(wc.qpNum()).isEqualTo(qp.intValue());
                        taken.computeIfAbsent(qp, k -> new CopyOnWriteArrayList<>()).add(wc.wrId());
                    }
                }
            }

            @Override
            public void orphan(WorkCompletion completion) {
                orphans.add(completion.wrId());
            }
        };
        try (Context ctx = Context.open(host.device());
             ReceiveRequests recvs = new ReceiveRequests(MESSAGES + 2, 1);
             SendRequests sends = new SendRequests(1, 1);
             WorkCompletions sent = new WorkCompletions(8)) {
            ProtectionDomain pd = ctx.allocateProtectionDomain();
            CompletionChannel channel = ctx.createCompletionChannel();
            CompletionQueue shared = ctx.createCompletionQueue(64, channel, 0);
            CompletionQueue senders = ctx.createCompletionQueue(64);
            MemoryRegion mr = pd.allocateRegion(64 * 1024, Access.LOCAL_WRITE);
            CompletionDispatcher<Integer> dispatcher = new CompletionDispatcher<>(shared, channel, 4, Integer[]::new, PAIRS, sink);
            dispatcher.start();
            QueuePair[] receivers = new QueuePair[PAIRS];
            Integer[] handlers = new Integer[PAIRS];
            QueuePair[] clients = new QueuePair[PAIRS];
            for (int p = 0; p < PAIRS; p++) {
                dispatcher.queuePairLock().lock();
                try {
                    receivers[p] = pd.createQueuePair(QueuePairInit.of(QpType.RC, shared).maxRecvWr(MESSAGES + 2));
                    handlers[p] = receivers[p].qpNum();
                    dispatcher.register(handlers[p], handlers[p]);
                } finally {
                    dispatcher.queuePairLock().unlock();
                }
                clients[p] = pd.createQueuePair(QueuePairInit.of(QpType.RC, senders));
                receivers[p].connect(1, clients[p].localEndpoint(gid, 100 + p), gid, 200 + p);
                clients[p].connect(1, receivers[p].localEndpoint(gid, 200 + p), gid, 100 + p);
                for (int i = 0; i < MESSAGES + 2; i++) {
                    recvs.get(i).wrId(p * 100L + i).sge(mr, 1024L * (p * 8 + i), 1024);
                }
                receivers[p].postReceive(recvs, MESSAGES + 2);
            }
            for (int m = 0; m < MESSAGES; m++) {
                for (int p = 0; p < PAIRS; p++) {
                    sends.reset(0).wrId(m).opcode(Opcode.SEND).flags(SendFlags.SIGNALED).sge(mr, 40000, 64);
                    clients[p].postSend(sends, 1);
                }
            }
            int done = 0;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (done < PAIRS * MESSAGES && System.nanoTime() < deadline) {
                int n = senders.poll(sent);
                for (int k = 0; k < n; k++) {
                    assertThat(sent.get(k).status()).isEqualTo(WcStatus.SUCCESS);
                }
                done += n;
            }
            assertThat(done).isEqualTo(PAIRS * MESSAGES);
            while (System.nanoTime() < deadline && !allArrived(taken, handlers)) {
                Thread.sleep(10);
            }
            for (int p = 0; p < PAIRS; p++) {
                assertThat(taken.get(handlers[p])).as("queue pair %d", p)
                        .containsExactly(p * 100L, p * 100L + 1, p * 100L + 2, p * 100L + 3);
            }

            // the first receiver's two receives left are flushed, then it is retired
            receivers[0].toError();
            QueuePair gone = receivers[0];
            dispatcher.retire(handlers[0], handlers[0], gone::close);
            List<Long> before = List.copyOf(taken.get(handlers[0]));
            assertThat(before.size() - MESSAGES + orphans.size()).as("flushed receives: before or as orphans").isBetween(0, 2);
            assertThat(orphans).allMatch(id -> id == 4L || id == 5L);
            // the others still get theirs
            sends.reset(0).wrId(9).opcode(Opcode.SEND).flags(SendFlags.SIGNALED).sge(mr, 40000, 64);
            clients[1].postSend(sends, 1);
            while (System.nanoTime() < deadline && taken.get(handlers[1]).size() < MESSAGES + 1) {
                Thread.sleep(10);
            }
            assertThat(taken.get(handlers[1])).endsWith(100L + MESSAGES);
            assertThat(taken.get(handlers[0])).as("nothing after the retire").isEqualTo(before);
            dispatcher.close();
            for (int p = 1; p < PAIRS; p++) {
                receivers[p].close();
            }
            for (QueuePair c : clients) {
                c.close();
            }
            shared.close();
            channel.close();
        }
    }

    private static boolean allArrived(Map<Integer, List<Long>> taken, Integer[] handlers) {
        for (Integer h : handlers) {
            List<Long> l = taken.get(h);
            if (l == null || l.size() < MESSAGES) {
                return false;
            }
        }
        return true;
    }
}
