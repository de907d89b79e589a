package dev.verbs4j.naaice;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.assertj.core.api.Assertions.assertThat;

/** The byte check of the reference kernels' results, across its 1 MiB chunks. */
class ReferenceKernelsTest {

    @Test
    void firstDifferenceFindsTheFirstOtherByte() {
        try (Arena arena = Arena.ofConfined()) {
            long size = (1 << 20) + 10;
            MemorySegment s = arena.allocate(size);
            s.fill((byte) 7);
            assertThat(ReferenceKernels.firstDifference(s, (byte) 7)).isEqualTo(-1);
            s.set(ValueLayout.JAVA_BYTE, size - 7, (byte) 8);
            assertThat(ReferenceKernels.firstDifference(s, (byte) 7)).isEqualTo(size - 7);
            assertThat(ReferenceKernels.firstDifference(s, (byte) 8)).isZero();
            assertThat(ReferenceKernels.firstDifference(arena.allocate(0), (byte) 1)).isEqualTo(-1);
        }
    }
}
