package dev.verbs4j.verbs;

import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * A data-path call looping on one thread while another thread closes an object it uses, over a
 * few rounds with different delays before the close. The loop may meet {@link VerbsException}s
 * (a full queue) before and after the close; once the close started, a clear refusal ({@link
 * IllegalStateException}) ends the loop when the loop's own object (or its parent) was closed,
 * and is what every later call meets when a referenced object (a region, an address handle, the
 * batch) was. Anything else thrown, a refusal before any close, or a loop still running 10 s
 * after closing its object fails the race.
 */
final class MisuseRace {

    /**
     * What one round needs.
     *
     * @param call    the call to loop
     * @param target  what to close
     * @param cleanup closes the rest afterwards
     * @param check   what must hold once the loop stopped (before the cleanup)
     */
    record Round(MisuseExpect.Action call, AutoCloseable target, AutoCloseable cleanup, MisuseExpect.Action check) {
        Round(MisuseExpect.Action call, AutoCloseable target, AutoCloseable cleanup) {
            this(call, target, cleanup, () -> { });
        }
    }

    /** Makes a fresh round. */
    @FunctionalInterface
    interface Setup {
        Round open() throws Throwable;
    }

    /** How the loop must behave once its target is closed. */
    enum After {
        /** The loop's object or its parent: every call after the close is refused, the loop ends. */
        ENDS,
        /** A referenced object: calls naming it are refused (or fail in the device), the loop goes on. */
        REFUSED,
        /** Something the calls no longer need (inline data already copied): calls keep working. */
        UNAFFECTED
    }

    private static final long[] DELAYS_NANOS = {0, 200_000, 2_000_000};

    private MisuseRace() {
    }

    /** Runs {@link #DELAYS_NANOS rounds} of the race of {@code setup}'s call against its close. */
    static void run(String what, long seed, After after, Setup setup) throws Throwable {
        Random random = new Random(seed);
        for (long delay : DELAYS_NANOS) {
            round(what, delay + random.nextInt(100_000), after, setup.open());
        }
    }

    private static void round(String what, long delayNanos, After after, Round round) throws Throwable {
        AtomicInteger calls = new AtomicInteger();
        AtomicInteger refusedAfterClose = new AtomicInteger();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicReference<Throwable> end = new AtomicReference<>();
        CountDownLatch started = new CountDownLatch(1);
        AtomicBoolean closing = new AtomicBoolean();
        AtomicBoolean stop = new AtomicBoolean();
        Thread worker = Thread.ofPlatform().daemon().name("misuse-race").start(() -> {
            started.countDown();
            while (true) {
                if (stop.get()) {
                    return;
                }
                try {
                    round.call().run();
                    calls.incrementAndGet();
                } catch (VerbsException transientFailure) {
                    calls.incrementAndGet(); // a full queue, an error state: the loop goes on
                } catch (Throwable t) {
                    if (!MisuseExpect.isClearRefusal(t)) {
                        failure.compareAndSet(null, new AssertionError(what + ": the looping call threw " + t, t));
                        return;
                    }
                    if (!closing.get()) {
                        failure.compareAndSet(null, new AssertionError(what + ": the looping call was refused before any close: "
                                + t, t));
                        return;
                    }
                    if (after == After.ENDS) {
                        end.set(t);
                        return;
                    }
                    if (after == After.UNAFFECTED) {
                        failure.compareAndSet(null, new AssertionError(what + ": refused after closing what it no longer needs: "
                                + t, t));
                        return;
                    }
                    refusedAfterClose.incrementAndGet();
                }
            }
        });
        try {
            started.await();
            long warm = System.nanoTime() + 5_000_000_000L;
            while (calls.get() < 3 && failure.get() == null && worker.isAlive() && System.nanoTime() < warm) {
                Thread.onSpinWait();
            }
            if (failure.get() != null) {
                throw failure.get();
            }
            LockSupport.parkNanos(delayNanos);
            closing.set(true);
            closeTarget(what, round.target());
            if (after == After.ENDS) {
                worker.join(10_000);
                if (worker.isAlive()) {
                    stop.set(true);
                    throw new AssertionError(what + ": the loop still ran 10 s after the close (" + calls.get() + " calls)");
                }
            } else {
                Thread.sleep(20);
                stop.set(true);
                worker.join(10_000);
                if (worker.isAlive()) {
                    throw new AssertionError(what + ": the looping call did not return within 10 s");
                }
            }
            if (failure.get() != null) {
                throw failure.get();
            }
            if (after == After.ENDS && end.get() == null) {
                throw new AssertionError(what + ": the loop ended without an exception");
            }
            round.check().run();
        } finally {
            stop.set(true);
            worker.join(TimeUnit.SECONDS.toMillis(10));
            quietly(round.cleanup());
        }
    }

    /**
     * Closes {@code target}; an arena that a call still uses refuses to close (IllegalStateException)
     * and is tried again for up to 5 s. Other clear refusals (a region the provider cannot
     * deregister yet) leave it open, which is fine.
     */
    private static void closeTarget(String what, AutoCloseable target) throws Throwable {
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (true) {
            try {
                target.close();
                return;
            } catch (IllegalStateException inUse) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError(what + ": the close was still refused after 5 s: " + inUse, inUse);
                }
                Thread.onSpinWait();
            } catch (Throwable t) {
                if (!MisuseExpect.isClearRefusal(t)) {
                    throw new AssertionError(what + ": closing threw " + t, t);
                }
                return;
            }
        }
    }

    /** Closes {@code c}, ignoring that it was closed already. */
    static void quietly(AutoCloseable c) throws Exception {
        try {
            if (c != null) {
                c.close();
            }
        } catch (IllegalStateException alreadyClosed) {
            // closed by the race
        }
    }
}
