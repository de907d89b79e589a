package dev.verbs4j.verbs;

import dev.verbs4j.verbs.tools.DevInfo;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

/** On a host whose kernel has no RDMA: clear exceptions, the same answer as ibv_devinfo, no crash, no hang. */
class NoDeviceTest {

    @BeforeAll
    static void hostHasNoRdma() {
        assumeFalse(Files.exists(Path.of("/sys/class/infiniband_verbs")), "this host has RDMA support");
    }

    @Test
    void listingDevicesNamesTheVerbTheErrnoAndWhatToDo() {
        assertThatThrownBy(Device::list)
                .isInstanceOf(VerbsException.class)
                .hasMessageContaining("ibv_get_device_list")
                .hasMessageContaining("ENOSYS")
                .hasMessageContaining("bin/softroce")
                .satisfies(e -> {
                    VerbsException v = (VerbsException) e;
                    assertThat(v.verb()).isEqualTo("ibv_get_device_list");
                    assertThat(v.errno()).isEqualTo(Errno.ENOSYS);
                    assertThat(v.errnoName()).isEqualTo("ENOSYS");
                });
        assertThatThrownBy(() -> Context.open("rxe0")).isInstanceOf(VerbsException.class).hasMessageContaining("ENOSYS");
        assertThatThrownBy(Context::openFirst).isInstanceOf(VerbsException.class);
    }

    @Test
    void devinfoAnswersAsIbvDevinfoDoes() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int rc = DevInfo.run(new String[]{"-v"}, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));

        Process c = new ProcessBuilder("ibv_devinfo", "-v").start();
        String cOut = new String(c.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String cErr = new String(c.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(c.waitFor(60, TimeUnit.SECONDS)).isTrue();

        assertThat(rc & 0xff).isEqualTo(c.exitValue()).isEqualTo(255);
        assertThat(out.toString(StandardCharsets.UTF_8)).isEqualTo(cOut).isEmpty();
        assertThat(err.toString(StandardCharsets.UTF_8)).isEqualTo(cErr)
                .isEqualTo("Failed to get IB devices list: Function not implemented\n");
    }
}
