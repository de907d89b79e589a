package dev.verbs4j.verbs;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** One shared receive queue feeding several RC queue pairs, and its limit event. */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_1)
class SharedReceiveQueueDeviceTest {

    @Test
    void threeQueuePairsConsumeOneSharedReceiveQueueAndTheLimitFires() throws InterruptedException {
        TestBed.Host host = TestBed.loopback();
        int gid = host.gidIndex();
        try (Context ctx = Context.open(host.device());
             ReceiveRequests recvs = new ReceiveRequests(8, 1);
             SendRequests sends = new SendRequests(1, 1);
             WorkCompletions wcs = new WorkCompletions(8)) {
            ProtectionDomain pd = ctx.allocateProtectionDomain();
            CompletionQueue cq = ctx.createCompletionQueue(64);
            SharedReceiveQueue srq = pd.createSharedReceiveQueue(16, 1);
            MemoryRegion mr = pd.allocateRegion(64 * 1024, Access.LOCAL_WRITE);
            QueuePair[] servers = new QueuePair[3];
            QueuePair[] clients = new QueuePair[3];
            for (int i = 0; i < 3; i++) {
                servers[i] = pd.createQueuePair(QueuePairInit.of(QpType.RC, cq).sharedReceiveQueue(srq));
                clients[i] = pd.createQueuePair(QueuePairInit.of(QpType.RC, cq));
                servers[i].connect(1, clients[i].localEndpoint(gid, 100 + i), gid, 200 + i);
                clients[i].connect(1, servers[i].localEndpoint(gid, 200 + i), gid, 100 + i);
            }
            for (int i = 0; i < 8; i++) {
                recvs.get(i).wrId(1000 + i).sge(mr, 4096L * i, 4096);
            }
            srq.postReceive(recvs, 8);
            BlockingQueue<AsyncEvent> events = new LinkedBlockingQueue<>();
            AsyncEventListener listener = AsyncEventListener.start(ctx, events::add);
            srq.armLimit(6);

            for (int i = 0; i < 3; i++) {
                mr.segment().asSlice(40000 + i * 100L, 100).fill((byte) ('x' + i));
                sends.reset(0).wrId(i).opcode(Opcode.SEND).flags(SendFlags.SIGNALED).sge(mr, 40000 + i * 100L, 100);
                clients[i].postSend(sends, 1);
            }
            Set<Integer> receivingQps = new HashSet<>();
            int sendsDone = 0;
            int received = 0;
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while ((sendsDone < 3 || received < 3) && System.nanoTime() < deadline) {
                int n = cq.poll(wcs);
                for (int k = 0; k < n; k++) {
                    WorkCompletion wc = wcs.get(k);
                    assertThat(wc.status()).as("%s", wc).isEqualTo(WcStatus.SUCCESS);
                    if (wc.opcode() == WcOpcode.RECV) {
                        received++;
                        receivingQps.add(wc.qpNum());
                        assertThat(wc.wrId()).isBetween(1000L, 1007L);
                        assertThat(wc.byteLength()).isEqualTo(100);
                    } else {
                        sendsDone++;
                    }
                }
            }
            assertThat(received).isEqualTo(3);
            assertThat(receivingQps).containsExactlyInAnyOrder(servers[0].qpNum(), servers[1].qpNum(), servers[2].qpNum());

            AsyncEvent event = events.poll(10, TimeUnit.SECONDS);
            assertThat(event).isNotNull();
            listener.close();
            assertThat(listener.isRunning()).isFalse();
            assertThat(event.type()).isEqualTo(AsyncEventType.SRQ_LIMIT_REACHED);
            assertThat(event.type().description()).isEqualTo("SRQ limit reached");
            assertThat(event.source()).isSameAs(srq);
            assertThat(ctx.awaitAsyncEvent(Duration.ofMillis(100))).isNull();
        }
    }
}
