package dev.verbs4j.rdmacm;

import dev.verbs4j.verbs.TestBed;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * 256 {@link RdmaConnection} echo clients and their {@link RdmaServer}, every one on a virtual
 * thread, in a JVM whose virtual-thread scheduler has two carriers: every echo arrives whole and
 * in order, and JFR records no pinned carrier ({@code jdk.VirtualThreadPinned}, threshold 0).
 * Each client sends a pipelined batch of messages: under emulation most of the time goes into
 * setting up the 512 connection ends (the server sets its ends up one after another).
 */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_1)
@Timeout(450) // the child's start (STARTUP_SECONDS), its limit and 40 s, the report of a stuck child
class RdmaVirtualThreadsLoadDeviceTest {

    static final int MESSAGES = 4;

    /** How long the child JVM may take to start and listen. */
    private static final int STARTUP_SECONDS = 120;

    @Test
    void twoHundredFiftySixEchoClientsOnTwoCarriersPinNone() throws Exception {
        String java = ProcessHandle.current().info().command().orElseThrow();
        int clients = 256;
        Process child = new ProcessBuilder(List.of(java, "--enable-native-access=ALL-UNNAMED",
                "-Djdk.virtualThreadScheduler.parallelism=2", "-Djdk.virtualThreadScheduler.maxPoolSize=2",
                "-XX:TieredStopAtLevel=1", // C1 only: C2 compiles cost much of an emulated VM's two CPUs
                "-cp", System.getProperty("java.class.path"), VirtualThreadEchoMain.class.getName(),
                TestBed.hostB().address(), TestBed.hostA().address(), "21301", Integer.toString(clients), Integer.toString(MESSAGES)))
                .redirectErrorStream(true).start();
        List<String> lines = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.concurrent.CountDownLatch listening = new java.util.concurrent.CountDownLatch(1);
        CompletableFuture<Void> reader = CompletableFuture.runAsync(() -> {
            try (BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = out.readLine()) != null) {
                    System.out.println("child: " + line);
                    lines.add(line);
                    if (line.startsWith("LISTENING ")) {
                        listening.countDown();
                    }
                }
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
        try {
            // the child's own limit counts from its start: the JVM's start before it (a minute and
            // more under emulation beside other VMs) is waited for apart, until it listens
            listening.await(STARTUP_SECONDS, TimeUnit.SECONDS);
            if (!child.waitFor(VirtualThreadEchoMain.LIMIT_SECONDS + 40, TimeUnit.SECONDS)) {
                try {
                    describeStuck(child);
                } catch (Exception e) {
                    System.out.println("stuck child: no description: " + e);
                }
            }
            assertThat(child.isAlive()).as("the child JVM ended in time").isFalse();
            reader.get(10, TimeUnit.SECONDS);
            assertThat(child.exitValue()).as(String.join("\n", lines)).isZero();
            assertThat(lines).contains("PINNED 0").anyMatch(l -> l.startsWith("RESULT " + clients + " 0 "));
        } finally {
            child.destroyForcibly();
        }
    }

    /**
     * What each thread of a child that did not end is doing, for the log: its name, state and the
     * kernel function it waits in (from /proc, which answers even when the JVM cannot reach a
     * safepoint), then the JVM's own thread dump if it gives one within 15 s.
     */
    private static void describeStuck(Process child) throws Exception {
        java.nio.file.Path tasks = java.nio.file.Path.of("/proc", Long.toString(child.pid()), "task");
        try (var dirs = java.nio.file.Files.list(tasks)) {
            for (java.nio.file.Path task : dirs.sorted().toList()) {
                String stat = read(task.resolve("stat"));
                String state = stat.substring(stat.lastIndexOf(')') + 2).split(" ")[0];
                System.out.println("stuck child: task " + task.getFileName() + " " + read(task.resolve("comm")).strip()
                        + " state " + state + " wchan " + read(task.resolve("wchan")).strip());
            }
        } catch (java.io.IOException | RuntimeException e) {
            System.out.println("stuck child: /proc unreadable: " + e);
        }
        String jcmd = java.nio.file.Path.of(ProcessHandle.current().info().command().orElseThrow()).resolveSibling("jcmd").toString();
        Process dump = new ProcessBuilder(jcmd, Long.toString(child.pid()), "Thread.print").redirectErrorStream(true).start();
        CompletableFuture<String> text = CompletableFuture.supplyAsync(() -> {
            try {
                return new String(dump.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            } catch (java.io.IOException e) {
                return e.toString();
            }
        });
        if (dump.waitFor(15, TimeUnit.SECONDS)) {
            System.out.println("stuck child: jcmd Thread.print:\n" + text.get(5, TimeUnit.SECONDS));
        } else {
            dump.destroyForcibly();
            System.out.println("stuck child: jcmd Thread.print gave nothing within 15 s (no safepoint?)");
        }
    }

    private static String read(java.nio.file.Path file) {
        try {
            return java.nio.file.Files.readString(file);
        } catch (java.io.IOException e) {
            return "?";
        }
    }

}
