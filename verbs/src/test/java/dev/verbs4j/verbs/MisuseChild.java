package dev.verbs4j.verbs;

import org.opentest4j.TestAbortedException;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * The child JVM of the misuse suite: runs the cases named in a file one after another and reports
 * each on standard output as {@code ##misuse START name}, then {@code ##misuse PASS name}, {@code
 * FAIL name: reason} or {@code SKIP name: reason}; {@code READY} once warmed up, {@code DONE} at the
 * end. Standard error gets each case's name, how the library refused it ({@link MisuseExpect#note})
 * and the stack trace of a failure. Started by {@link MisuseChildProcess}.
 */
final class MisuseChild {

    /** What every protocol line starts with (the rest of standard output is not protocol). */
    static final String PREFIX = "##misuse ";

    private static final PrintStream OUT = new PrintStream(System.out, true, StandardCharsets.UTF_8);

    private MisuseChild() {
    }

    public static void main(String[] args) throws Exception {
        long t0 = System.nanoTime();
        List<String> names = Files.readAllLines(Path.of(args[0]), StandardCharsets.UTF_8);
        Map<String, MisuseCase> cases = MisuseCases.byName();
        long t1 = System.nanoTime();
        warmUp();
        System.err.printf("misuse child: %d cases listed in %.1f s, warm-up %.1f s (JVM up %d ms before main)%n", cases.size(),
                (t1 - t0) / 1e9, (System.nanoTime() - t1) / 1e9,
                java.lang.management.ManagementFactory.getRuntimeMXBean().getUptime() - (System.nanoTime() - t0) / 1_000_000);
        report("READY");
        for (String name : names) {
            if (name.isBlank()) {
                continue;
            }
            report("START " + name);
            System.err.println("-- " + name);
            MisuseCase c = cases.get(name);
            if (c == null) {
                report("FAIL " + name + ": no such case in this build");
                continue;
            }
            try {
                c.body().run();
                report("PASS " + name);
            } catch (TestAbortedException skip) {
                report("SKIP " + name + ": " + oneLine(skip.getMessage()));
            } catch (Throwable t) {
                System.err.println("== " + name);
                t.printStackTrace(System.err);
                System.err.flush();
                report("FAIL " + name + ": " + MisuseExpect.describe(t));
            }
        }
        report("DONE");
        System.exit(0);
    }

    /**
     * Opens and closes a fixture of every kind once, so that loading and linking the library (many
     * seconds in an emulated VM) is not counted against the first case's time.
     */
    private static void warmUp() {
        try (MisuseFixture f = new MisuseFixture()) {
            f.qp(QpType.RC);
            f.qp(QpType.UD);
            f.poller();
            f.srq();
            f.ah();
            f.mw(MemoryWindow.Type.TYPE_2);
            f.sends();
            f.recvs();
            f.wcs();
            f.flushedCompletion();
        } catch (RuntimeException e) {
            System.err.println("misuse child: warm-up failed (the cases will tell): " + e);
        }
    }

    private static void report(String line) {
        OUT.println(PREFIX + line);
    }

    static String oneLine(String s) {
        return s == null ? "" : s.replace('\n', ' ').replace('\r', ' ');
    }
}
