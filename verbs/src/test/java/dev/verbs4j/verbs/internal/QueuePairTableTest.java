package dev.verbs4j.verbs.internal;

import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The queue-pair table agrees with a HashMap under random puts and removes, growing, and looks up without allocating. */
class QueuePairTableTest {

    /** Owners have no equals of their own: the table compares them by identity, as these constants compare in the HashMap. */
    private static final String[] VALUES = {"c0", "c1", "c2"};

    @Test
    void agreesWithAHashMap() {
        SplittableRandom random = new SplittableRandom(15);
        QueuePairTable<String> table = new QueuePairTable<>(4);
        Map<Integer, String> reference = new HashMap<>();
        for (int step = 0; step < 300_000; step++) {
            // few distinct keys, so that runs collide, wrap around the array and are removed from
            // the middle; some differ in their high bits only
            int key = switch (step % 3) {
                case 0 -> random.nextInt(300);
                case 1 -> random.nextInt(300) * 0x10001;
                default -> random.nextInt(300) << 20 | random.nextInt(4);
            };
            int what = random.nextInt(12);
            if (what < 5) {
                String v = VALUES[random.nextInt(3)];
                assertThat(table.put(key, v)).as("put %d", key).isSameAs(reference.put(key, v));
            } else if (what < 7) {
                String v = VALUES[random.nextInt(3)];
                assertThat(table.remove(key, v)).as("remove %d if %s", key, v).isEqualTo(reference.remove(key, v));
            } else if (what < 9) {
                assertThat(table.remove(key)).as("remove %d", key).isSameAs(reference.remove(key));
            } else {
                assertThat(table.get(key)).as("get %d", key).isSameAs(reference.get(key));
            }
            assertThat(table.size()).isEqualTo(reference.size());
            if (step % 10_000 == 0) {
                assertThat(table.values()).containsExactlyInAnyOrderElementsOf(reference.values());
            }
        }
        for (Map.Entry<Integer, String> e : reference.entrySet()) {
            assertThat(table.get(e.getKey())).isSameAs(e.getValue());
        }
        assertThat(table.remove(-1, "c0")).isFalse();
        assertThat(table.remove(-1)).isNull();
        table.clear();
        assertThat(table.isEmpty()).isTrue();
        assertThat(table.values()).isEmpty();
        assertThat(table.get(0)).isNull();
    }

    @Test
    void aNullValueIsRefusedWithItsKey() {
        QueuePairTable<String> table = new QueuePairTable<>();
        assertThatThrownBy(() -> table.put(17, null)).isInstanceOf(NullPointerException.class).hasMessageContaining("17");
        assertThat(table.remove(17, null)).isFalse();
        assertThat(table.size()).isZero();
    }

    @Test
    void lookupsAllocateNothing() {
        QueuePairTable<String> table = new QueuePairTable<>(300);
        for (int qp = 17; qp < 317; qp++) {
            table.put(qp * 7, "c" + qp);
        }
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long found = lookups(table, 100_000); // warm up
        long before = mx.getCurrentThreadAllocatedBytes();
        found += lookups(table, 1_000_000);
        long allocated = mx.getCurrentThreadAllocatedBytes() - before;
        assertThat(found).isEqualTo(1_100_000L * 300 / 1000);
        assertThat(allocated).as("bytes allocated by 1,000,000 lookups").isLessThan(1024);
    }

    private static long lookups(QueuePairTable<String> table, int n) {
        long found = 0;
        for (int i = 0; i < n; i++) {
            if (table.get(i % 1000 * 7) != null) {
                found++;
            }
        }
        return found;
    }
}
