package dev.verbs4j.tools.vipl;

import dev.verbs4j.verbs.ToolRunner;
import dev.verbs4j.vipl.VipReliabilityLevel;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The VIPL tools' option handling, usage text and exit statuses, which need no device. */
class ViplToolsOptionsTest {

    private ToolRunner.Captured last;

    private int pingpong(String... args) {
        last = ToolRunner.runJava(ViplPingPong::run, args);
        return last.status();
    }

    private int bw(String... args) {
        last = ToolRunner.runJava(ViplBw::run, args);
        return last.status();
    }

    @Test
    void helpPrintsTheUsageAndExitsZero() {
        assertThat(pingpong("--help")).isZero();
        assertThat(last.out()).startsWith("Usage:\n  vipl-pingpong [OPTIONS]").contains("-w, --wait").contains("-r, --reliability=LEVEL")
                .contains("Exit status: 0 success, 1 a failure at run time, 2 bad options.").doesNotContain("--window");
        assertThat(last.err()).isEmpty();
        assertThat(bw("-h")).isZero();
        assertThat(last.out()).startsWith("Usage:\n  vipl-bw [OPTIONS]").contains("-q, --window=N").contains("-V, --verify");
    }

    @Test
    void badOptionsExitTwoWithAMessage() {
        String[][] cases = {{"-x"}, {"--nope"}, {"-s"}, {"-s", "0"}, {"-s", "4096,abc"}, {"-s", "2m"}, {"-n", "0"}, {"-n", "x"},
                {"-p", "70000"}, {"-r", "best-effort"}, {"-t", "0"}, {"-t", "-3"}, {"-a", "-s", "64"}, {"a", "b"},
                {"300.1.1.1"}, {"host.example"}, {"-l", "nowhere"}, {"-q", "8"}, {"--window=8"}};
        for (String[] args : cases) {
            assertThat(pingpong(args)).as(String.join(" ", args)).isEqualTo(2);
            assertThat(last.err()).as(String.join(" ", args)).startsWith("vipl-pingpong: ")
                    .endsWith("Try 'vipl-pingpong --help' for more information.\n");
            assertThat(last.out()).isEmpty();
        }
        for (String[] args : new String[][]{{"-q", "0"}, {"-q", "129"}, {"-q", "128", "-s", "1m"}, {"-x"}}) {
            assertThat(bw(args)).as(String.join(" ", args)).isEqualTo(2);
            assertThat(last.err()).startsWith("vipl-bw: ");
        }
        pingpong("-r", "best-effort");
        assertThat(last.err()).contains("bad reliability level 'best-effort': unreliable, reliable-delivery or reliable-reception");
        pingpong("-s", "0");
        assertThat(last.err()).contains("bad size '0': 1 to 1048576 bytes");
    }

    @Test
    void optionsParseShortAndLong() throws Exception {
        PrintStream e = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
        ToolOptions o = ToolOptions.parse(false, new String[]{"-d", "rxe_b", "--port=7000", "-s", "1,4k,1m", "-n", "5", "-W0",
                "--reliability", "reliable-reception", "-wc", "-t", "2.5", "198.18.0.2"}, e);
        assertThat(o.device).isEqualTo("rxe_b");
        assertThat(o.port).isEqualTo(7000);
        assertThat(o.sizes).containsExactly(1, 4096, 1 << 20);
        assertThat(o.iters).isEqualTo(5);
        assertThat(o.warmup()).isZero();
        assertThat(o.level).isEqualTo(VipReliabilityLevel.RELIABLE_RECEPTION);
        assertThat(o.levelGiven).isTrue();
        assertThat(o.waitMode).isTrue();
        assertThat(o.cq).isTrue();
        assertThat(o.timeoutMillis).isEqualTo(2500);
        assertThat(o.server).isEqualTo("198.18.0.2");
        assertThat(o.isServer()).isFalse();
        assertThat(new String(o.discriminator(), StandardCharsets.US_ASCII)).isEqualTo("7000");

        ToolOptions all = ToolOptions.parse(true, new String[]{"--all", "--window", "16", "-V", "-n", "1000"}, e);
        assertThat(all.sizes).hasSize(17).startsWith(1, 2, 4).endsWith(65536);
        assertThat(all.window).isEqualTo(16);
        assertThat(all.verify).isTrue();
        assertThat(all.isServer()).isTrue();
        assertThat(all.warmup()).isEqualTo(100);
        assertThat(all.levelGiven).isFalse();
        assertThat(ToolOptions.parse(false, new String[]{"-n", "3"}, e).warmup()).isEqualTo(1);
        assertThatThrownBy(() -> ToolOptions.parse(false, new String[]{"-s", "1,,2"}, e)).isInstanceOf(ToolOptions.UsageException.class);
    }

    @Test
    void thePlanRoundTripsAndIsChecked() {
        try (var arena = java.lang.foreign.Arena.ofConfined()) {
            var m = arena.allocate(Plan.MAX_BYTES);
            Plan p = new Plan(Plan.BW, new int[]{1, 65536}, 100, 10, 32, true);
            int n = p.write(m);
            Plan q = Plan.read(m, n, Plan.BW);
            assertThat(q.sizes()).containsExactly(1, 65536);
            assertThat(q.iters()).isEqualTo(100);
            assertThat(q.warmup()).isEqualTo(10);
            assertThat(q.window()).isEqualTo(32);
            assertThat(q.verify()).isTrue();
            assertThatThrownBy(() -> Plan.read(m, n, Plan.PINGPONG)).hasMessageContaining("the client is vipl-bw");
            assertThatThrownBy(() -> Plan.read(m, 20, Plan.BW)).hasMessageContaining("not a plan");
        }
    }

    @Test
    void verifyNamesTheFirstDifferingByte() {
        try (var arena = java.lang.foreign.Arena.ofConfined()) {
            var pattern = Endpoint.pattern(arena, 4096);
            var data = arena.allocate(4096);
            java.lang.foreign.MemorySegment.copy(pattern, 7, data, 0, 4096);
            Endpoint.verify(pattern, data, 0, 4096, 7, "ping 7");
            Endpoint.verify(pattern, data, 0, 4096, 7 + Endpoint.PATTERN_SHIFT, "ping 258");
            assertThatThrownBy(() -> Endpoint.verify(pattern, data, 0, 4096, 8, "ping 8"))
                    .isInstanceOf(Endpoint.Failure.class).hasMessageStartingWith("payload mismatch in ping 8 at byte 0");
            data.set(java.lang.foreign.ValueLayout.JAVA_BYTE, 1000, (byte) ~data.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 1000));
            assertThatThrownBy(() -> Endpoint.verify(pattern, data, 0, 4096, 7, "ping 7"))
                    .hasMessageStartingWith("payload mismatch in ping 7 at byte 1000: expected 0x");
            Endpoint.verify(pattern, data, 0, 1000, 7, "ping 7, the first 1000 bytes");
        }
    }

    @Test
    void aMissingDeviceIsARunTimeFailure() {
        assertThat(pingpong("-d", "no_such_nic", "-t", "1", "127.0.0.1")).isEqualTo(1);
        assertThat(last.err()).startsWith("vipl-pingpong: VipOpenNic: VIP_INVALID_PARAMETER").contains("no_such_nic");
        assertThat(bw("-d", "no_such_nic", "-t", "1")).isEqualTo(1);
        assertThat(last.err()).startsWith("vipl-bw: VipOpenNic: VIP_INVALID_PARAMETER");
    }
}
