package dev.verbs4j.vipl;

import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/** The allocation-free structures of the data path, without a device: the int-keyed map and the descriptor ring. */
class DataPathStructuresTest {

    @Test
    void intMapAgreesWithAHashMapUnderRandomPutsAndRemoves() {
        IntMap<String> map = new IntMap<>();
        Map<Integer, String> expected = new HashMap<>();
        Random random = new Random(42);
        for (int step = 0; step < 200_000; step++) {
            // few distinct keys, many collisions: keys that differ in their high bits only
            int key = random.nextInt(300) << 20 | random.nextInt(4);
            if (random.nextInt(3) == 0) {
                assertThat(map.remove(key)).isEqualTo(expected.remove(key));
            } else {
                String v = "v" + step;
                assertThat(map.put(key, v)).isEqualTo(expected.put(key, v));
            }
            if (step % 1000 == 0) {
                assertThat(map.size()).isEqualTo(expected.size());
                for (Map.Entry<Integer, String> e : expected.entrySet()) {
                    assertThat(map.get(e.getKey())).isEqualTo(e.getValue());
                }
                assertThat(map.values()).containsExactlyInAnyOrderElementsOf(expected.values());
            }
        }
        assertThat(map.get(0x7777777)).isNull();
        map.clear();
        assertThat(map.size()).isZero();
        assertThat(map.values()).isEmpty();
    }

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
