package dev.verbs4j.rdmacm;

import dev.verbs4j.verbs.RdmaArena;
import dev.verbs4j.verbs.TestBed;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static dev.verbs4j.rdmacm.GroupConnections.OPTIONS;
import static dev.verbs4j.rdmacm.GroupConnections.T;
import static dev.verbs4j.rdmacm.GroupConnections.connectAll;
import static dev.verbs4j.rdmacm.GroupConnections.echoFromEach;
import static dev.verbs4j.rdmacm.GroupConnections.platformThreads;
import static dev.verbs4j.rdmacm.RdmaConnectionDeviceTest.address;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link RdmaEndpointGroup} with a shared receive queue: 32 connections per side echoing through
 * fewer shared slots than their credits, in order; a one-sided write and a write with immediate
 * on a shared-queue connection; slow receivers that let the shared queue run dry (senders held
 * back by receiver-not-ready, nothing lost or reordered); closing a group with traffic outstanding.
 */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_1)
@Timeout(150)
class RdmaSharedReceiveQueueDeviceTest {

    @Test
    void thirtyTwoConnectionsEchoThroughSharedReceiveQueues() throws Exception {
        int n = 32;
        int messages = 10;
        InetAddress a = InetAddress.getByName(TestBed.hostA().address());
        InetAddress b = InetAddress.getByName(TestBed.hostB().address());
        assertThatThrownBy(() -> RdmaEndpointGroup.open(b, 2048, OPTIONS.withPostedReceives(true), 64))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("posted receives");
        // 64 shared slots per side against 32 x (4 + 1) credits: fewer slots than the peers may fill
        try (RdmaEndpointGroup serverGroup = RdmaEndpointGroup.open(b, 2048, OPTIONS, 64);
             RdmaEndpointGroup clientGroup = RdmaEndpointGroup.open(a, 2048, OPTIONS, 64);
             RdmaServer server = serverGroup.listen(address(TestBed.hostB(), 21_711), 64, T, null);
             RdmaArena arena = RdmaArena.ofShared();
             ExecutorService vts = Executors.newVirtualThreadPerTaskExecutor()) {
            assertThat(serverGroup.sharedReceiveDepth()).isEqualTo(64);
            List<RdmaConnection> accepted = new ArrayList<>();
            List<RdmaConnection> clients = connectAll(clientGroup, server, n, vts, accepted);
            // after connecting: the JVM's carrier threads and the poller have started by now
            int threadsBefore = platformThreads();
            accepted.forEach(GroupConnections::echo);
            assertThat(serverGroup.connections()).hasSize(n);

            long start = System.nanoTime();
            // two in flight on each connection: the echoes come back in the order sent
            int total = echoFromEach(clients, messages, 2, vts);
            System.out.printf("shared receive queues: %d connections per side, %d echoes verified in %d ms through 64 shared"
                            + " slots per side; platform threads %d before the traffic, %d after; lowest slots posted: server %d,"
                            + " client %d%n", n, total, (System.nanoTime() - start) / 1_000_000, threadsBefore, platformThreads(),
                    serverGroup.sharedReceivesLowWater(), clientGroup.sharedReceivesLowWater());
            assertThat(total).isEqualTo(n * messages);
            assertThat(platformThreads() - threadsBefore).as("no thread per connection").isLessThan(4);

            // one-sided operations and a write with immediate into the shared receive queue
            RegisteredBuffer target = serverGroup.register(arena.allocate(4096, 4096));
            RegisteredBuffer source = clientGroup.register(arena.allocate(4096, 4096));
            for (int i = 0; i < 4096; i++) {
                source.segment().set(ValueLayout.JAVA_BYTE, i, (byte) (i * 7));
            }
            RdmaConnection quiet = clients.get(3);
            RdmaConnection quietPeer = accepted.stream().filter(s -> s.remoteAddress().equals(quiet.localAddress()))
                    .findFirst().orElseThrow();
            quiet.writeWithImmediate(source, 0, 4096, target.remote(), 0, 0x5eed, T);
            ImmediateData imm = quietPeer.receiveImmediate(T);
            assertThat(imm.value()).isEqualTo(0x5eed);
            assertThat(imm.byteLength()).isEqualTo(4096);
            for (int i = 0; i < 4096; i++) {
                assertThat(target.segment().get(ValueLayout.JAVA_BYTE, i)).isEqualTo((byte) (i * 7));
            }
            quiet.read(source, 0, 100, target.remote(), 1000, T);
            assertThat(source.segment().get(ValueLayout.JAVA_BYTE, 0)).isEqualTo((byte) (1000 * 7));
            // the message stream still works after the immediate took a shared slot
            quiet.send(new byte[]{1, 2, 3}, T);
            assertThat(quiet.receive(T)).containsExactly(1, 2, 3);

            // connections closed on their own leave the group; the others go on
            for (int k = 0; k < n / 2; k++) {
                clients.get(k).close();
            }
            assertThat(clientGroup.connections()).hasSize(n - n / 2);
            RdmaConnection last = clients.get(n - 1);
            last.send(new byte[]{9}, T);
            assertThat(last.receive(T)).containsExactly(9);
            // new connections after the closes (their queue pairs may reuse numbers): their own traffic only
            List<RdmaConnection> newlyAccepted = new ArrayList<>();
            List<RdmaConnection> again = connectAll(clientGroup, server, 4, vts, newlyAccepted);
            newlyAccepted.forEach(GroupConnections::echo);
            for (int k = 0; k < again.size(); k++) {
                byte[] m = VirtualThreadEchoMain.message(100 + k, 0);
                again.get(k).send(m, T);
                assertThat(again.get(k).receive(T)).isEqualTo(m);
            }
        }
    }

    @Test
    void slowReceiversHoldSendersBackWithoutLoss() throws Exception {
        int n = 4;
        int messages = 40;
        InetAddress a = InetAddress.getByName(TestBed.hostA().address());
        InetAddress b = InetAddress.getByName(TestBed.hostB().address());
        // 4 shared slots for 4 connections of 4 credits each: the queue runs dry while nobody reads
        try (RdmaEndpointGroup serverGroup = RdmaEndpointGroup.open(b, 512, OPTIONS, 4);
             RdmaEndpointGroup clientGroup = RdmaEndpointGroup.open(a, 512, OPTIONS);
             RdmaServer server = serverGroup.listen(address(TestBed.hostB(), 21_712), 16, T, null);
             ExecutorService vts = Executors.newVirtualThreadPerTaskExecutor()) {
            List<RdmaConnection> accepted = new ArrayList<>();
            List<RdmaConnection> clients = connectAll(clientGroup, server, n, vts, accepted);
            AtomicInteger sent = new AtomicInteger();
            List<Future<?>> senders = new ArrayList<>();
            for (int k = 0; k < n; k++) {
                RdmaConnection c = clients.get(k);
                int id = k;
                senders.add(vts.submit(() -> {
                    for (int i = 0; i < messages; i++) {
                        c.send(ByteBuffer.allocate(8).putInt(id).putInt(i).array(), T);
                        sent.incrementAndGet();
                    }
                    return null;
                }));
            }
            // nobody reads: the senders stop after their credits and send slots; the queue ran dry
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (serverGroup.sharedReceivesLowWater() > 0 && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(serverGroup.sharedReceivesLowWater()).as("the shared queue ran dry").isZero();
            Thread.sleep(500);
            int heldBack = sent.get();
            assertThat(heldBack).as("senders held back").isLessThan(n * messages);
            // slow readers, each on its own connection: every message arrives once, in order
            List<Future<Integer>> readers = new ArrayList<>();
            for (RdmaConnection s : accepted) {
                readers.add(vts.submit(() -> {
                    int from = -1;
                    for (int i = 0; i < messages; i++) {
                        ByteBuffer m = ByteBuffer.wrap(s.receive(T));
                        int id = m.getInt();
                        if (from < 0) {
                            from = id;
                        }
                        assertThat(id).isEqualTo(from);
                        assertThat(m.getInt()).as("connection %d", id).isEqualTo(i);
                        if (i % 8 == 0) {
                            Thread.sleep(5);
                        }
                    }
                    return from;
                }));
            }
            List<Integer> ids = new ArrayList<>();
            for (Future<Integer> r : readers) {
                ids.add(r.get(120, TimeUnit.SECONDS));
            }
            for (Future<?> f : senders) {
                f.get(60, TimeUnit.SECONDS);
            }
            assertThat(ids).containsExactlyInAnyOrder(0, 1, 2, 3);
            assertThat(sent.get()).isEqualTo(n * messages);
            System.out.printf("slow receivers: %d connections on 4 shared slots, %d messages each; %d sent while nobody read,"
                    + " all %d arrived in order%n", n, messages, heldBack, n * messages);
        }
    }

    @Test
    void closingAGroupWithTrafficOutstandingFailsTheFutures() throws Exception {
        int n = 8;
        InetAddress a = InetAddress.getByName(TestBed.hostA().address());
        InetAddress b = InetAddress.getByName(TestBed.hostB().address());
        try (RdmaEndpointGroup serverGroup = RdmaEndpointGroup.open(b, 1024, OPTIONS, 8);
             RdmaServer server = serverGroup.listen(address(TestBed.hostB(), 21_713), 16, T, null);
             RdmaArena arena = RdmaArena.ofShared();
             ExecutorService vts = Executors.newVirtualThreadPerTaskExecutor()) {
            RdmaEndpointGroup clientGroup = RdmaEndpointGroup.open(a, 1024, OPTIONS, 8);
            List<RdmaConnection> accepted = new ArrayList<>();
            List<RdmaConnection> clients = connectAll(clientGroup, server, n, vts, accepted);
            RegisteredBuffer big = clientGroup.register(arena.allocate(1 << 20, 4096));
            RegisteredBuffer remote = serverGroup.register(arena.allocate(1 << 20, 4096));
            List<CompletableFuture<?>> futures = new ArrayList<>();
            for (RdmaConnection c : clients) {
                // nobody reads on the server: sends fill the credits and the shared slots, the rest waits
                for (int i = 0; i < 8; i++) {
                    futures.add(c.sendAsync(new byte[512]));
                }
                futures.add(c.receiveAsync());
                futures.add(c.receiveImmediateAsync());
                futures.add(c.writeAsync(big, 0, 1 << 20, remote.remote(), 0));
                futures.add(c.readAsync(big, 0, 1 << 20, remote.remote(), 0));
            }
            clientGroup.close();
            assertThat(clients).noneMatch(RdmaConnection::isOpen);
            int failed = 0;
            for (CompletableFuture<?> f : futures) {
                try {
                    f.get(30, TimeUnit.SECONDS);
                } catch (ExecutionException e) {
                    assertThat(e.getCause()).isInstanceOf(RdmaConnectionException.class);
                    failed++;
                }
            }
            assertThat(failed).as("futures still waiting or outstanding failed").isGreaterThanOrEqualTo(2 * n);
            assertThat(big.isClosed()).isTrue();
            // the server's ends read what arrived, then the end of the stream; their group stays usable
            int arrived = 0;
            for (RdmaConnection s : accepted) {
                while (s.receive(T) != null) {
                    arrived++;
                }
                assertThat(s.isOpen()).isFalse();
            }
            System.out.printf("group closed with traffic outstanding: %d of %d futures failed, the rest had completed;"
                    + " the server's ends read %d messages, then the end of the stream%n", failed, futures.size(), arrived);
            try (RdmaEndpointGroup other = RdmaEndpointGroup.open(a, 1024, OPTIONS)) {
                RdmaConnection c = other.connect(server.localAddress(), T);
                RdmaConnection s = server.accept(T);
                c.send(new byte[]{4, 2}, T);
                assertThat(s.receive(T)).containsExactly(4, 2);
            }
        }
    }
}
