package dev.verbs4j.perf.jmh;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * Classic posts racing extended send batches on one queue pair, with safepoints forced meanwhile
 * ({@link ProviderLockRace}, in a child JVM so that a frozen JVM fails this test instead of
 * hanging the run): the provider holds its send queue lock from {@code wr_start} to {@code
 * wr_complete}, and a classic post must never wait for it inside its downcall.
 */
class ProviderLockRaceTest {

    @Test
    void classicPostsRacingExtendedBatchesNeverFreezeTheJvm() throws Exception {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process child = new ProcessBuilder(List.of(java.toString(), "--enable-native-access=ALL-UNNAMED", "-Xmx64m",
                "-cp", System.getProperty("java.class.path"), ProviderLockRace.class.getName(), "3000"))
                .redirectErrorStream(true).start();
        StringBuilder out = new StringBuilder();
        Thread reader = Thread.ofPlatform().start(() -> {
            try {
                out.append(new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
            } catch (IOException e) {
                out.append(e);
            }
        });
        if (!child.waitFor(90, TimeUnit.SECONDS)) {
            child.destroyForcibly().waitFor();
            reader.join();
            fail("the child JVM froze (no exit within 90 s of a 3 s run): a classic post waited in the provider "
                    + "for the send queue lock an open batch held; output: " + out);
        }
        reader.join();
        System.out.println("ProviderLockRace: " + out);
        assertThat(child.exitValue()).as(out.toString()).isZero();
        assertThat(out.toString()).containsPattern("batches=[1-9]\\d* posts=\\d+ refused=\\d+ gcs=[1-9]");
        assertThat(out.toString()).doesNotContain("posts=0 refused=0");
    }
}
