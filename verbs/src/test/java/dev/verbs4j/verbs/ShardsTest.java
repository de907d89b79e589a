package dev.verbs4j.verbs;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every device test class of every module is in exactly one shard, and bin/test runs every shard:
 * read from the test sources (the other modules' classes are not on this module's class path).
 */
class ShardsTest {

    private static final Pattern SHARD_TAG = Pattern.compile("^@Tag\\(TestBed\\.(SHARD_[A-Z0-9_]+)\\)$", Pattern.MULTILINE);
    private static final String DEVICE_TAG = "@Tag(TestBed.TAG)";
    private static final Pattern DEVICE = Pattern.compile("^" + Pattern.quote(DEVICE_TAG) + "$", Pattern.MULTILINE);

    /** The shard constants of TestBed: field name to tag value. */
    private static Map<String, String> shards() throws IllegalAccessException {
        Map<String, String> shards = new TreeMap<>();
        for (Field f : TestBed.class.getFields()) {
            if (f.getName().startsWith("SHARD_") && Modifier.isStatic(f.getModifiers())) {
                shards.put(f.getName(), (String) f.get(null));
            }
        }
        return shards;
    }

    /** Every module's test sources. */
    private static List<Path> testSources() throws IOException {
        try (Stream<Path> files = Files.walk(root(), 12)) {
            return files.filter(p -> p.toString().endsWith(".java") && p.toString().contains("/src/test/java/")).toList();
        }
    }

    /** The repository's root: the module's parent directory, where bin/test is. */
    private static Path root() {
        Path root = Path.of("").toAbsolutePath().getParent();
        assertThat(root.resolve("bin/test")).as("bin/test below " + root).isRegularFile();
        return root;
    }

    @Test
    void everyDeviceTestClassIsInExactlyOneShard() throws IOException, IllegalAccessException {
        Map<String, String> shards = shards();
        List<String> wrong = new ArrayList<>();
        Map<String, Integer> perShard = new TreeMap<>();
        int deviceClasses = 0;
        for (Path f : testSources()) {
            String text = Files.readString(f);
            boolean device = DEVICE.matcher(text).find();
            List<String> tags = new ArrayList<>();
            Matcher m = SHARD_TAG.matcher(text);
            while (m.find()) {
                tags.add(m.group(1));
            }
            if (device) {
                deviceClasses++;
            }
            if (device && tags.size() != 1) {
                wrong.add(f + ": " + tags.size() + " shard tags " + tags + " (one of " + shards.keySet() + ")");
            } else if (!device && !tags.isEmpty()) {
                wrong.add(f + ": shard tag " + tags + " without " + DEVICE_TAG);
            } else if (device && !shards.containsKey(tags.get(0))) {
                wrong.add(f + ": no shard " + tags.get(0) + " in TestBed");
            } else if (device) {
                perShard.merge(tags.get(0), 1, Integer::sum);
            }
        }
        assertThat(wrong).as("device test classes not in exactly one shard").isEmpty();
        assertThat(deviceClasses).as("device test classes found").isGreaterThan(60);
        assertThat(perShard.keySet()).as("shards with classes (" + perShard + ")").containsExactlyElementsOf(shards.keySet());
    }

    /**
     * bin/test selects a shard's classes module by module ({@code shard_classes SHARD MODULE...}):
     * a class whose module is missing from its shard's list would run nowhere.
     */
    @Test
    void binTestLooksForEveryShardsClassesInTheirModules() throws IOException, IllegalAccessException {
        String script = Files.readString(root().resolve("bin/test"));
        Map<String, Set<String>> modules = new HashMap<>();
        Matcher call = Pattern.compile("shard_classes (\\S+) ([a-z ]+)\\)").matcher(script);
        while (call.find()) {
            String shard = call.group(1).replace("\"", "");
            // "$shard3": shard3, with shard-external when its build is given
            List<String> named = shard.equals("$shard3") ? List.of("shard3", "shard-external") : List.of(shard);
            for (String n : named) {
                modules.computeIfAbsent(n, k -> new HashSet<>()).addAll(List.of(call.group(2).trim().split(" +")));
            }
        }
        Map<String, String> shards = shards();
        List<String> unscanned = new ArrayList<>();
        for (Path f : testSources()) {
            String text = Files.readString(f);
            Matcher m = SHARD_TAG.matcher(text);
            if (DEVICE.matcher(text).find() && m.find() && shards.containsKey(m.group(1))) {
                String shard = shards.get(m.group(1));
                String module = root().relativize(f).getName(0).toString();
                if (!modules.getOrDefault(shard, Set.of()).contains(module)) {
                    unscanned.add(f + " (" + shard + ", module " + module + "; bin/test scans " + modules.get(shard) + ")");
                }
            }
        }
        assertThat(modules).as("shard_classes calls in bin/test").isNotEmpty();
        assertThat(unscanned).as("device test classes in a module their shard's VM does not scan").isEmpty();
    }

    @Test
    void binTestRunsEveryShardByItsTag() throws IOException, IllegalAccessException {
        String script = Files.readString(root().resolve("bin/test"));
        for (Map.Entry<String, String> shard : shards().entrySet()) {
            // a shard is run where a vm line's tag expression names it
            Pattern run = Pattern.compile("(vm [0-9] |shard3=)[^\\n]*[\"'(& |]" + Pattern.quote(shard.getValue()) + "[\"') ]");
            assertThat(run.matcher(script).find()).as(shard.getKey() + " (" + shard.getValue() + ") run by bin/test").isTrue();
        }
        assertThat(script).as("bin/test selects device tests by tag, not by class name")
                .doesNotContain("--include-classname").doesNotContain("--exclude-classname");
    }
}
