package dev.verbs4j.verbs;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** A JVM without --enable-native-access gets a message that says which option to add. */
class NativeAccessTest {

    /** Child-JVM entry point: lists devices and prints what happened. */
    public static final class ListDevices {
        public static void main(String[] args) {
            try {
                System.out.println("devices: " + Device.list());
            } catch (IllegalStateException e) {
                System.out.println("refused: " + e.getMessage());
            } catch (VerbsException e) {
                System.out.println("verbs: " + e.getMessage());
            }
        }
    }

    @Test
    void withoutNativeAccessTheMessageNamesTheOption() throws Exception {
        String out = runChild(false);
        assertThat(out).startsWith("refused: ").contains("--enable-native-access=ALL-UNNAMED");
    }

    @Test
    void withNativeAccessTheVerbsAreReached() throws Exception {
        String out = runChild(true);
        assertThat(out).doesNotStartWith("refused").matches("(devices|verbs): .*\\R?");
    }

    private static String runChild(boolean nativeAccess) throws Exception {
        String java = ProcessHandle.current().info().command().orElseThrow();
        List<String> cmd = new ArrayList<>(List.of(java));
        if (nativeAccess) {
            cmd.add("--enable-native-access=ALL-UNNAMED");
        }
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), ListDevices.class.getName()));
        Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).isZero();
        return out;
    }
}
