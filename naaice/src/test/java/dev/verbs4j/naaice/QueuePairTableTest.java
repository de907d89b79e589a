package dev.verbs4j.naaice;

import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/** The queue-pair table agrees with a HashMap under random puts and removes, growing, and looks up without allocating. */
class QueuePairTableTest {

    /** Connections have no equals: the table compares them by identity, as these constants compare in the HashMap. */
    private static final String[] VALUES = {"c0", "c1", "c2"};

    @Test
    void agreesWithAHashMap() {
        SplittableRandom random = new SplittableRandom(15);
        QueuePairTable<String> table = new QueuePairTable<>(4);
        Map<Integer, String> reference = new HashMap<>();
        for (int step = 0; step < 200_000; step++) {
            // few distinct numbers, so that runs collide, wrap around the array and are removed from the middle
            int qp = random.nextInt(300) * (step % 2 == 0 ? 1 : 0x10001);
            int what = random.nextInt(10);
            if (what < 4) {
                String v = VALUES[random.nextInt(3)];
                table.put(qp, v);
                reference.put(qp, v);
            } else if (what < 7) {
                String v = VALUES[random.nextInt(3)];
                assertThat(table.remove(qp, v)).as("remove %d", qp).isEqualTo(reference.remove(qp, v));
            } else {
                assertThat(table.get(qp)).as("get %d", qp).isEqualTo(reference.get(qp));
            }
            assertThat(table.size()).isEqualTo(reference.size());
        }
        for (Map.Entry<Integer, String> e : reference.entrySet()) {
            assertThat(table.get(e.getKey())).isEqualTo(e.getValue());
        }
        assertThat(table.remove(-1, "c0")).isFalse();
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
