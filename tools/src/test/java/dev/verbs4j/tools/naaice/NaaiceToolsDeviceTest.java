package dev.verbs4j.tools.naaice;

import dev.verbs4j.naaice.NaaServer;
import dev.verbs4j.naaice.ReferenceKernels;
import dev.verbs4j.verbs.TestBed;
import dev.verbs4j.verbs.ToolRunner;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** naaice-server, naaice-client and naaice-bench across the two test hosts. */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_3)
@Timeout(300)
class NaaiceToolsDeviceTest {

    private static InetSocketAddress at(TestBed.Host h, int port) throws Exception {
        return new InetSocketAddress(InetAddress.getByName(h.address()), port);
    }

    private static ToolRunner.JavaTool tool(boolean server) {
        return (args, out, err) -> {
            try {
                return server ? NaaiceServer.run(args, out, err)
                        : NaaiceClient.run(args, out, err);
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        };
    }

    /** naaice-server and naaice-client as tools: the client verifies, and exits non-zero when results differ. */
    @Test
    void toolsServerAndClient() throws Exception {
        int port = 12350;
        String b = TestBed.hostB().address();
        String a = TestBed.hostA().address();
        ToolRunner.Background srv = ToolRunner.startJava(tool(true), "naaice-server",
                Duration.ofSeconds(120), "-b", b, "-p", Integer.toString(port));
        try {
            ToolRunner.awaitCmListening(port, Duration.ofSeconds(60));
            ToolRunner.Run client = ToolRunner.startJava(tool(false), "naaice-client",
                    Duration.ofSeconds(120), "-a", b, "-l", a, "-p", Integer.toString(port), "-f", "2", "-s", "1,4096,100000",
                    "-n", "3").await();
            System.out.println(client);
            assertThat(client.status()).as(client.toString()).isZero();
            assertThat(client.out().stream().filter(l -> l.startsWith("RPC ") && l.endsWith(", verified"))).hasSize(3);
            assertThat(client.line("connected to ")).contains("3 parameters set up in");
        } finally {
            srv.stop();
        }
        ToolRunner.Run s = srv.await();
        assertThat(s.status()).as(s.toString()).isZero();
        assertThat(s.line("naaice-server: stopped after 1 connections, 3 RPCs")).isNotNull();

        // a NAA whose function 1 is wrong (adds 3): the client must notice and fail
        try (NaaServer wrong = NaaServer.builder().bind(at(TestBed.hostB(), port + 1))
                .kernel(1, call -> {
                    for (MemorySegment m : call.parameters()) {
                        ReferenceKernels.addBytes(m, 3);
                    }
                    return 0;
                }).start()) {
            ToolRunner.Run client = ToolRunner.startJava(tool(false), "naaice-client",
                    Duration.ofSeconds(120), "-a", b, "-l", a, "-p", Integer.toString(port + 1), "-f", "1", "-s", "64").await();
            System.out.println(client);
            assertThat(client.status()).as(client.toString()).isEqualTo(1);
            assertThat(client.out()).anyMatch(l -> l.contains("DIFFER"));
        }
    }

    /** naaice-bench: sizes 1, 2, 3, 4, 6, 9, ... up to -M, a table row and a CSV row for each; bad options exit 2. */
    @Test
    void toolsBench() throws Exception {
        int port = 12352;
        String b = TestBed.hostB().address();
        try (NaaServer srv = NaaServer.builder().bind(at(TestBed.hostB(), port)).start()) {
            ToolRunner.Run bench = ToolRunner.startJava(NaaiceBench::run, "naaice-bench",
                    Duration.ofSeconds(120), "-a", b, "-l", TestBed.hostA().address(), "-p", Integer.toString(port),
                    "-M", "100", "-n", "3").await();
            System.out.println(bench);
            assertThat(bench.status()).as(bench.toString()).isZero();
            List<Long> sizes = List.of(1L, 2L, 3L, 4L, 6L, 9L, 13L, 19L, 28L, 42L, 63L, 94L);
            List<String> csv = bench.out().subList(bench.out().indexOf("bytes,setup_us,transfer_us") + 1, bench.out().size());
            assertThat(csv).extracting(l -> Long.parseLong(l.split(",")[0])).containsExactlyElementsOf(sizes);
            assertThat(csv).allSatisfy(l -> {
                String[] f = l.split(",");
                assertThat(Long.parseLong(f[1])).as("setup µs of %s", l).isPositive();
                assertThat(Long.parseLong(f[2])).as("transfer µs of %s", l).isPositive();
            });
            assertThat(bench.out().get(0).trim().split("\\s+")).containsExactly("bytes", "setup_us", "transfer_us", "MB/s");
        }
        ToolRunner.Run bad = ToolRunner.startJava(NaaiceBench::run, "naaice-bench",
                Duration.ofSeconds(30), "-a", b, "-M", "lots").await();
        assertThat(bad.status()).isEqualTo(2);
        assertThat(bad.err()).contains("naaice-bench: option --max needs a number from 1 to 2147483647, got 'lots'");
    }
}
