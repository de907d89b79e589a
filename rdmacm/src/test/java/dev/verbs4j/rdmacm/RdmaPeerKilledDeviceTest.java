package dev.verbs4j.rdmacm;

import dev.verbs4j.verbs.TestBed;
import dev.verbs4j.verbs.ToolRunner;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A server process killed with SIGKILL mid-connection: the client gets a defined outcome (end of
 * stream after DISCONNECTED, or an error) well within its timeout, and never hangs.
 */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_1)
@Timeout(420)
class RdmaPeerKilledDeviceTest {

    @Test
    void clientOfAKilledServerSeesTheEndWithinItsTimeout() throws Exception {
        int port = 21_201;
        String java = ProcessHandle.current().info().command().orElseThrow();
        Process server = new ProcessBuilder(List.of(java, "--enable-native-access=ALL-UNNAMED", "-cp",
                System.getProperty("java.class.path"), RdmaEchoServerMain.class.getName(), TestBed.hostB().address(),
                Integer.toString(port))).redirectErrorStream(true).start();
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(server.getInputStream(), StandardCharsets.UTF_8));
            CompletableFuture<String> listening = CompletableFuture.supplyAsync(() -> {
                try {
                    String line;
                    while ((line = out.readLine()) != null && !line.startsWith("LISTENING")) {
                        System.out.println("server: " + line);
                    }
                    return line;
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            ToolRunner.awaitCmListening(port, Duration.ofSeconds(200)); // a new JVM: slow to start while other VMs share the host
            assertThat(listening.get(30, TimeUnit.SECONDS)).isEqualTo("LISTENING " + port);

            InetSocketAddress remote = RdmaConnectionDeviceTest.address(TestBed.hostB(), port);
            try (RdmaConnection c = RdmaConnection.connect(remote, RdmaConnectionDeviceTest.address(TestBed.hostA(), 0), null,
                    Duration.ofSeconds(60))) {
                c.send("alive?".getBytes(StandardCharsets.US_ASCII), Duration.ofSeconds(30));
                assertThat(new String(c.receive(Duration.ofSeconds(60)), StandardCharsets.US_ASCII)).isEqualTo("alive?");
                // mid-connection: a message in flight, a receive pending
                c.send(new byte[1000], Duration.ofSeconds(30));
                server.destroyForcibly();
                long t0 = System.nanoTime();
                assertThat(server.waitFor(30, TimeUnit.SECONDS)).isTrue();
                Duration timeout = Duration.ofSeconds(30);
                Object outcome;
                try {
                    byte[] m;
                    do {
                        m = c.receive(timeout); // the echo of the 1000 bytes may still arrive
                    } while (m != null);
                    outcome = "end of stream";
                } catch (RdmaTimeoutException e) {
                    throw new AssertionError("the client hung until its timeout", e);
                } catch (RdmaConnectionException e) {
                    outcome = e.kind() + " " + e.getMessage();
                }
                long ms = (System.nanoTime() - t0) / 1_000_000;
                System.out.println("after SIGKILL: " + outcome + " in " + ms + " ms");
                assertThat(Duration.ofMillis(ms)).isLessThan(timeout);
                RdmaConnectionException send = org.assertj.core.api.Assertions.catchThrowableOfType(RdmaConnectionException.class,
                        () -> c.send(new byte[1], Duration.ofSeconds(5)));
                assertThat(send.kind()).isIn(Failure.Kind.PEER_DISCONNECTED, Failure.Kind.EVENT,
                        Failure.Kind.WORK_COMPLETION);
            }
        } finally {
            server.destroyForcibly();
        }
    }
}
