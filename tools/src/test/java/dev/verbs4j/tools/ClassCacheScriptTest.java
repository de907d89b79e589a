package dev.verbs4j.tools;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The class cache of {@code bin/verbs4j} ({@code bin/lib/cds.sh}), on the host: which cache a run
 * uses or records, that the first run leaves a complete cache under its final name and a later
 * run starts from it, and the cases that run without one. The runs are of a JDK tool (no device
 * needed), through the script's functions with this JVM's JDK.
 */
class ClassCacheScriptTest {

    private static final Path ROOT = Path.of(System.getProperty("user.dir")).getParent();
    private static final String JDK = Path.of(System.getProperty("java.home")).toString();
    private static final int VERSION = Runtime.version().feature();

    @TempDir
    Path dir;

    /** Runs bash with the scripts sourced and {@code script} after; its output (stdout, then stderr after a line "--"). */
    private Result bash(String script, Map<String, String> env) throws IOException, InterruptedException {
        String prelude = ". '" + ROOT.resolve("bin/lib/java.sh") + "'; . '" + ROOT.resolve("bin/lib/cds.sh") + "'; ";
        ProcessBuilder pb = new ProcessBuilder("bash", "-c", prelude + script);
        pb.environment().remove("VERBS4J_CDS");
        pb.environment().remove("VERBS4J_JAVA_OPTS");
        pb.environment().put("VERBS4J_CDS_DIR", dir.resolve("cache").toString());
        pb.environment().putAll(env);
        Path out = dir.resolve("out.txt");
        Path err = dir.resolve("err.txt");
        Process p = pb.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("bash ended").isTrue();
        return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8), Files.readString(err, StandardCharsets.UTF_8));
    }

    private record Result(int status, String out, String err) {
    }

    private Path modules() throws IOException {
        Path m = Files.createDirectories(dir.resolve("modules"));
        Files.writeString(m.resolve("a.jar"), "not really a jar");
        return m;
    }

    private static final String PLAN = "verbs4j_cds_plan \"$JDK_HOME\" \"$MODS\" some-tool \"$ROOT\"; "
            + "echo \"mode=$VERBS4J_CDS_MODE\"; echo \"file=${VERBS4J_CDS_FILE:-}\"; echo \"opts=${VERBS4J_CDS_OPTS[*]:-}\"";

    private Map<String, String> env(Path modules) {
        return Map.of("JDK_HOME", JDK, "MODS", modules.toString(), "ROOT", ROOT.toString());
    }

    @Test
    void firstRunRecordsAndLaterRunsUseTheCache() throws Exception {
        Path mods = modules();
        Result plan = bash(PLAN, env(mods));
        assertThat(plan.out()).contains("mode=record");
        String suffix = VERSION >= 25 ? ".aot" : ".jsa";
        Path file = Path.of(line(plan.out(), "file="));
        assertThat(file.getFileName().toString()).startsWith("some-tool-").endsWith(suffix);
        assertThat(file.getParent()).isEqualTo(dir.resolve("cache"));

        // the first run: exec'd java writes the cache to a file named after its pid as it exits
        Result first = bash(PLAN.replace("echo", ": echo") + "; exec \"$JDK_HOME/bin/java\" \"${VERBS4J_CDS_OPTS[@]}\""
                + " -m jdk.jartool/sun.tools.jar.Main --version", env(mods));
        assertThat(first.status()).as("first run: %s", first.err()).isZero();
        assertThat(first.out()).as("the tool's own output only").matches("(?s)jar \\S+\\s*");
        try (var s = Files.list(file.getParent())) {
            assertThat(s.map(p -> p.getFileName().toString()).toList()).as("only the recorded cache, under a name of its own")
                    .singleElement().asString().startsWith(file.getFileName() + ".").endsWith(".tmp");
        }

        // the next run takes it (renamed into place) and starts from it
        Result again = bash(PLAN, env(mods));
        assertThat(file).isNotEmptyFile();
        try (var s = Files.list(file.getParent())) {
            assertThat(s.count()).as("nothing but the cache left").isEqualTo(1);
        }
        assertThat(again.out()).contains("mode=use").contains("file=" + file)
                .contains(VERSION >= 25 ? "-XX:AOTCache=" + file : "-XX:SharedArchiveFile=" + file);
        Result used = bash(PLAN.replace("echo", ": echo") + "; \"$JDK_HOME/bin/java\" \"${VERBS4J_CDS_OPTS[@]}\" -Xlog:aot=info -Xlog:cds=info"
                + " -m jdk.jartool/sun.tools.jar.Main --version", env(mods));
        assertThat(used.status()).as("run with the cache: %s", used.err()).isZero();
        assertThat(used.out()).contains("jar ").doesNotContainIgnoringCase("error");

        // another build of the jars: another cache
        Files.setLastModifiedTime(mods.resolve("a.jar"), FileTime.fromMillis(System.currentTimeMillis() + 5000));
        assertThat(bash(PLAN, env(mods)).out()).contains("mode=record").doesNotContain("file=" + file + "\n");
    }

    @Test
    void noCacheWhenTurnedOffOrAnotherRunRecords() throws Exception {
        Path mods = modules();
        Map<String, String> off = new HashMap<>(env(mods));
        off.put("VERBS4J_CDS", "0");
        assertThat(bash(PLAN, off).out()).contains("mode=none").contains("opts=\n");

        String file = line(bash(PLAN, env(mods)).out(), "file=");
        // a recording in progress (this JVM's pid is alive): run without a cache
        Path live = Path.of(file + "." + ProcessHandle.current().pid() + ".tmp");
        Files.writeString(live, "x");
        assertThat(bash(PLAN, env(mods)).out()).contains("mode=none");
        Files.delete(live);
        // what a recording killed while it wrote the cache left (its configuration is still there):
        // removed, and this run records
        long dead = deadPid();
        Path stale = Path.of(file + "." + dead + ".tmp");
        Files.writeString(stale, "x");
        Files.writeString(Path.of(stale + ".config"), "x");
        assertThat(bash(PLAN, env(mods)).out()).contains("mode=record");
        assertThat(stale).doesNotExist();
        assertThat(Path.of(stale + ".config")).doesNotExist();
    }

    @Test
    void helpNamesTheCache() throws Exception {
        Process p = new ProcessBuilder(ROOT.resolve("bin/verbs4j").toString(), "--help").redirectErrorStream(true).start();
        String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).isZero();
        assertThat(text).contains("VERBS4J_CDS=0").contains("VERBS4J_CDS_DIR").contains("Class cache");
    }

    private static String line(String text, String prefix) {
        for (String l : text.split("\n")) {
            if (l.startsWith(prefix)) {
                return l.substring(prefix.length());
            }
        }
        throw new AssertionError("no line " + prefix + " in " + text);
    }

    /** A pid no process has now (a short-lived child's, after it ended). */
    private static long deadPid() throws Exception {
        Process p = new ProcessBuilder("true").start();
        p.waitFor();
        assertThat(Path.of("/proc/" + p.pid())).doesNotExist();
        return p.pid();
    }
}
