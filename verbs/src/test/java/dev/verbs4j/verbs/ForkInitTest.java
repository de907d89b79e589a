package dev.verbs4j.verbs;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** ibv_fork_init succeeds in a fresh process, before any device is opened. */
class ForkInitTest {

    /** Child-JVM entry point. */
    public static final class Child {
        public static void main(String[] args) {
            Context.forkInit();
            System.out.println("fork init ok");
        }
    }

    @Test
    void forkInitInAFreshProcess() throws Exception {
        String java = ProcessHandle.current().info().command().orElseThrow();
        Process p = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-cp",
                System.getProperty("java.class.path"), Child.class.getName()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
        assertThat(out).contains("fork init ok");
        assertThat(p.exitValue()).isZero();
    }
}
