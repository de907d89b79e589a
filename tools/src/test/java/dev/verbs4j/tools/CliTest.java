package dev.verbs4j.tools;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

/** The tools' entry point: the status a tool returns, 1 and the trace for what it throws. */
class CliTest {

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int run(Cli.Tool tool, String... args) {
        return Cli.run(args, new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8),
                tool);
    }

    @Test
    void theToolsStatusAndStreams() {
        assertThat(run((args, o, e) -> {
            o.print(args[0]);
            e.print("warning");
            return 2;
        }, "hello")).isEqualTo(2);
        assertThat(out.toString(StandardCharsets.UTF_8)).isEqualTo("hello");
        assertThat(err.toString(StandardCharsets.UTF_8)).isEqualTo("warning");
    }

    @Test
    void anExceptionIsStatusOneWithItsTrace() {
        assertThat(run((args, o, e) -> {
            throw new IllegalStateException("broken");
        })).isEqualTo(1);
        assertThat(err.toString(StandardCharsets.UTF_8)).startsWith("Exception in thread \"")
                .contains("java.lang.IllegalStateException: broken").contains("\tat ");
    }
}
