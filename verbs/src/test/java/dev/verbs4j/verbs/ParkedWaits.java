package dev.verbs4j.verbs;

import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingStream;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A device test's view of one blocking call made by several virtual threads and one platform
 * thread at once: JFR records pinned virtual threads ({@code jdk.VirtualThreadPinned}, threshold
 * 0) from before they start; {@link #awaitParked} waits until every virtual thread is parked
 * (WAITING or TIMED_WAITING: a virtual thread in {@code poll(2)} would be RUNNABLE) and the
 * platform thread is inside the call; {@link #assertCarriersFree} shows that other virtual threads
 * still run meanwhile; {@link #outcomes} collects what each call returned or threw, to compare
 * the virtual threads' outcome with the platform thread's once the resource was closed.
 *
 * <p>Run a scenario twice ({@link #rehearsed}) and check pinning in the second round: the first
 * virtual thread to load a class or link a call site on the way (the message of the exception a
 * close causes, say) is pinned while it does, which JFR reports but which is the JDK's, once.
 *
 * <p>From JDK 24 on a monitor no longer pins a virtual thread, so on such a JDK the thread states
 * carry most of the proof; JFR still reports the pinning that remains (a park under a native
 * frame or a class initializer), and on JDK 22 and 23 a park under a monitor too.
 */
public final class ParkedWaits implements AutoCloseable {

    /** More waiters than carriers: were they pinned, nothing else could run. */
    public static final int VIRTUAL_WAITERS = 2 * Runtime.getRuntime().availableProcessors() + 2;

    private final String what;
    private final RecordingStream jfr = new RecordingStream();
    private final List<RecordedEvent> pinned = new CopyOnWriteArrayList<>();
    private final List<Thread> virtualThreads = new ArrayList<>();
    private final List<CompletableFuture<String>> virtualOutcomes = new ArrayList<>();
    private final Thread platformThread;
    private final CompletableFuture<String> platformOutcome = new CompletableFuture<>();
    private final String platformFrame;
    /** The frame every virtual thread's stack must show too, or null (state alone counts). */
    private final String virtualFrame;

    private ParkedWaits(String what, int virtualCount, boolean withPlatform, String platformFrame,
                        String virtualFrame, IntFunction<Callable<?>> calls) {
        this.what = what;
        this.platformFrame = platformFrame;
        this.virtualFrame = virtualFrame;
        jfr.enable("jdk.VirtualThreadPinned").withThreshold(Duration.ZERO).withStackTrace();
        jfr.onEvent("jdk.VirtualThreadPinned", pinned::add);
        jfr.startAsync();
        for (int i = 0; i < virtualCount; i++) {
            CompletableFuture<String> f = new CompletableFuture<>();
            virtualOutcomes.add(f);
            Callable<?> call = calls.apply(i);
            virtualThreads.add(Thread.ofVirtual().name(what + " (virtual " + i + ")").start(() -> f.complete(outcome(call))));
        }
        Callable<?> platformCall = withPlatform ? calls.apply(-1) : null;
        platformThread = withPlatform
                ? Thread.ofPlatform().daemon().name(what + " (platform)").start(() -> platformOutcome.complete(outcome(platformCall)))
                : null;
    }

    /**
     * Starts {@link #VIRTUAL_WAITERS} virtual threads and one platform thread, each making {@code
     * call}; {@code platformFrame} is a method the platform thread's stack shows while it waits in
     * the call: a name (such as {@code pollReadable}) or {@code SimpleClassName.method}.
     */
    public static ParkedWaits start(String what, String platformFrame, Callable<?> call) {
        return new ParkedWaits(what, VIRTUAL_WAITERS, true, platformFrame, null, i -> call);
    }

    /**
     * As {@link #start}, for a call that parks on a lock before it waits (a virtual thread queued
     * on that lock is WAITING too): every thread, virtual ones included, must show {@code frame},
     * the method in which the call waits for its event.
     */
    public static ParkedWaits startWaitingIn(String what, String frame, Callable<?> call) {
        return new ParkedWaits(what, VIRTUAL_WAITERS, true, frame, frame, i -> call);
    }


    /** A scenario: {@code checked} is false in the rehearsal, true in the round whose pinning counts. */
    public interface Round {
        void run(boolean checked) throws Exception;
    }

    /** Runs {@code round} twice: a rehearsal (classes loaded, call sites linked), then the checked round. */
    public static void rehearsed(Round round) throws Exception {
        round.run(false);
        round.run(true);
    }

    /** Starts one virtual thread making {@code call} (for a wait that one event ends). */
    public static ParkedWaits startOne(String what, Callable<?> call) {
        return new ParkedWaits(what, 1, false, null, null, i -> call);
    }

    /** What {@code call} returned ("returned X") or threw ("threw Class: message"). */
    private static String outcome(Callable<?> call) {
        try {
            return "returned " + call.call();
        } catch (Throwable t) {
            return "threw " + t.getClass().getName() + ": " + t.getMessage();
        }
    }

    /** Whether {@code t}'s stack shows {@code frame}: a method, or {@code SimpleClassName.method}. */
    private static boolean shows(Thread t, String frame) {
        int dot = frame.lastIndexOf('.');
        String method = frame.substring(dot + 1);
        String type = dot < 0 ? null : frame.substring(0, dot);
        return Arrays.stream(t.getStackTrace()).anyMatch(e -> e.getMethodName().equals(method)
                && (type == null || e.getClassName().endsWith("." + type) || e.getClassName().endsWith("$" + type)));
    }

    /** The virtual threads making the call. */
    public List<Thread> virtualThreads() {
        return virtualThreads;
    }

    /**
     * Waits until every virtual thread is parked in the call at once (none has returned) and the
     * platform thread's stack shows the waiting frame.
     */
    public void awaitParked() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        boolean platformSeen = platformThread == null;
        while (true) {
            for (CompletableFuture<String> f : virtualOutcomes) {
                assertThat(f).as("%s: a virtual thread returned before it was woken: %s", what,
                        f.isDone() ? f.getNow(null) : "").isNotDone();
            }
            if (!platformSeen) {
                assertThat(platformOutcome).as("%s: the platform thread returned before it was woken: %s", what,
                        platformOutcome.isDone() ? platformOutcome.getNow(null) : "").isNotDone();
                platformSeen = shows(platformThread, platformFrame);
            }
            boolean allParked = virtualThreads.stream().allMatch(t ->
                    (t.getState() == Thread.State.WAITING || t.getState() == Thread.State.TIMED_WAITING)
                            && (virtualFrame == null || shows(t, virtualFrame)));
            if (allParked && platformSeen) {
                return;
            }
            if (System.nanoTime() > deadline) {
                StringBuilder states = new StringBuilder();
                for (Thread t : virtualThreads) {
                    states.append('\n').append(t.getName()).append(' ').append(t.getState());
                    for (StackTraceElement e : t.getStackTrace()) {
                        states.append("\n\tat ").append(e);
                    }
                }
                throw new AssertionError(what + ": the waiters did not all park (platform thread seen waiting: "
                        + platformSeen + ")" + states);
            }
            Thread.sleep(5);
        }
    }

    /**
     * While the waiters are parked, other virtual threads still run: a batch of as many short
     * tasks as there are waiters (and more than there are carriers) all complete.
     */
    public void assertCarriersFree() throws Exception {
        List<CompletableFuture<Long>> tasks = new ArrayList<>();
        for (int i = 0; i < VIRTUAL_WAITERS; i++) {
            CompletableFuture<Long> f = new CompletableFuture<>();
            tasks.add(f);
            long seed = i;
            Thread.ofVirtual().start(() -> {
                long x = seed;
                for (int k = 0; k < 10_000; k++) {
                    x = x * 6364136223846793005L + 1442695040888963407L;
                }
                f.complete(x);
            });
        }
        CompletableFuture.allOf(tasks.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
        for (CompletableFuture<String> f : virtualOutcomes) {
            assertThat(f).as("%s: still waiting while the other virtual threads ran", what).isNotDone();
        }
    }

    /** The virtual threads' outcomes, once each has one (waits up to 30 s). */
    public List<String> virtualOutcomes() throws Exception {
        List<String> out = new ArrayList<>();
        for (CompletableFuture<String> f : virtualOutcomes) {
            out.add(f.get(30, TimeUnit.SECONDS));
        }
        return out;
    }

    /** The platform thread's outcome (waits up to 30 s). */
    public String platformOutcome() throws Exception {
        return platformOutcome.get(30, TimeUnit.SECONDS);
    }

    /**
     * Every virtual thread ended as the platform thread did, and that outcome starts with {@code
     * expected} (e.g. "threw java.lang.IllegalStateException"); returns it.
     */
    public String assertSameOutcome(String expected) throws Exception {
        String platform = platformOutcome();
        assertThat(platform).as("%s: the platform thread's outcome", what).startsWith(expected);
        assertThat(virtualOutcomes()).as("%s: the virtual threads' outcomes (the platform thread's: %s)", what, platform)
                .allMatch(platform::equals);
        return platform;
    }

    /** What ends the waits: typically the close of the resource they wait on. */
    @FunctionalInterface
    public interface Wake {
        void run() throws Exception;
    }

    /**
     * The course of a {@link #rehearsed} round: {@link #awaitParked}, {@link #assertCarriersFree},
     * {@code wake}, {@link #assertSameOutcome} with {@code expected}, and in the {@code checked}
     * round {@link #assertNonePinned}; returns the outcome.
     */
    public String assertWokenAlike(boolean checked, Wake wake, String expected) throws Exception {
        awaitParked();
        assertCarriersFree();
        wake.run();
        String outcome = assertSameOutcome(expected);
        if (checked) {
            assertNonePinned();
        }
        return outcome;
    }

    /** No virtual thread was pinned since the start (JFR {@code jdk.VirtualThreadPinned}, threshold 0). */
    public void assertNonePinned() {
        jfr.stop();
        assertThat(pinned).as("%s: jdk.VirtualThreadPinned events", what)
                .extracting(e -> e.getStackTrace() == null ? "?" : e.getStackTrace().getFrames().toString())
                .isEmpty();
    }

    @Override
    public void close() {
        jfr.close();
    }
}
