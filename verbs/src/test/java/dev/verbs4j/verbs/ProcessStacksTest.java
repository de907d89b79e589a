package dev.verbs4j.verbs;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** What the device tests report of a C side that did not finish: where each of its threads waited. */
class ProcessStacksTest {

    @Test
    void namesEachThreadAndWhereItWaits() throws Exception {
        Process p = new ProcessBuilder("sleep", "60").start();
        try {
            Path wchan = Path.of("/proc/" + p.pid() + "/wchan");
            for (int i = 0; i < 100 && !Files.readString(wchan).contains("nanosleep"); i++) {
                Thread.sleep(100);
            }
            String where = ToolRunner.processStacks(p.pid());
            // the kernel's wait channel of the sleeping process, and its frames as gdb or the kernel shows them
            assertThat(where).contains("thread " + p.pid() + " sleep in hrtimer_nanosleep");
            assertThat(where.lines().filter(l -> l.contains("nanosleep")).count()).isGreaterThan(1);
            assertThat(where.lines().filter(l -> l.startsWith("    thread ")).count()).isEqualTo(1);
        } finally {
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void aGoneProcessHasNoThreads() throws Exception {
        Process p = new ProcessBuilder("true").start();
        p.waitFor(10, TimeUnit.SECONDS);
        String where = ToolRunner.processStacks(p.pid());
        assertThat(where).doesNotContain("thread ");
        // and gdb, which could not attach, says why it shows no frames
        assertThat(where).contains("(gdb: no frames; it said: ");
    }
}
