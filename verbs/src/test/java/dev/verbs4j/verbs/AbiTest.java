package dev.verbs4j.verbs;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import dev.verbs4j.bindings.rdma_core_h;
import java.io.IOException;
import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.SequenceLayout;
import java.lang.foreign.StructLayout;
import java.lang.foreign.UnionLayout;
import java.lang.foreign.ValueLayout;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Holds every struct and union layout that jextract generated in {@code dev.verbs4j.bindings}
 * against gcc and the installed headers: a C program written here prints {@code sizeof} of each
 * type and {@code offsetof}/{@code sizeof} of each named member (nested and array-element members
 * included, members of anonymous structs and unions named as C names them), and every number must
 * match the Java layout. Needs gcc, libibverbs-dev and librdmacm-dev; no RDMA device.
 */
class AbiTest {

    private static final String PACKAGE = "dev.verbs4j.bindings";
    private static final Map<String, String> HEADERS = Map.of(
            "infiniband/verbs.h", "libibverbs-dev",
            "rdma/rdma_cma.h", "librdmacm-dev",
            "rdma/rdma_verbs.h", "librdmacm-dev");

    /** A C type ({@code member} empty) or one of its members, with the Java layout's numbers. */
    record Check(String type, String member, long offset, long size) {
        String name() {
            return member.isEmpty() ? type : type + "." + member;
        }
    }

    @Test
    void generatedLayoutsMatchGcc() throws Exception {
        List<Check> checks = new ArrayList<>();
        for (Class<?> c : layoutClasses()) {
            GroupLayout layout = (GroupLayout) c.getMethod("layout").invoke(null);
            String name = c.getSimpleName();
            // A tagged struct/union carries its tag as layout name; otherwise the class is a typedef.
            String type = layout.name().filter(name::equals).isPresent()
                    ? (layout instanceof UnionLayout ? "union " : "struct ") + name
                    : name;
            checks.add(new Check(type, "", 0, layout.byteSize()));
            members(layout, type, "", 0, checks);
        }
        List<String> types = checks.stream().filter(k -> k.member().isEmpty()).map(Check::type).toList();
        assertThat(types).as("C types checked").hasSizeGreaterThanOrEqualTo(42)
                .contains("struct ibv_context", "struct ibv_context_ops", "struct verbs_context",
                        "struct ibv_send_wr", "struct ibv_wc", "struct ibv_qp", "struct rdma_cm_id",
                        "struct rdma_cm_event", "union ibv_gid");
        assertThat(checks.size() - types.size()).as("members checked").isGreaterThanOrEqualTo(1000);

        List<String> gcc = runC(checks);
        assertThat(gcc).as("lines printed by the C program").hasSameSizeAs(checks);
        List<String> mismatches = new ArrayList<>();
        for (int i = 0; i < checks.size(); i++) {
            Check k = checks.get(i);
            String java = k.offset() + " " + k.size();
            if (!gcc.get(i).equals(java)) {
                mismatches.add(k.name() + ": offset/size " + java + " in Java, " + gcc.get(i) + " in C");
            }
        }
        assertThat(mismatches).as("layouts that differ from gcc (%d types, %d members checked)",
                types.size(), checks.size() - types.size()).isEmpty();
    }

    /** The top-level classes of the bindings package that have a static {@code GroupLayout layout()}. */
    private static List<Class<?>> layoutClasses() throws Exception {
        Path location = Path.of(rdma_core_h.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        List<Class<?>> classes = new ArrayList<>();
        try (FileSystem jar = Files.isDirectory(location) ? null : FileSystems.newFileSystem(location);
                Stream<Path> files = Files.list((jar == null ? location : jar.getPath("/"))
                        .resolve(PACKAGE.replace('.', '/')))) {
            for (String file : files.map(p -> p.getFileName().toString()).sorted().toList()) {
                // Nested classes ($) are reached through the layouts that embed them.
                if (file.endsWith(".class") && !file.contains("$")) {
                    Class<?> c = Class.forName(PACKAGE + "." + file.substring(0, file.length() - ".class".length()));
                    if (Stream.of(c.getMethods()).anyMatch(m -> m.getName().equals("layout")
                            && m.getParameterCount() == 0 && m.getReturnType() == GroupLayout.class)) {
                        classes.add(c);
                    }
                }
            }
        }
        return classes;
    }

    private static void members(GroupLayout group, String type, String prefix, long base, List<Check> out) {
        long next = 0;
        for (MemoryLayout m : group.memberLayouts()) {
            long offset = base + (group instanceof StructLayout ? next : 0);
            next += m.byteSize();
            String name = m.name().orElse(null);
            if (name == null) {
                continue; // padding
            }
            if (name.startsWith("$anon$")) {
                members((GroupLayout) m, type, prefix, offset, out); // C names these members directly
            } else {
                member(m, type, prefix + name, offset, out);
            }
        }
    }

    private static void member(MemoryLayout m, String type, String path, long offset, List<Check> out) {
        if (m instanceof SequenceLayout s && s.elementCount() == 0) {
            out.add(new Check(type, path, offset, -1)); // flexible array: C has no sizeof for it
            return;
        }
        out.add(new Check(type, path, offset, m.byteSize()));
        if (m instanceof GroupLayout g) {
            members(g, type, path + ".", offset, out);
        } else if (m instanceof SequenceLayout s && !(s.elementLayout() instanceof ValueLayout)) {
            member(s.elementLayout(), type, path + "[0]", offset, out);
        }
    }

    /** Writes, compiles and runs the C program; returns its lines, "offset size" per check. */
    private static List<String> runC(List<Check> checks) throws Exception {
        StringBuilder c = new StringBuilder("/* Written by AbiTest. */\n");
        HEADERS.keySet().stream().sorted().forEach(h -> c.append("#include <").append(h).append(">\n"));
        c.append("""
                #include <stddef.h>
                #include <stdio.h>
                #define TYPE(T) printf("0 %zu\\n", sizeof(T));
                #define MEMBER(T, m) printf("%zu %zu\\n", offsetof(T, m), sizeof(((T *) 0)->m));
                #define FLEX(T, m) printf("%zu -1\\n", offsetof(T, m));
                int main(void) {
                """);
        for (Check k : checks) {
            String macro = k.member().isEmpty() ? "TYPE" : k.size() < 0 ? "FLEX" : "MEMBER";
            c.append("    ").append(macro).append('(').append(k.type())
                    .append(k.member().isEmpty() ? "" : ", " + k.member()).append(")\n");
        }
        c.append("    return 0;\n}\n");

        Path dir = Path.of(System.getProperty("basedir", "."), "target", "abi-test").toAbsolutePath();
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("abi.c"), c);
        String compiled = gcc(dir, "-std=gnu11", "-o", "abi", "abi.c");
        if (compiled != null) {
            StringBuilder hint = new StringBuilder();
            HEADERS.forEach((h, pkg) -> {
                if (compiled.contains(h + ": No such file")) {
                    hint.append("\n").append(h).append(" is missing: install ").append(pkg);
                }
            });
            fail("gcc failed to compile " + dir.resolve("abi.c") + hint + "\n" + compiled);
        }
        Process p = new ProcessBuilder(dir.resolve("abi").toString()).directory(dir.toFile())
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        List<String> lines = new String(p.getInputStream().readAllBytes(), UTF_8).lines().toList();
        assertThat(p.waitFor()).as("exit status of " + dir.resolve("abi")).isZero();
        return lines;
    }

    /** Runs gcc; returns null on success, else its output. */
    private static String gcc(Path dir, String... args) throws InterruptedException {
        try {
            Process p = new ProcessBuilder(Stream.concat(Stream.of("gcc"), Stream.of(args)).toList())
                    .directory(dir.toFile()).redirectErrorStream(true).start();
            String output = new String(p.getInputStream().readAllBytes(), UTF_8);
            return p.waitFor() == 0 ? null : output;
        } catch (IOException e) {
            return fail("gcc cannot be run (" + e.getMessage() + "): install gcc", e);
        }
    }
}
