package dev.verbs4j.naaice;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.HexFormat;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The RPC immediates in both directions, the state machines, and the reference kernels. */
class ImmediateAndStateTest {

    private static byte[] hex(String s) {
        return HexFormat.of().parseHex(s.replace(" ", ""));
    }

    /** Asserts for each (from, to) pair of {@code pairs} that the move is legal for {@code role} exactly when {@code legal}. */
    private static void assertLegal(StateMachine.Role role, boolean legal, NaaState... pairs) {
        for (int i = 0; i < pairs.length; i += 2) {
            assertThat(StateMachine.isLegal(role, pairs[i], pairs[i + 1])).as("%s: %s → %s", role, pairs[i], pairs[i + 1])
                    .isEqualTo(legal);
        }
    }

    @Test
    void hostToNaa() {
        assertThat(Immediate.wireBytes(Immediate.request(3))).isEqualTo(hex("00 00 00 83"));
        int imm = Immediate.request(1, 0x11, 0x22, 0x33);
        assertThat(Immediate.wireBytes(imm)).isEqualTo(hex("33 22 11 81"));
        assertThat(Immediate.fromWireBytes(hex("33 22 11 81"))).isEqualTo(imm);
        assertThat(Immediate.functionCode(imm)).isEqualTo(1);
        assertThat(Immediate.userByte(imm, 0)).isEqualTo(0x11);
        assertThat(Immediate.userByte(imm, 1)).isEqualTo(0x22);
        assertThat(Immediate.userByte(imm, 2)).isEqualTo(0x33);
        assertThat(Immediate.request(127) & 0xff).isEqualTo(0xff);
        // the NAA does not require the 0x80 bit
        assertThat(Immediate.functionCode(0x00000001)).isEqualTo(1);
        assertThat(Immediate.functionCode(0x80)).isZero();
        assertThatThrownBy(() -> Immediate.request(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Immediate.request(128)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Immediate.request(1, 256, 0, 0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void naaToHost() {
        assertThat(Immediate.reply(0)).isZero();
        assertThat(Immediate.wireBytes(Immediate.reply(5))).isEqualTo(hex("00 00 05 05"));
        assertThat(Immediate.wireBytes(Immediate.reply(0x10))).isEqualTo(hex("00 00 10 10"));
        assertThat(Immediate.wireBytes(Immediate.reply(0xff))).isEqualTo(hex("00 00 ff ff"));
        // the client accepts every style: low byte (C NAA), bits 8..15 (C host), both
        assertThat(Immediate.returnCode(0)).isZero();
        assertThat(Immediate.returnCode(0x00000005)).isEqualTo(5);
        assertThat(Immediate.returnCode(0x00000500)).isEqualTo(5);
        assertThat(Immediate.returnCode(0x00000505)).isEqualTo(5);
        for (int e = 0; e < 256; e++) {
            assertThat(Immediate.returnCode(Immediate.reply(e))).isEqualTo(e);
            // the C host reads bits 8..15
            assertThat((Immediate.reply(e) >>> 8) & 0xff).isEqualTo(e);
        }
    }

    @Test
    void stateCodes() {
        int[] codes = {0, 1, 2, 3, 10, 11, 12, 20, 21, 22, 30, 40};
        NaaState[] states = NaaState.values();
        for (int i = 0; i < codes.length; i++) {
            assertThat(states[i].code()).isEqualTo(codes[i]);
            assertThat(NaaState.of(codes[i])).isEqualTo(states[i]);
        }
        assertThatThrownBy(() -> NaaState.of(4)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void clientLifecycle() {
        StateMachine m = new StateMachine(StateMachine.Role.CLIENT);
        for (NaaState s : List.of(NaaState.READY, NaaState.CONNECTED, NaaState.MRSP_SENDING, NaaState.MRSP_RECEIVING,
                NaaState.MRSP_DONE, NaaState.DATA_SENDING, NaaState.DATA_RECEIVING, NaaState.FINISHED, NaaState.DATA_SENDING,
                NaaState.DATA_RECEIVING, NaaState.FINISHED, NaaState.ERROR, NaaState.DATA_SENDING, NaaState.ERROR,
                NaaState.DISCONNECTED)) {
            m.moveTo(s);
            assertThat(m.state()).isEqualTo(s);
        }
        assertThatThrownBy(() -> m.moveTo(NaaState.ERROR)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> m.moveTo(NaaState.INIT)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void clientIllegalTransitions() {
        var c = StateMachine.Role.CLIENT;
        assertLegal(c, false, NaaState.INIT, NaaState.CONNECTED, NaaState.CONNECTED, NaaState.DATA_SENDING,
                NaaState.MRSP_SENDING, NaaState.MRSP_DONE, NaaState.MRSP_DONE, NaaState.FINISHED,
                NaaState.DATA_SENDING, NaaState.FINISHED, NaaState.DATA_SENDING, NaaState.CALCULATING,
                NaaState.FINISHED, NaaState.MRSP_SENDING, NaaState.DISCONNECTED, NaaState.INIT,
                NaaState.DISCONNECTED, NaaState.ERROR, NaaState.ERROR, NaaState.ERROR);
        for (NaaState s : NaaState.values()) {
            if (s != NaaState.ERROR && s != NaaState.DISCONNECTED) {
                assertThat(StateMachine.isLegal(c, s, NaaState.ERROR)).as("%s → ERROR", s).isTrue();
            }
            if (s != NaaState.DISCONNECTED) {
                assertThat(StateMachine.isLegal(c, s, NaaState.DISCONNECTED)).as("%s → DISCONNECTED", s).isTrue();
            }
        }
        StateMachine m = new StateMachine(c);
        assertThatThrownBy(() -> m.moveTo(NaaState.MRSP_DONE)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("INIT (0)").hasMessageContaining("MRSP_DONE (12)");
        assertThat(m.state()).isEqualTo(NaaState.INIT);
    }

    @Test
    void naaLifecycle() {
        StateMachine m = new StateMachine(StateMachine.Role.NAA);
        for (NaaState s : List.of(NaaState.CONNECTED, NaaState.MRSP_RECEIVING, NaaState.MRSP_SENDING, NaaState.MRSP_RECEIVING,
                NaaState.MRSP_SENDING, NaaState.MRSP_DONE, NaaState.DATA_RECEIVING, NaaState.CALCULATING, NaaState.DATA_SENDING,
                NaaState.DATA_RECEIVING, NaaState.CALCULATING, NaaState.DATA_SENDING, NaaState.DATA_RECEIVING,
                NaaState.FINISHED, NaaState.DISCONNECTED)) {
            m.moveTo(s);
        }
        var n = StateMachine.Role.NAA;
        assertLegal(n, false, NaaState.INIT, NaaState.READY, NaaState.MRSP_RECEIVING, NaaState.MRSP_DONE,
                NaaState.MRSP_DONE, NaaState.CALCULATING, NaaState.DATA_RECEIVING, NaaState.DATA_SENDING,
                NaaState.CALCULATING, NaaState.DATA_RECEIVING, NaaState.ERROR, NaaState.DATA_RECEIVING,
                NaaState.FINISHED, NaaState.FINISHED);
        assertLegal(n, true, NaaState.ERROR, NaaState.FINISHED, NaaState.DATA_SENDING, NaaState.FINISHED);
    }

    @Test
    void referenceKernelsAddModulo256() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment a = arena.allocate(1000 + 7);
            for (int i = 0; i < a.byteSize(); i++) {
                a.set(ValueLayout.JAVA_BYTE, i, (byte) i);
            }
            MemorySegment b = arena.allocate(3);
            b.fill((byte) 0xff);
            KernelCall call = new KernelCall(2, Immediate.request(2), 1, List.of(a, b), List.of(RegionFlags.INPUT, 0), List.of());
            assertThat(ReferenceKernels.all().get(2).run(call)).isZero();
            for (int i = 0; i < a.byteSize(); i++) {
                assertThat(a.get(ValueLayout.JAVA_BYTE, i)).isEqualTo((byte) (i + 2));
            }
            assertThat(b.toArray(ValueLayout.JAVA_BYTE)).containsExactly(1, 1, 1);
            assertThat(ReferenceKernels.ADD_ONE.run(call)).isZero();
            assertThat(b.toArray(ValueLayout.JAVA_BYTE)).containsExactly(2, 2, 2);
            assertThat(ReferenceKernels.NO_OP.run(call)).isZero();
            assertThat(b.toArray(ValueLayout.JAVA_BYTE)).containsExactly(2, 2, 2);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}
