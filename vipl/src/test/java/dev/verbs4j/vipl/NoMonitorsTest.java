package dev.verbs4j.vipl;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * No object monitor in the library code of verbs, rdmacm and VIPL: no {@code synchronized} method
 * or block, no {@code wait()} or {@code notify()} on an object (VIPL's own notify functions take
 * arguments). Their locks are {@code java.util.concurrent} locks, so that a virtual thread that
 * blocks on one, or waits while holding one, parks and leaves its carrier free also on JDK 22 and
 * 23, where a monitor pins it.
 */
class NoMonitorsTest {

    /** Comments, then string and character literals: what is left is code. */
    private static final Pattern NOT_CODE = Pattern.compile(
            "/\\*.*?\\*/|//[^\\n]*|\"\"\".*?\"\"\"|\"(?:\\\\.|[^\"\\\\\\n])*\"|'(?:\\\\.|[^'\\\\\\n])+'", Pattern.DOTALL);
    private static final Pattern MONITOR = Pattern.compile(
            "\\bsynchronized\\b|(?:\\.\\s*|(?<![\\w.]))(?:wait\\s*\\(|(?:notify|notifyAll)\\s*\\(\\s*\\))");

    static String code(String source) {
        StringBuilder out = new StringBuilder();
        Matcher m = NOT_CODE.matcher(source);
        while (m.find()) {
            // keep the line count, so that a finding names its line
            m.appendReplacement(out, m.group().replaceAll("[^\\n]", " ").replace("\\", " ").replace("$", " "));
        }
        m.appendTail(out);
        return out.toString();
    }

    static List<String> monitors(Path file) throws IOException {
        String code = code(Files.readString(file));
        List<String> found = new ArrayList<>();
        Matcher m = MONITOR.matcher(code);
        while (m.find()) {
            int line = 1 + (int) code.substring(0, m.start()).chars().filter(c -> c == '\n').count();
            found.add(file + ":" + line + ": " + m.group().trim());
        }
        return found;
    }

    @Test
    void theLibraryCodeOfVerbsRdmacmAndViplUsesNoMonitor() throws IOException {
        List<String> found = new ArrayList<>();
        int files = 0;
        for (String module : new String[]{"verbs", "rdmacm", "vipl"}) {
            Path root = Path.of("..", module, "src", "main", "java");
            assertThat(root).as("the sources of %s", module).isDirectory();
            try (Stream<Path> all = Files.walk(root)) {
                for (Path f : all.filter(p -> p.toString().endsWith(".java")).toList()) {
                    files++;
                    found.addAll(monitors(f));
                }
            }
        }
        assertThat(files).isGreaterThan(100);
        assertThat(found).as("monitors in library code").isEmpty();
    }

    @Test
    void theScanFindsMonitorsInCodeAndNotInCommentsOrStrings() {
        String source = """
                /** synchronized in a comment, notify() too */
                class X {
                    // synchronized (this) { wait(); }
                    String s = "synchronized (lock) { lock.wait(); }";
                    synchronized void a() { }
                    void b() { synchronized (this) { } }
                    void c() throws Exception { lock.wait(); notifyAll(); }
                    void d() { condition.await(); LockSupport.park(); vi.notify(context, handler); }
                }
                """;
        Matcher m = MONITOR.matcher(code(source));
        List<String> found = new ArrayList<>();
        while (m.find()) {
            found.add(m.group().replaceAll("\\s", ""));
        }
        assertThat(found).containsExactly("synchronized", "synchronized", ".wait(", "notifyAll()");
    }
}
