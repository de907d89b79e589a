package dev.verbs4j.tools;

import dev.verbs4j.tools.naaice.NaaiceServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The operators' log format and the levels of -v and -q. */
class OperatorLogTest {

    private static final String TIME = "\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z";
    private static final System.Logger SERVER = System.getLogger("dev.verbs4j.naaice.NaaServer");

    private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    private final PrintStream log = new PrintStream(bytes, true, StandardCharsets.UTF_8);

    @AfterEach
    void restoreLogging() {
        OperatorLog.uninstall();
    }

    private List<String> lines() {
        return bytes.toString(StandardCharsets.UTF_8).lines().toList();
    }

    private void logEachLevel() {
        SERVER.log(System.Logger.Level.ERROR, "error");
        SERVER.log(System.Logger.Level.WARNING, "warning");
        SERVER.log(System.Logger.Level.INFO, "info");
        SERVER.log(System.Logger.Level.DEBUG, "debug");
        SERVER.log(System.Logger.Level.TRACE, "trace");
    }

    @Test
    void oneLineWithTimeLevelComponentAndMessage() {
        OperatorLog.install(log);
        SERVER.log(System.Logger.Level.INFO, "NAAICE connection {0} from {1} established", 3, "/198.18.0.1:4242");
        SERVER.log(System.Logger.Level.WARNING, "two\nlines");

        assertThat(lines()).hasSize(2);
        assertThat(lines().get(0)).matches(TIME + " INFO  NaaServer: NAAICE connection 3 from /198.18.0.1:4242 established");
        assertThat(lines().get(1)).matches(TIME + " WARN  NaaServer: two lines");
    }

    @Test
    void throwableOnTheLinesAfter() {
        OperatorLog.install(log);
        SERVER.log(System.Logger.Level.ERROR, "accept failed", new IOException("no route"));

        assertThat(lines().get(0)).matches(TIME + " ERROR NaaServer: accept failed");
        assertThat(lines().get(1)).isEqualTo("java.io.IOException: no route");
        assertThat(lines().get(2)).startsWith("\tat ");
    }

    @Test
    void infoAndUpByDefault() {
        OperatorLog.install(log);
        logEachLevel();
        assertThat(lines()).extracting(l -> l.substring(l.lastIndexOf(' ') + 1))
                .containsExactly("error", "warning", "info");
    }

    @Test
    void verboseAddsDebugQuietLeavesWarnings() throws Exception {
        OperatorLog.install(log);
        // naaice-server sets the level once its options are parsed (whether the server then
        // starts or, without an RDMA device, fails); -d 0 stops it at once
        String[] verbose = {"-v", "-b", "127.0.0.1", "-p", "0", "-d", "0"};
        Cli.run(verbose, new PrintStream(java.io.OutputStream.nullOutputStream()), new PrintStream(java.io.OutputStream.nullOutputStream()),
                NaaiceServer::run);
        bytes.reset();
        logEachLevel();
        assertThat(lines()).extracting(l -> l.substring(l.lastIndexOf(' ') + 1))
                .containsExactly("error", "warning", "info", "debug");
        assertThat(lines().get(3)).matches(TIME + " DEBUG NaaServer: debug");

        String[] quiet = {"--quiet", "-b", "127.0.0.1", "-p", "0", "-d", "0"};
        Cli.run(quiet, new PrintStream(java.io.OutputStream.nullOutputStream()), new PrintStream(java.io.OutputStream.nullOutputStream()),
                NaaiceServer::run);
        bytes.reset();
        logEachLevel();
        assertThat(lines()).extracting(l -> l.substring(l.lastIndexOf(' ') + 1)).containsExactly("error", "warning");
    }

    @Test
    void levelsUnchangedWhenNothingIsInstalled() {
        OperatorLog.verbosity(2);
        assertThat(java.util.logging.Logger.getLogger("").getLevel()).isEqualTo(java.util.logging.Level.INFO);
    }
}
