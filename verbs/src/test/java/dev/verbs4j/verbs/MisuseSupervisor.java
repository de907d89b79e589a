package dev.verbs4j.verbs;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The parent side of the misuse suite: runs the cases in as few child JVMs as it can ({@link
 * MisuseChildProcess}), one after another, and turns what each child reports into one {@link
 * MisuseOutcome} per case. When a child dies, the case it had started fails with the exit status
 * and the head of the crash report; when a case outlives its time, it fails with a thread dump and
 * the child is killed. Either way a new child takes the cases not run yet. Incidents outside any
 * case (a child dying between cases or at exit) are collected for {@link #incidents()}.
 */
final class MisuseSupervisor {

    /** How often a child may fail before it reports READY, before its cases are given up. */
    private static final int START_ATTEMPTS = 2;

    private final List<String> names;
    private final Path dir;
    private final Duration caseTimeout;
    private final Duration startTimeout;
    private final int shards;
    private final Map<String, CompletableFuture<MisuseOutcome>> outcomes = new LinkedHashMap<>();
    private final List<String> incidents = Collections.synchronizedList(new ArrayList<>());
    private final AtomicInteger children = new AtomicInteger();
    private final CompletableFuture<Void> finished = new CompletableFuture<>();
    private volatile long startedAt;
    private volatile long endedAt;

    /**
     * @param names        the cases, in the order to run them
     * @param dir          where each child gets a directory of its own
     * @param caseTimeout  how long one case may take
     * @param startTimeout how long a child may take to start and warm up
     * @param shards       how many children run side by side (each over its share of the cases)
     */
    MisuseSupervisor(List<String> names, Path dir, Duration caseTimeout, Duration startTimeout, int shards) {
        this.names = List.copyOf(names);
        this.dir = dir;
        this.caseTimeout = caseTimeout;
        this.startTimeout = startTimeout;
        this.shards = Math.max(1, Math.min(shards, names.size()));
        for (String name : names) {
            outcomes.put(name, new CompletableFuture<>());
        }
    }

    /** Starts running the cases in the background. */
    MisuseSupervisor start() {
        startedAt = System.nanoTime();
        List<Thread> threads = new ArrayList<>();
        for (int s = 0; s < shards; s++) {
            List<String> share = new ArrayList<>();
            for (int i = s; i < names.size(); i += shards) {
                share.add(names.get(i));
            }
            int shard = s;
            threads.add(Thread.ofPlatform().daemon().name("misuse-supervisor-" + s).start(() -> runShard(shard, share)));
        }
        Thread.ofPlatform().daemon().name("misuse-supervisor").start(() -> {
            try {
                for (Thread t : threads) {
                    t.join();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            endedAt = System.nanoTime();
            finished.complete(null);
        });
        return this;
    }

    /** The outcome of case {@code name}, once it is known. */
    CompletableFuture<MisuseOutcome> outcome(String name) {
        return outcomes.get(name);
    }

    /** The cases, in order. */
    List<String> names() {
        return names;
    }

    /** Completes when every case has an outcome. */
    CompletableFuture<Void> finished() {
        return finished;
    }

    /** What went wrong outside any case (a child dying between cases or at its exit). */
    List<String> incidents() {
        return List.copyOf(incidents);
    }

    /** How many child JVMs were started. */
    int children() {
        return children.get();
    }

    /** Seconds from {@link #start()} to the last outcome. */
    double seconds() {
        return (endedAt - startedAt) / 1e9;
    }

    private void runShard(int shard, List<String> share) {
        LinkedHashSet<String> remaining = new LinkedHashSet<>(share);
        int failedStarts = 0;
        try {
            while (!remaining.isEmpty()) {
                int n = children.incrementAndGet();
                boolean ready = runChild(dir.resolve("child-" + n), remaining);
                if (!ready && ++failedStarts >= START_ATTEMPTS) {
                    for (String name : remaining) {
                        complete(name, new MisuseOutcome(MisuseOutcome.Kind.FAILED,
                                "no child JVM could be started (" + START_ATTEMPTS + " attempts); see " + dir));
                    }
                    remaining.clear();
                }
            }
        } catch (Throwable t) {
            for (String name : remaining) {
                complete(name, new MisuseOutcome(MisuseOutcome.Kind.FAILED, "the misuse supervisor failed: " + t));
            }
            incidents.add("shard " + shard + ": supervisor failed: " + t);
        }
    }

    /**
     * Runs one child over {@code remaining}, removing each case once it has an outcome; returns
     * whether the child got as far as READY.
     */
    private boolean runChild(Path childDir, LinkedHashSet<String> remaining) throws IOException, InterruptedException {
        boolean ready = false;
        String current = null;
        String lastFinished = null;
        long currentStart = 0;
        try (MisuseChildProcess child = MisuseChildProcess.start(childDir, new ArrayList<>(remaining))) {
            while (true) {
                Duration wait = !ready ? startTimeout
                        : current == null ? caseTimeout
                        : caseTimeout.minusNanos(System.nanoTime() - currentStart);
                MisuseChildProcess.Line line = child.next(wait.isNegative() ? Duration.ZERO : wait);
                if (line.timeout()) {
                    String dump = child.threadDump(Duration.ofSeconds(15));
                    if (current != null) {
                        complete(current, new MisuseOutcome(MisuseOutcome.Kind.HUNG, "no outcome within "
                                + caseTimeout.toSeconds() + " s; the child JVM (pid " + child.pid() + ") was killed. Threads:" + dump));
                        remaining.remove(current);
                    } else {
                        incidents.add("child " + childDir.getFileName() + " hung " + (ready ? "after " + lastFinished : "while starting")
                                + "; killed. Threads:" + dump);
                    }
                    return ready;
                }
                if (line.end()) {
                    Integer status = child.awaitExit(Duration.ofSeconds(30));
                    String crash = child.crashReport();
                    String what = "the child JVM (pid " + child.pid() + ") exited with " + describeStatus(status)
                            + (crash != null ? "\n" + crash : "") + tail(child);
                    if (current != null) {
                        complete(current, new MisuseOutcome(MisuseOutcome.Kind.CRASHED, what));
                        remaining.remove(current);
                    } else {
                        incidents.add(childDir.getFileName() + " " + (ready ? "after " + lastFinished : "while starting") + ": " + what);
                    }
                    return ready;
                }
                String text = line.text();
                if (text.equals("READY")) {
                    ready = true;
                } else if (text.equals("DONE")) {
                    Integer status = child.awaitExit(Duration.ofSeconds(30));
                    String crash = child.crashReport();
                    if (status == null || status != 0 || crash != null) {
                        incidents.add(childDir.getFileName() + " at exit: " + describeStatus(status)
                                + (crash != null ? "\n" + crash : ""));
                    }
                    remaining.clear();
                    return true;
                } else if (text.startsWith("START ")) {
                    current = text.substring(6);
                    currentStart = System.nanoTime();
                } else {
                    int space = text.indexOf(' ');
                    String verb = space < 0 ? text : text.substring(0, space);
                    String rest = space < 0 ? "" : text.substring(space + 1);
                    String name = current != null && rest.startsWith(current) ? current : rest;
                    String reason = rest.length() > name.length() + 2 ? rest.substring(name.length() + 2) : "";
                    MisuseOutcome outcome = switch (verb) {
                        case "PASS" -> MisuseOutcome.passed();
                        case "SKIP" -> new MisuseOutcome(MisuseOutcome.Kind.SKIPPED, reason);
                        case "FAIL" -> new MisuseOutcome(MisuseOutcome.Kind.FAILED, reason);
                        default -> null;
                    };
                    if (outcome != null) {
                        complete(name, outcome);
                        remaining.remove(name);
                        lastFinished = name;
                        current = null;
                    }
                }
            }
        }
    }

    private static String tail(MisuseChildProcess child) {
        String tail = child.stderrTail(12);
        return tail.isBlank() ? "" : "\nstandard error (last lines):\n" + tail;
    }

    private static String describeStatus(Integer status) {
        if (status == null) {
            return "no exit within 30 s";
        }
        return status > 128 ? "status " + status + " (signal " + (status - 128) + ")" : "status " + status;
    }

    private void complete(String name, MisuseOutcome outcome) {
        CompletableFuture<MisuseOutcome> f = outcomes.get(name);
        if (f != null) {
            f.complete(outcome);
        } else {
            incidents.add("an outcome for an unknown case: " + name + ": " + outcome);
        }
    }
}
