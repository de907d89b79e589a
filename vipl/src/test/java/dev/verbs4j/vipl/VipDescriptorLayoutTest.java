package dev.verbs4j.vipl;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemoryLayout.PathElement;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The descriptor's binary layout (§9.10.2, Appendix B §10): golden offsets and bytes. */
class VipDescriptorLayoutTest {

    private static long offset(java.lang.foreign.StructLayout l, String field) {
        return l.byteOffset(PathElement.groupElement(field));
    }

    /** §10.1: the control segment's fields at bytes 7:0, 11:8, 13:12, 15:14, 19:16, 23:20, 27:24, 31:28. */
    @Test
    void controlSegmentOffsets() {
        var cs = VipDescriptor.CONTROL_SEGMENT;
        assertThat(cs.byteSize()).isEqualTo(32);
        assertThat(offset(cs, "Next")).isZero();
        assertThat(offset(cs, "NextHandle")).isEqualTo(8);
        assertThat(offset(cs, "SegCount")).isEqualTo(12);
        assertThat(offset(cs, "Control")).isEqualTo(14);
        assertThat(offset(cs, "Reserved")).isEqualTo(16);
        assertThat(offset(cs, "ImmediateData")).isEqualTo(20);
        assertThat(offset(cs, "Length")).isEqualTo(24);
        assertThat(offset(cs, "Status")).isEqualTo(28);
    }

    /** §10.3/§10.4: address and data segments of 16 bytes, address 7:0, handle 11:8, last word 15:12. */
    @Test
    void segmentOffsets() {
        for (var s : new java.lang.foreign.StructLayout[]{VipDescriptor.ADDRESS_SEGMENT, VipDescriptor.DATA_SEGMENT}) {
            assertThat(s.byteSize()).isEqualTo(16);
            assertThat(offset(s, "Data")).isZero();
            assertThat(offset(s, "Handle")).isEqualTo(8);
        }
        assertThat(offset(VipDescriptor.ADDRESS_SEGMENT, "Reserved")).isEqualTo(12);
        assertThat(offset(VipDescriptor.DATA_SEGMENT, "Length")).isEqualTo(12);
        assertThat(VipDescriptor.size(0)).isEqualTo(32);
        assertThat(VipDescriptor.size(3)).isEqualTo(80);
    }

    /** §10.1: little-endian fields where the specification puts them; segment i at 32 + 16 i. */
    @Test
    void fieldsLandOnTheirBytesLittleEndian() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment mem = arena.allocate(256, 64);
            VipDescriptor d = VipDescriptor.at(mem, 64, 3);
            d.rdma(VipControl.OP_RDMAWRITE, VipControl.IMMEDIATE, 0x1122334455667788L, 0xAABBCCDD)
                    .immediateData(0x01020304)
                    .addData(0x1000, 0x42, 7).addData(0x2000, 0x43, 9);
            MemorySegment raw = mem.asSlice(64);
            assertThat(raw.get(ValueLayout.JAVA_SHORT, 12)).isEqualTo((short) 3);
            assertThat(raw.get(ValueLayout.JAVA_BYTE, 14)).isEqualTo((byte) 0x05);
            assertThat(raw.get(ValueLayout.JAVA_BYTE, 20)).isEqualTo((byte) 0x04);
            assertThat(raw.get(ValueLayout.JAVA_INT, 24)).isEqualTo(16);
            assertThat(raw.get(ValueLayout.JAVA_INT, 28)).isZero();
            assertThat(raw.get(ValueLayout.JAVA_BYTE, 32)).isEqualTo((byte) 0x88);
            assertThat(raw.get(ValueLayout.JAVA_INT, 40)).isEqualTo(0xAABBCCDD);
            assertThat(raw.get(ValueLayout.JAVA_INT, 44)).isZero();
            assertThat(raw.get(ValueLayout.JAVA_LONG, 48)).isEqualTo(0x1000);
            assertThat(raw.get(ValueLayout.JAVA_INT, 56)).isEqualTo(0x42);
            assertThat(raw.get(ValueLayout.JAVA_INT, 60)).isEqualTo(7);
            assertThat(raw.get(ValueLayout.JAVA_LONG, 64)).isEqualTo(0x2000);
            assertThat(d.segCount()).isEqualTo(3);
            assertThat(d.capacity()).isEqualTo(3);
            d.status(VipStatus.DONE | VipStatus.OP_RECEIVE);
            assertThat(raw.get(ValueLayout.JAVA_INT, 28)).isEqualTo(0x10001);
            assertThat(d.isDone()).isTrue();
        }
    }

    /** §6.1: descriptors are 64-byte aligned; the flyweight refuses anything else, and heap memory. */
    @Test
    void alignmentAndNativeMemoryAreRequired() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment mem = arena.allocate(256, 64);
            assertThatThrownBy(() -> VipDescriptor.at(mem, 32, 1)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("64-byte");
            assertThatThrownBy(() -> VipDescriptor.at(MemorySegment.ofArray(new byte[256]), 0, 1))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> VipDescriptor.at(mem, 192, 3)).isInstanceOf(IndexOutOfBoundsException.class);
            assertThat(VipDescriptor.empty().toString()).contains("unset");
        }
    }
}
