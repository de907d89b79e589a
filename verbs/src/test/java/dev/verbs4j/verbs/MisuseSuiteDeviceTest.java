package dev.verbs4j.verbs;

import org.junit.jupiter.api.DynamicContainer;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestFactory;
import org.opentest4j.AssertionFailedError;
import org.opentest4j.TestAbortedException;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * The misuse suite (issue 13): hundreds of systematically generated misuses of the public API
 * ({@link MisuseCases}), each of which must end in a clear exception or an error completion,
 * never in a JVM crash, a hang, or the NIC touching freed memory. The cases run in child JVMs
 * ({@link MisuseSupervisor}), so that a crash fails one case and the rest still run; each case is
 * one dynamic test here. Ends with the line {@code misuse suite: N cases, N passed, N JVM crashes,
 * N hangs}.
 *
 * <p>Each child's directory under {@code target/misuse-suite} (the name: {@code
 * verbs4j.misuse.out}, for runs side by side) keeps its case list, its standard
 * error (each case's name and how the library refused it), a crash report and a thread dump taken
 * at a hang. System properties: {@code verbs4j.misuse.filter} (a regular expression the case names
 * must contain), {@code verbs4j.misuse.timeout} (seconds per case, default 20), {@code
 * verbs4j.misuse.jvms} (children side by side, default 1), {@code verbs4j.misuse.selftest=true}
 * (add cases that fail, crash and hang on purpose, to check the harness).
 */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_MISUSE)
class MisuseSuiteDeviceTest {

    @TestFactory
    List<DynamicNode> misuseSuite() throws IOException {
        Pattern filter = Pattern.compile(System.getProperty("verbs4j.misuse.filter", ""));
        Map<String, List<MisuseCase>> families = new LinkedHashMap<>();
        List<String> names = new ArrayList<>();
        for (MisuseCase c : MisuseCases.all()) {
            if (filter.matcher(c.name()).find()) {
                families.computeIfAbsent(c.family(), k -> new ArrayList<>()).add(c);
                names.add(c.name());
            }
        }
        Path dir = outputDirectory();
        MisuseSupervisor supervisor = new MisuseSupervisor(names, dir,
                Duration.ofSeconds(Long.getLong("verbs4j.misuse.timeout", 20)), Duration.ofSeconds(180),
                Integer.getInteger("verbs4j.misuse.jvms", 1)).start();
        List<DynamicNode> nodes = new ArrayList<>();
        for (Map.Entry<String, List<MisuseCase>> family : families.entrySet()) {
            List<DynamicTest> tests = new ArrayList<>();
            for (MisuseCase c : family.getValue()) {
                tests.add(DynamicTest.dynamicTest(c.name(), () -> check(supervisor, c.name())));
            }
            nodes.add(DynamicContainer.dynamicContainer(family.getKey() + " (" + tests.size() + ")", tests));
        }
        nodes.add(DynamicTest.dynamicTest("summary: no child JVM died outside a case", () -> summary(supervisor, dir)));
        return nodes;
    }

    private static void check(MisuseSupervisor supervisor, String name) throws Exception {
        MisuseOutcome outcome = supervisor.outcome(name).get(60, TimeUnit.MINUTES);
        switch (outcome.kind()) {
            case PASSED -> {
            }
            case SKIPPED -> throw new TestAbortedException(outcome.detail());
            case FAILED -> throw new AssertionFailedError(outcome.detail());
            case CRASHED -> throw new AssertionFailedError("JVM crash: " + outcome.detail());
            case HUNG -> throw new AssertionFailedError("hang: " + outcome.detail());
        }
    }

    private static void summary(MisuseSupervisor supervisor, Path dir) throws Exception {
        supervisor.finished().get(60, TimeUnit.MINUTES);
        Map<MisuseOutcome.Kind, Integer> counts = new LinkedHashMap<>();
        int total = 0;
        for (MisuseOutcome.Kind k : MisuseOutcome.Kind.values()) {
            counts.put(k, 0);
        }
        StringBuilder problems = new StringBuilder();
        for (String name : supervisor.names()) {
            MisuseOutcome o = supervisor.outcome(name).get();
            counts.merge(o.kind(), 1, Integer::sum);
            total++;
            if (o.kind() == MisuseOutcome.Kind.CRASHED || o.kind() == MisuseOutcome.Kind.HUNG) {
                problems.append('\n').append(o.kind()).append(": ").append(name);
            }
        }
        List<String> incidents = supervisor.incidents();
        String line = String.format("misuse suite: %d cases, %d passed, %d JVM crashes, %d hangs"
                        + " (%d failed, %d skipped, %d incidents outside a case; %d child JVMs, %.0f s; logs in %s)",
                total, counts.get(MisuseOutcome.Kind.PASSED), counts.get(MisuseOutcome.Kind.CRASHED),
                counts.get(MisuseOutcome.Kind.HUNG), counts.get(MisuseOutcome.Kind.FAILED),
                counts.get(MisuseOutcome.Kind.SKIPPED), incidents.size(), supervisor.children(), supervisor.seconds(), dir);
        System.out.println(line + problems);
        if (!incidents.isEmpty()) {
            throw new AssertionFailedError("child JVMs died or hung outside a case:\n" + String.join("\n", incidents));
        }
    }

    /** {@code target/misuse-suite} of this module, next to the test classes; a temporary directory elsewhere. */
    private static Path outputDirectory() throws IOException {
        Path dir;
        try {
            Path classes = Path.of(MisuseSuiteDeviceTest.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            dir = Files.isDirectory(classes) && classes.getParent() != null
                    ? classes.getParent().resolve(System.getProperty("verbs4j.misuse.out", "misuse-suite"))
                    : Files.createTempDirectory("misuse-suite");
        } catch (URISyntaxException | RuntimeException e) {
            dir = Files.createTempDirectory("misuse-suite");
        }
        if (Files.isDirectory(dir)) {
            try (var old = Files.walk(dir)) {
                old.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
        Files.createDirectories(dir);
        return dir;
    }
}
