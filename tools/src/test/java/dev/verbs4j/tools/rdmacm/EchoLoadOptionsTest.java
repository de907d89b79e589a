package dev.verbs4j.tools.rdmacm;

import dev.verbs4j.verbs.ToolRunner;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** rdma-echo-load's command line: defaults, every option, and the refusals (status 2, a line saying why). */
class EchoLoadOptionsTest {

    private static EchoLoadOptions parse(String... args) {
        PrintStream sink = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
        return EchoLoadOptions.parse(args, sink, sink, new int[1]);
    }

    @Test
    void defaultsAndEveryOption() {
        assertThat(parse("-s")).isEqualTo(new EchoLoadOptions(true, "0.0.0.0", 7472, null, 16, 100, 64, 0, Duration.ofSeconds(60)));
        assertThat(parse("-a", "198.18.0.2", "-p", "9000", "-l", "198.18.0.1", "-c", "256", "-n", "10", "-S", "1k", "-t", "5"))
                .isEqualTo(new EchoLoadOptions(false, "198.18.0.2", 9000, "198.18.0.1", 256, 10, 1024, 0,
                        Duration.ofSeconds(5)));
        assertThat(parse("--server", "--address=198.18.0.2", "--count=3").serveCount()).isEqualTo(3);
        assertThat(parse("--connections", "1000", "-a", "h").connections()).isEqualTo(1000);
    }

    @Test
    void refusalsSayWhyAndExitWithTwo() {
        String[][] cases = {
            {"-c", "0", "-a", "h"}, {"-S", "4", "-a", "h"}, {"-S", "1m", "-a", "h"}, {"-p", "70000", "-a", "h"},
            {"-n", "x", "-a", "h"}, {}, {"-s", "-l", "h"}, {"-a", "h", "extra"}, {"-x"}};
        String[] why = {"--connections must be 1 .. 100000, got '0'", "--size must be 8 .. 65536 bytes, got '4'",
            "--size must be 8 .. 65536 bytes, got '1m'", "--port must be 1 .. 65535, got '70000'",
            "--messages must be 1 .. 100000000, got 'x'", "the client needs --address", "--local is a client option",
            "unexpected argument extra", "invalid option -- 'x'"};
        for (int i = 0; i < cases.length; i++) {
            ToolRunner.Captured r = ToolRunner.runJava(RdmaEchoLoad::run, cases[i]);
            assertThat(r.status()).as("%s", String.join(" ", cases[i])).isEqualTo(2);
            assertThat(r.err()).as("%s", String.join(" ", cases[i])).contains(why[i]);
            assertThat(r.out()).isEmpty();
        }
        ToolRunner.Captured help = ToolRunner.runJava(RdmaEchoLoad::run, "-h");
        assertThat(help.status()).isZero();
        assertThat(help.out()).startsWith("Usage: rdma-echo-load -s").contains("--connections=N");
    }

    @Test
    void messagesCarryTheirNumbers() {
        byte[] a = new byte[16];
        byte[] b = new byte[16];
        RdmaEchoLoad.fill(a, 1, 2);
        RdmaEchoLoad.fill(b, 2, 1);
        assertThat(a).isNotEqualTo(b);
        assertThat(a[0]).isEqualTo((byte) 1);
        assertThat(a[4]).isEqualTo((byte) 2);
        assertThat(RdmaEchoLoad.osThreads()).isPositive();
    }
}
