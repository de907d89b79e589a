package dev.verbs4j.tools.verbs;

import dev.verbs4j.verbs.ToolRunner;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The ping-pong tools' option handling, which needs no device: usage errors exit 1 as in C. */
class PingPongOptionsTest {

    private ToolRunner.Captured last;

    private int run(ToolRunner.JavaTool tool, String... args) {
        last = ToolRunner.runJava(tool, args);
        return last.status();
    }

    private int rc(String... args) {
        return run(RcPingPong::run, args);
    }

    @Test
    void usageErrorsExitOneWithTheUsageText() {
        for (String[] args : new String[][]{{"-x"}, {"a", "b"}, {"-p", "70000"}, {"-p", "-1"}, {"-m", "300"}, {"-i", "0"}, {"--nope"}, {"-s"}}) {
            assertThat(rc(args)).as(String.join(" ", args)).isEqualTo(1);
            assertThat(last.out()).startsWith("Usage:\n  rc_pingpong            start a server and wait for connection\n")
                    .contains("  -N, --new_send            use new post send WR API\n");
        }
        assertThat(rc("-x")).isEqualTo(1);
        assertThat(last.err()).isEqualTo("rc_pingpong: invalid option -- 'x'\n");
    }

    @Test
    void eachToolHasItsOwnOptions() {
        assertThat(run(UdPingPong::run, "-m", "1024")).isEqualTo(1);
        assertThat(last.out()).contains("  ud_pingpong <host>     connect to server at <host>\n")
                .contains("  -l, --sl=<SL>          send messages with service level <SL> (default 0)\n").doesNotContain("--mtu");
        assertThat(run(UcPingPong::run, "-o")).isEqualTo(1);
        assertThat(last.out()).contains("  -m, --mtu=<size>       path MTU (default 1024)\n").doesNotContain("--odp");
    }

    @Test
    void unsupportedOptionsAreRefusedNotIgnored() {
        assertThat(rc("-N")).isEqualTo(1);
        assertThat(last.err()).contains("--new_send").contains("not supported");
        assertThat(rc("-o", "-j")).isEqualTo(1);
        assertThat(last.err()).isEqualTo("DM memory region can't be on demand\n");
        assertThat(rc("-P")).isEqualTo(1);
        assertThat(last.err()).isEqualTo("prefetch is valid only with on-demand memory region\n");
        assertThat(last.out()).isEmpty();
    }

    @Test
    void numbersArePrintedAsGlibcDoes() {
        assertThat(PingPong.fixed2(0.125)).isEqualTo("0.12");
        assertThat(PingPong.fixed2(0.375)).isEqualTo("0.38");
        assertThat(PingPong.fixed2(0.0)).isEqualTo("0.00");
        assertThat(PingPong.fixed2(1234.005)).isEqualTo("1234.01");
        assertThat(PingPong.fixed2(2.675)).isEqualTo("2.67");
        assertThat(PingPong.fixed2(819200 * 8.0 / 123456f)).isEqualTo("53.08");
        assertThat(PingPong.fixed2(Double.POSITIVE_INFINITY)).isEqualTo("inf");
    }
}
