package dev.verbs4j.vipl;

import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;

import static org.assertj.core.api.Assertions.assertThat;

/** The allocation-free structures of the data path, without a device: the descriptor ring (the queue-pair table is tested in verbs). */
class DataPathStructuresTest {

    @Test
    void ringIsAFifoThatGrowsAcrossTheWrap() {
        Ring<Posted> q = new Ring<>();
        long next = 0;
        long first = 0;
        for (int round = 0; round < 50; round++) {
            int adds = 3 + round % 40;
            for (int i = 0; i < adds; i++) {
                Posted p = new Posted();
                p.reset(MemorySegment.NULL, next++, 0);
                q.addLast(p);
            }
            assertThat(q.peekLast().seq).isEqualTo(next - 1);
            for (int i = 0; i < q.size(); i++) {
                assertThat(q.get(i).seq).isEqualTo(first + i);
            }
            int removes = adds - 1;
            for (int i = 0; i < removes; i++) {
                assertThat(q.pollFirst().seq).isEqualTo(first++);
            }
        }
        long seq = first;
        for (Posted p : q) {
            assertThat(p.seq).isEqualTo(seq++);
        }
        assertThat(seq).isEqualTo(next);
        while (!q.isEmpty()) {
            q.pollFirst();
        }
        assertThat(q.pollFirst()).isNull();
        assertThat(q.peekFirst()).isNull();
    }
}
