package dev.verbs4j.verbs;

import org.junit.jupiter.api.Test;

import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** How the device tests decide from {@code rdma res show cm_id} that an RDMA CM server can be connected to. */
class CmListeningTest {

    private static final Set<String> DEVICES = Set.of("rxe_lo", "rxe_a", "rxe_b");

    @Test
    void aWildcardListenerIsReadyOnlyOnceEveryDeviceListsIt() {
        // as the kernel lists a wildcard listener while it adds it to the devices one by one
        String one = "link rxe_lo/- cm-idn 0 state LISTEN ps TCP pid 161 comm ib_send_lat src-addr 0.0.0.0:19263 \n";
        String all = one
                + "link rxe_a/- cm-idn 0 state LISTEN ps TCP pid 161 comm ib_send_lat src-addr 0.0.0.0:19263 \n"
                + "link rxe_b/- cm-idn 0 state LISTEN ps TCP pid 161 comm ib_send_lat src-addr 0.0.0.0:19263 \n";
        assertThat(ToolRunner.cmListening("", 19263, DEVICES)).isFalse();
        assertThat(ToolRunner.cmListening(one, 19263, DEVICES)).isFalse();
        assertThat(ToolRunner.cmListening(all, 19263, DEVICES)).isTrue();
        assertThat(ToolRunner.cmListening(all, 19264, DEVICES)).as("another port").isFalse();
        assertThat(ToolRunner.cmListening(all, 1926, DEVICES)).as("a prefix of the port").isFalse();
    }

    @Test
    void aListenerOnOneAddressIsReadyOnItsDevice() {
        String bound = "link rxe_a/1 cm-idn 3 state LISTEN ps TCP pid 90 comm java src-addr 198.18.0.1:7471 \n"
                + "link rxe_a/1 cm-idn 4 state CONNECT ps TCP pid 90 comm java src-addr 198.18.0.1:7471 dst-addr 198.18.0.2:40000\n";
        assertThat(ToolRunner.cmListening(bound, 7471, DEVICES)).isTrue();
        String connected = "link rxe_a/1 cm-idn 4 state CONNECT ps TCP pid 90 comm java src-addr 198.18.0.1:7471 dst-addr 198.18.0.2:40000\n";
        assertThat(ToolRunner.cmListening(connected, 7471, DEVICES)).as("a connection, no listener").isFalse();
    }
}
