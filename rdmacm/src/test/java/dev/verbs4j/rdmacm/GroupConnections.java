package dev.verbs4j.rdmacm;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The set-up the endpoint-group device tests share: their connection options, many group clients
 * connected to a server at once, server ends that echo through futures, echo traffic from every
 * client checked in order, and the JVM's platform threads.
 */
final class GroupConnections {

    static final Duration T = Duration.ofSeconds(60);
    static final ConnectionOptions OPTIONS = ConnectionOptions.DEFAULT.withMaxMessageSize(1024).withDepths(4, 4)
            .withLinger(Duration.ZERO);

    private GroupConnections() {
    }

    /**
     * Connects {@code n} clients of {@code clients} to {@code server} at once (each on a virtual
     * thread of {@code vts}) while this thread accepts them into {@code accepted}; returns the
     * client ends.
     */
    static List<RdmaConnection> connectAll(RdmaEndpointGroup clients, RdmaServer server, int n, ExecutorService vts,
                                           List<RdmaConnection> accepted) throws Exception {
        List<CompletableFuture<RdmaConnection>> connecting = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            connecting.add(CompletableFuture.supplyAsync(() -> {
                try {
                    return clients.connect(server.localAddress(), T);
                } catch (RdmaConnectionException e) {
                    throw new RuntimeException(e);
                }
            }, vts));
        }
        for (int i = 0; i < n; i++) {
            accepted.add(server.accept(T));
        }
        List<RdmaConnection> out = new ArrayList<>();
        for (CompletableFuture<RdmaConnection> f : connecting) {
            out.add(f.get(60, TimeUnit.SECONDS));
        }
        return out;
    }

    /** Echoes every message of {@code c} through futures: no thread waits for it. */
    static void echo(RdmaConnection c) {
        c.receiveAsync()
                .thenCompose(m -> m == null ? CompletableFuture.completedFuture(false) : c.sendAsync(m).thenApply(v -> true))
                .whenComplete((more, e) -> {
                    if (e == null && more) {
                        echo(c);
                    }
                });
    }

    /**
     * Sends {@code messages} messages from each client, on a virtual thread of {@code vts} each,
     * {@code inFlight} at a time before reading their echoes, and checks that every echo comes
     * back in the order sent; returns the echoes verified.
     */
    static int echoFromEach(List<RdmaConnection> clients, int messages, int inFlight, ExecutorService vts) throws Exception {
        List<Future<Integer>> echoed = new ArrayList<>();
        for (int k = 0; k < clients.size(); k++) {
            RdmaConnection c = clients.get(k);
            int id = k;
            echoed.add(vts.submit(() -> {
                for (int i = 0; i < messages; i += inFlight) {
                    for (int j = i; j < i + inFlight; j++) {
                        c.send(VirtualThreadEchoMain.message(id, j), T);
                    }
                    for (int j = i; j < i + inFlight; j++) {
                        assertThat(c.receive(T)).as("connection %d message %d", id, j).isEqualTo(VirtualThreadEchoMain.message(id, j));
                    }
                }
                return messages;
            }));
        }
        int total = 0;
        for (Future<Integer> f : echoed) {
            total += f.get(120, TimeUnit.SECONDS);
        }
        return total;
    }

    static int platformThreads() {
        return ManagementFactory.getThreadMXBean().getThreadCount();
    }
}
