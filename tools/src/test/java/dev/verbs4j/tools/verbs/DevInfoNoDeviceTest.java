package dev.verbs4j.tools.verbs;

import dev.verbs4j.verbs.ToolRunner;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

/** devinfo on a host whose kernel has no RDMA: the same answer as ibv_devinfo, no crash, no hang. */
class DevInfoNoDeviceTest {

    @BeforeAll
    static void hostHasNoRdma() {
        assumeFalse(Files.exists(Path.of("/sys/class/infiniband_verbs")), "this host has RDMA support");
    }

    @Test
    void devinfoAnswersAsIbvDevinfoDoes() throws Exception {
        ToolRunner.Captured java = ToolRunner.runJava(DevInfo::run, "-v");

        Process c = new ProcessBuilder("ibv_devinfo", "-v").start();
        String cOut = new String(c.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String cErr = new String(c.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(c.waitFor(60, TimeUnit.SECONDS)).isTrue();

        assertThat(java.status() & 0xff).isEqualTo(c.exitValue()).isEqualTo(255);
        assertThat(java.out()).isEqualTo(cOut).isEmpty();
        assertThat(java.err()).isEqualTo(cErr)
                .isEqualTo("Failed to get IB devices list: Function not implemented\n");
    }
}
