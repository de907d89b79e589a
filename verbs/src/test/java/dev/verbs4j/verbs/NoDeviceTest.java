package dev.verbs4j.verbs;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

/** On a host whose kernel has no RDMA: clear exceptions, no crash, no hang. */
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
}
