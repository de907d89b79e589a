package dev.verbs4j.rdmacm;

import dev.verbs4j.verbs.TestBed;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Connect / transfer / disconnect cycles leave nothing behind: the process's file descriptors and
 * native memory (resident set) stay flat and the kernel lists no connection ids of the cycles.
 * Measured in the test VM: 1000 cycles in about 115 s (115 ms each); should the VM be slower,
 * the cycles stop after {@link #BUDGET} and at least {@link #MIN_CYCLES} must have run.
 */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_1)
@Timeout(600)
class RdmaConnectionCyclesDeviceTest {

    static final int CYCLES = 1000;
    /** The test VM is slow: the cycles stop early when this budget is spent (at least {@link #MIN_CYCLES} must fit). */
    static final Duration BUDGET = Duration.ofSeconds(150);
    static final int MIN_CYCLES = 100;

    @Test
    void cyclesLeakNoFdsNoIdsNoMemory() throws Exception {
        try (RdmaServer server = RdmaServer.bind(RdmaConnectionDeviceTest.address(TestBed.hostB(), 21_301))) {
            Thread echo = Thread.ofPlatform().daemon().start(() -> {
                while (true) {
                    try {
                        RdmaEchoServerMain.echo(server.accept(Duration.ofSeconds(120)));
                    } catch (Exception e) {
                        return;
                    }
                }
            });
            ConnectionOptions options = ConnectionOptions.DEFAULT.withMaxMessageSize(4096).withDepths(4, 4);
            cycles(server, options, 10, Duration.ofSeconds(60), System.nanoTime() + TimeUnit.HOURS.toNanos(1)); // warm up
            long fds0 = fds();
            long rss0 = rssKib();
            long t0 = System.nanoTime();
            int done = cycles(server, options, CYCLES, Duration.ofSeconds(30), t0 + BUDGET.toNanos());
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertThat(done).isGreaterThanOrEqualTo(MIN_CYCLES);
            long fds1 = fds();
            // the server side closes its end when it sees the disconnect: give the last one a moment
            for (long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10); fds1 > fds0 && System.nanoTime() < until && sleep(); ) {
                fds1 = fds();
            }
            long rss1 = rssKib();
            System.out.printf("%d cycles in %d ms (%.1f ms each); fds %d -> %d; RSS %d -> %d KiB%n", done, ms,
                    (double) ms / done, fds0, fds1, rss0, rss1);
            assertThat(fds1).as("open fds after the cycles").isLessThanOrEqualTo(fds0);
            assertThat(rss1 - rss0).as("RSS growth in KiB").isLessThan(64 * 1024);
            int port = server.localAddress().getPort();
            assertThat(cmIdsOn(port)).as("the kernel lists the listener").anyMatch(l -> l.contains("LISTEN"));
            server.close();
            echo.join(10_000);
            // the kernel's list of connection ids: none left once the server is closed
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            List<String> left;
            do {
                left = cmIdsOn(port);
            } while (!left.isEmpty() && System.nanoTime() < deadline && sleep());
            System.out.println("cm_ids on port " + port + " after closing: " + left.size());
            assertThat(left).isEmpty();
        }
    }

    private static int cycles(RdmaServer server, ConnectionOptions options, int n, Duration timeout, long until) throws Exception {
        byte[] m = new byte[100];
        int i = 0;
        for (; i < n && System.nanoTime() - until < 0; i++) {
            try (RdmaConnection c = RdmaConnection.connect(server.localAddress(), RdmaConnectionDeviceTest.address(TestBed.hostA(), 0),
                    options, timeout)) {
                m[0] = (byte) i;
                c.send(m, timeout);
                byte[] back = c.receive(timeout);
                assertThat(back).isEqualTo(m);
            }
        }
        return i;
    }

    private static boolean sleep() {
        try {
            Thread.sleep(200);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return true;
    }

    static long fds() throws IOException {
        try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
            return s.count();
        }
    }

    static long rssKib() throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("\\D", ""));
            }
        }
        return -1;
    }

    /** The kernel's connection ids ({@code rdma res show cm_id}) whose source or destination port is {@code port}. */
    static List<String> cmIdsOn(int port) throws Exception {
        Process p = new ProcessBuilder("rdma", "res", "show", "cm_id").redirectErrorStream(true).start();
        String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor(10, TimeUnit.SECONDS);
        return text.lines().filter(l -> l.matches(".*(src|dst)-addr [^ ]*:" + port + "( .*|$)")).toList();
    }
}
