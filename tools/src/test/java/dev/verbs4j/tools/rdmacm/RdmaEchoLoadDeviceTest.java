package dev.verbs4j.tools.rdmacm;

import dev.verbs4j.verbs.TestBed;
import dev.verbs4j.verbs.ToolRunner;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** rdma-echo-load's server and client between the two test hosts: 16 connections, every echo verified, the statistics printed. */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_1)
@Timeout(170)
class RdmaEchoLoadDeviceTest {

    @Test
    void sixteenConnectionsEachEchoingTwentyMessages() throws Exception {
        String port = "21601";
        Duration limit = Duration.ofSeconds(140);
        ToolRunner.Exchange runs = ToolRunner.cmServerAndClient(
                () -> ToolRunner.startJava(RdmaEchoLoad::run, "echo-load server", limit, "-s", "-a", TestBed.hostB().address(),
                        "-p", port, "-C", "16", "-S", "256"),
                Integer.parseInt(port), Duration.ofSeconds(90),
                () -> ToolRunner.startJava(RdmaEchoLoad::run, "echo-load client", limit, "-a", TestBed.hostB().address(),
                        "-l", TestBed.hostA().address(), "-p", port, "-c", "16", "-n", "20", "-S", "256")).succeeded();
        System.out.println(String.join("\n", runs.client().out()));
        System.out.println(String.join("\n", runs.server().out()));
        assertThat(runs.client().out()).anyMatch(l -> l.contains("16 verified, 0 failed"))
                .anyMatch(l -> l.startsWith("throughput ")).anyMatch(l -> l.matches("round trip us: p50 [0-9.]+  p99 [0-9.]+  max [0-9.]+"))
                .anyMatch(l -> l.startsWith("OS threads: "));
        assertThat(runs.server().out()).anyMatch(l -> l.startsWith("served 16 connections, 320 messages echoed, 0 failed"));
    }
}
