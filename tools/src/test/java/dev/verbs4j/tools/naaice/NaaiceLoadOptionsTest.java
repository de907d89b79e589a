package dev.verbs4j.tools.naaice;

import dev.verbs4j.tools.Cli;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

/** naaice-load's options: refusals with status 2 before anything is connected, the usage, the percentiles. */
class NaaiceLoadOptionsTest {

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int run(String... args) {
        return Cli.run(args, new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8),
                NaaiceLoad::run);
    }

    @Test
    void refusals() {
        assertThat(run("-a", "198.18.0.2", "-c", "0")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("naaice-load: option --clients needs a number from 1 to 100000, got '0'");
        err.reset();
        assertThat(run("-a", "198.18.0.2", "-f", "4")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("option --fncode needs a number from 1 to 3");
        err.reset();
        assertThat(run("-a", "198.18.0.2", "-s", "lots")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("option --size needs a number");
        err.reset();
        assertThat(run("-a", "198.18.0.2", "-S", "-P", "1")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("--serve and --server-pid exclude each other");
        err.reset();
        assertThat(run("-c", "3")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("--address is required");
    }

    @Test
    void usage() {
        assertThat(run("-h")).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8)).startsWith("Usage: naaice-load -a ADDRESS").contains("--clients=N")
                .contains("--server-pid=PID");
    }

    @Test
    void percentilesByNearestRank() {
        long[] sorted = new long[100];
        for (int i = 0; i < 100; i++) {
            sorted[i] = i + 1;
        }
        assertThat(NaaiceLoad.Result.percentile(sorted, 50)).isEqualTo(50);
        assertThat(NaaiceLoad.Result.percentile(sorted, 99)).isEqualTo(99);
        assertThat(NaaiceLoad.Result.percentile(sorted, 100)).isEqualTo(100);
        assertThat(NaaiceLoad.Result.percentile(new long[]{7}, 99)).isEqualTo(7);
        assertThat(NaaiceLoad.Result.percentile(new long[0], 50)).isEqualTo(-1);
    }
}
