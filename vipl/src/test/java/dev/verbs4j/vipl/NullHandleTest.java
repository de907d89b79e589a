package dev.verbs4j.vipl;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** §12 test 46 without a device: every function given a NULL handle → VIP_INVALID_PARAMETER, no crash. */
class NullHandleTest {

    private static void throwsInvalid(Runnable r) {
        assertThatThrownBy(r::run).isInstanceOf(VipException.class)
                .extracting(e -> ((VipException) e).code()).isEqualTo(VipReturn.INVALID_PARAMETER);
    }

    @Test
    void test46NullHandlesAreInvalidParameters() {
        VipDescriptor out = VipDescriptor.empty();
        VipCqEntry entry = new VipCqEntry();
        VipNetAddress a = VipNetAddress.of("127.0.0.1", new byte[]{1});
        assertThat(Vipl.closeNic(null)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.destroyVi(null)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.destroyPtag(null, null)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.deregisterMem(null, 0, null)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.destroyCQ(null)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.resizeCQ(null, 16)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.sendDone(null, out)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.recvDone(null, out)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.sendWait(null, 10, out)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.recvWait(null, 10, out)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.cqDone(null, entry)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.cqWait(null, 10, entry)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.sendNotify(null, "c", (ctx, nic, vi, d) -> { })).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.recvNotify(null, "c", (ctx, nic, vi, d) -> { })).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.cqNotify(null, "c", (ctx, nic, vi, recv) -> { })).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.setMemAttributes(null, 0, null, null)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.connectAccept(null, null)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.connectReject(null)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.connectRequest(null, a, a, 10)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.disconnect(null)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.setViAttributes(null, null)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.errorCallback(null, null, null)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.nsInit(null, null)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.nsShutdown(null)).isEqualTo(VipReturn.INVALID_PARAMETER);
        try (Arena arena = Arena.ofConfined()) {
            VipDescriptor d = VipDescriptor.at(arena.allocate(64, 64), 0, 1);
            assertThat(Vipl.postSend(null, d, null)).isEqualTo(VipReturn.INVALID_PARAMETER);
            assertThat(Vipl.postRecv(null, d, null)).isEqualTo(VipReturn.INVALID_PARAMETER);
            throwsInvalid(() -> Vipl.registerMem(null, arena.allocate(64), null));
        }
        throwsInvalid(() -> Vipl.openNic(null));
        throwsInvalid(() -> Vipl.queryNic(null));
        throwsInvalid(() -> Vipl.createPtag(null));
        throwsInvalid(() -> Vipl.createCQ(null, 16));
        throwsInvalid(() -> Vipl.createVi(null, null, null, null));
        throwsInvalid(() -> Vipl.queryVi(null));
        throwsInvalid(() -> Vipl.queryMem(null, 0, null));
        throwsInvalid(() -> Vipl.connectWait(null, a, 0));
        throwsInvalid(() -> Vipl.querySystemManagementInfo(null, 0));
        throwsInvalid(() -> Vipl.nsGetHostByName(null, "localhost", 0));
    }

    /** §9.2.1: an unknown device name → VIP_INVALID_PARAMETER. */
    @Test
    void openNicOfAnUnknownDeviceIsInvalid() {
        throwsInvalid(() -> Vipl.openNic("no_such_device_0"));
    }
}
