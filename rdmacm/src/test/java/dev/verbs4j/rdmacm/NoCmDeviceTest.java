package dev.verbs4j.rdmacm;

import dev.verbs4j.verbs.VerbsException;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

/**
 * On a host whose kernel has no RDMA connection manager (this build host), the API fails with an
 * exception naming the librdmacm function and errno, never a crash.
 */
class NoCmDeviceTest {

    @Test
    void eventChannelNamesTheFunctionAndErrno() {
        assumeFalse(Files.exists(Path.of("/dev/infiniband/rdma_cm")), "this host has an RDMA connection manager");
        assertThatThrownBy(EventChannel::create)
                .isInstanceOf(VerbsException.class)
                .hasMessageContaining("rdma_create_event_channel")
                .satisfies(e -> org.assertj.core.api.Assertions.assertThat(((VerbsException) e).errno()).isPositive());
    }

    @Test
    void synchronousIdNamesTheFunctionAndErrno() {
        assumeFalse(Files.exists(Path.of("/dev/infiniband/rdma_cm")), "this host has an RDMA connection manager");
        assertThatThrownBy(() -> CmId.createSynchronous(PortSpace.TCP))
                .isInstanceOf(VerbsException.class)
                .hasMessageContaining("rdma_create_id");
    }

    @Test
    void addressInfoNeedsANodeOrAService() {
        assertThatThrownBy(() -> AddressInfo.resolve(null, null, 0, PortSpace.TCP))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("node");
    }
}
