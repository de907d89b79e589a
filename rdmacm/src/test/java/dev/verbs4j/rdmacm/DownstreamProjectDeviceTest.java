package dev.verbs4j.rdmacm;

import dev.verbs4j.verbs.TestBed;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.File;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * examples/downstream, a user's project built by bin/test against the installed artifacts (its
 * pom imports verbs4j-bom and depends on verbs4j-rdmacm), runs on the module path and on the
 * class path with the documented JVM options: an RC SEND/RECV on the loopback device.
 */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_1)
@Timeout(600)
class DownstreamProjectDeviceTest {

    private static final String MAIN = "com.example.downstream.Main";

    @Test
    void runsOnTheModulePath() throws Exception {
        Path dir = downstream();
        List<String> cmd = new ArrayList<>(List.of(java(),
                "--enable-native-access=dev.verbs4j.bindings,dev.verbs4j.verbs,dev.verbs4j.rdmacm",
                "--module-path", dir.resolve("verbs4j-downstream.jar") + File.pathSeparator + dir.resolve("lib"),
                "--module", "com.example.downstream/" + MAIN));
        runAndCheck(cmd);
    }

    @Test
    void runsOnTheClassPath() throws Exception {
        Path dir = downstream();
        StringBuilder cp = new StringBuilder(dir.resolve("verbs4j-downstream.jar").toString());
        try (Stream<Path> jars = Files.list(dir.resolve("lib"))) {
            jars.sorted().forEach(j -> cp.append(File.pathSeparator).append(j));
        }
        List<String> cmd = new ArrayList<>(List.of(java(), "--enable-native-access=ALL-UNNAMED", "-cp", cp.toString(), MAIN));
        runAndCheck(cmd);
    }

    private static void runAndCheck(List<String> cmd) throws IOException, InterruptedException {
        // a short run on an emulated CPU: C1 only and the serial GC start it faster (no effect on what it does)
        cmd.addAll(1, List.of("-Xshare:auto", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"));
        TestBed.Host lo = TestBed.loopback();
        cmd.add(lo.device());
        cmd.add(Integer.toString(lo.gidIndex()));
        System.out.println("running " + String.join(" ", cmd));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
        byte[] out;
        try {
            out = p.getInputStream().readAllBytes();
            assertThat(p.waitFor(300, TimeUnit.SECONDS)).as("the downstream program ends").isTrue();
        } finally {
            p.destroyForcibly();
        }
        String output = new String(out, StandardCharsets.UTF_8);
        System.out.print(output);
        assertThat(p.exitValue()).as("exit code; output:%n%s", output).isZero();
        assertThat(output.lines().toList()).as("output").anySatisfy(line -> assertThat(line)
                .startsWith("OK: RC SEND/RECV of 4096 bytes on " + lo.device() + " (GID index " + lo.gidIndex() + ","));
    }

    /** examples/downstream/target of this checkout, where the built jar and its lib/ must be. */
    private static Path downstream() throws URISyntaxException {
        String override = System.getenv("VERBS4J_DOWNSTREAM_DIR");
        Path dir;
        if (override != null && !override.isEmpty()) {
            dir = Path.of(override);
        } else {
            // .../rdmacm/target/test-classes -> the checkout's root
            Path classes = Path.of(DownstreamProjectDeviceTest.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            dir = classes.getParent().getParent().getParent().resolve("examples/downstream/target");
        }
        assertThat(dir.resolve("verbs4j-downstream.jar"))
                .as("the downstream project's jar; bin/test builds it after mvn install"
                        + " (mvn -o -f examples/downstream/pom.xml package)")
                .isRegularFile();
        assertThat(dir.resolve("lib")).as("its runtime dependencies").isDirectoryContaining("glob:**/verbs4j-bindings-*.jar")
                .isDirectoryContaining("glob:**/verbs4j-verbs-*.jar").isDirectoryContaining("glob:**/verbs4j-rdmacm-*.jar");
        return dir;
    }

    private static String java() {
        return ProcessHandle.current().info().command().orElseThrow();
    }
}
