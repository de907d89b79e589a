package dev.verbs4j.rdmacm;

import dev.verbs4j.verbs.RdmaArena;
import dev.verbs4j.verbs.TestBed;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static dev.verbs4j.rdmacm.GroupConnections.OPTIONS;
import static dev.verbs4j.rdmacm.GroupConnections.T;
import static dev.verbs4j.rdmacm.GroupConnections.connectAll;
import static dev.verbs4j.rdmacm.GroupConnections.echoFromEach;
import static dev.verbs4j.rdmacm.GroupConnections.platformThreads;
import static dev.verbs4j.rdmacm.RdmaConnectionDeviceTest.address;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link RdmaEndpointGroup}: many connections, client and server ends, on one completion queue
 * and one poller, with echo traffic and a one-sided write checked byte for byte; the group's
 * capacity refusal; closing a group closes its connections.
 */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_1)
@Timeout(150)
class RdmaEndpointGroupDeviceTest {

    @Test
    void thirtyTwoConnectionsShareOneCompletionQueueAndEcho() throws Exception {
        int n = 32;
        int messages = 20;
        InetAddress a = InetAddress.getByName(TestBed.hostA().address());
        InetAddress b = InetAddress.getByName(TestBed.hostB().address());
        try (RdmaEndpointGroup serverGroup = RdmaEndpointGroup.open(b, 2048, OPTIONS);
             RdmaEndpointGroup clientGroup = RdmaEndpointGroup.open(a, 2048, OPTIONS);
             RdmaServer server = serverGroup.listen(address(TestBed.hostB(), 21_701), 64, T, null);
             RdmaArena arena = RdmaArena.ofShared()) {
            assertThat(serverGroup.capacity()).isGreaterThanOrEqualTo(n);
            int threadsBefore = platformThreads();
            try (ExecutorService vts = Executors.newVirtualThreadPerTaskExecutor()) {
                List<RdmaConnection> accepted = new ArrayList<>();
                List<RdmaConnection> clients = connectAll(clientGroup, server, n, vts, accepted);
                accepted.forEach(GroupConnections::echo);
                // one completion queue per group, whatever the number of connections
                assertThat(clients).allMatch(c -> c.completionQueue() == clientGroup.completionQueue() && c.group() == clientGroup);
                assertThat(accepted).allMatch(c -> c.completionQueue() == serverGroup.completionQueue());
                assertThat(clientGroup.connections()).hasSize(n);
                assertThat(serverGroup.connections()).hasSize(n);

                long start = System.nanoTime();
                int total = echoFromEach(clients, messages, 1, vts);
                int threadsDuring = platformThreads();
                System.out.printf("group: %d connections, %d echoes verified in %d ms on one completion queue per side;"
                                + " platform threads %d before connecting, %d after; completions dispatched: client %d, server %d%n",
                        n, total, (System.nanoTime() - start) / 1_000_000, threadsBefore, threadsDuring,
                        clientGroup.completionsDispatched(), serverGroup.completionsDispatched());
                assertThat(total).isEqualTo(n * messages);
                assertThat(threadsDuring - threadsBefore).as("no thread per connection").isLessThan(4);
                assertThat(serverGroup.completionsDispatched()).isGreaterThanOrEqualTo(2L * n * messages);

                // a one-sided write through a group connection to a buffer registered with the other group
                RegisteredBuffer target = serverGroup.register(arena.allocate(8192, 4096));
                RegisteredBuffer source = clientGroup.register(arena.allocate(8192, 4096));
                for (int i = 0; i < 8192; i++) {
                    source.segment().set(ValueLayout.JAVA_BYTE, i, (byte) (i * 13));
                }
                clients.get(n - 1).write(source, 0, 8192, target.remote(), 0, T);
                clients.get(0).write(source, 0, 100, target.remote(), 8092, T);
                for (int i = 0; i < 8192; i++) {
                    int expected = i < 8092 ? i * 13 : (i - 8092) * 13;
                    assertThat(target.segment().get(ValueLayout.JAVA_BYTE, i)).isEqualTo((byte) expected);
                }

                // closing the group closes its connections; the peers see the end of the stream
                clientGroup.close();
                assertThat(clients).noneMatch(RdmaConnection::isOpen);
                assertThat(clientGroup.connections()).isEmpty();
                assertThat(source.isClosed()).isTrue();
                assertThatThrownBy(() -> clientGroup.connect(server.localAddress(), T)).isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("closed");
                for (RdmaConnection c : accepted) {
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                    while (c.isOpen() && System.nanoTime() < deadline) {
                        Thread.sleep(10);
                    }
                    assertThat(c.isOpen()).as("the server end saw the disconnect").isFalse();
                }
            }
        }
    }

    @Test
    void aFullGroupRejectsWithTheReason() throws Exception {
        InetAddress b = InetAddress.getByName(TestBed.hostB().address());
        assertThatThrownBy(() -> RdmaEndpointGroup.open(b, 13, OPTIONS)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("cannot hold one connection of 14 entries");
        try (RdmaEndpointGroup group = RdmaEndpointGroup.open(b, 20, OPTIONS);
             RdmaServer server = group.listen(address(TestBed.hostB(), 21_702), 8, T, null)) {
            // the device may round the queue up: the capacity follows what it holds
            int capacity = group.capacity();
            assertThat(capacity).isEqualTo(group.completionQueue().capacity() / 14).isPositive();
            List<RdmaConnection> open = new ArrayList<>();
            try {
                for (int i = 0; i < capacity; i++) {
                    open.add(RdmaConnection.connect(server.localAddress(), address(TestBed.hostA(), 0), OPTIONS, T));
                    open.add(server.accept(T));
                }
                assertThatThrownBy(() -> RdmaConnection.connect(server.localAddress(), address(TestBed.hostA(), 0), OPTIONS, T))
                        .isInstanceOf(RdmaConnectionException.class)
                        .satisfies(e -> assertThat(((RdmaConnectionException) e).rejectionReason()).contains("endpoint group")
                                .contains("full"));
                open.get(0).send(new byte[]{5}, T);
                assertThat(open.get(1).receive(T)).containsExactly(5);
                assertThat(open.get(1).group()).isSameAs(group);
            } finally {
                open.forEach(RdmaConnection::close);
            }
        }
    }
}
