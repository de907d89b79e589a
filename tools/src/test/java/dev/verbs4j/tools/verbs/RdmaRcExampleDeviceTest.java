package dev.verbs4j.tools.verbs;

import dev.verbs4j.verbs.TestBed;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** The manual's RC example: send, RDMA read, RDMA write, between the two test hosts. */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_1)
class RdmaRcExampleDeviceTest {

    @Test
    void sendThenReadThenWrite() throws Exception {
        TestBed.Host a = TestBed.hostA();
        TestBed.Host b = TestBed.hostB();
        ByteArrayOutputStream serverOut = new ByteArrayOutputStream();
        ByteArrayOutputStream serverErr = new ByteArrayOutputStream();
        PrintStream so = new PrintStream(serverOut, true, StandardCharsets.UTF_8);
        CompletableFuture<Integer> server = CompletableFuture.supplyAsync(() -> RdmaRcExample.run(
                new String[]{"-p", "18621", "-d", a.device(), "-g", String.valueOf(a.gidIndex())}, so,
                new PrintStream(serverErr, true, StandardCharsets.UTF_8)));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!serverOut.toString(StandardCharsets.UTF_8).contains("waiting on port") && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        ByteArrayOutputStream clientOut = new ByteArrayOutputStream();
        ByteArrayOutputStream clientErr = new ByteArrayOutputStream();
        int clientRc = RdmaRcExample.run(new String[]{"-p", "18621", "-d", b.device(), "-g", String.valueOf(b.gidIndex()),
                a.address()}, new PrintStream(clientOut, true, StandardCharsets.UTF_8),
                new PrintStream(clientErr, true, StandardCharsets.UTF_8));
        int serverRc = server.get(60, TimeUnit.SECONDS);
        String c = clientOut.toString(StandardCharsets.UTF_8);
        String s = serverOut.toString(StandardCharsets.UTF_8);
        assertThat(clientRc).as("client: %s%s", c, clientErr).isZero();
        assertThat(serverRc).as("server: %s%s", s, serverErr).isZero();
        assertThat(c).contains("Message is: 'SEND operation'")
                .contains("Contents of server's buffer: 'RDMA read operation'")
                .contains("Now replacing it with: 'RDMA write operation'")
                .endsWith("\ntest result is 0\n");
        assertThat(s).contains("Contents of server buffer: 'RDMA write operation'").endsWith("\ntest result is 0\n");
    }
}
