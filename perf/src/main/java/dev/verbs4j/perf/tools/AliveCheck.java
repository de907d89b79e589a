package dev.verbs4j.perf.tools;

/**
 * perftest's {@code check_alive}: the watchdog of ib_send_bw's receiving loops (the server's, and
 * both sides' with {@code -b}) in iteration mode. It is armed when a loop starts and then looks
 * every period (60 s, as perftest's {@code alarm(60)}): if the receive count grew since its last
 * look it looks again a period later; if it did not, and fewer messages arrived than the run
 * requires, the run ends with perftest's words ({@code Did not get Message for 120 Seconds}, even
 * though the first look comes after one period). Like perftest's, its last count goes back to 0
 * when a loop ends while the current count stays, so with {@code -a} a later size that receives
 * nothing counts as progress at its first look and is never found silent, as in perftest.
 *
 * <p>The period can be shortened with the system property {@value #PERIOD_PROPERTY} (whole
 * seconds, at least 1), for scripts and tests that cannot wait a minute for the verdict.
 * Plain Java state of one run's thread; it owns no native memory.
 */
final class AliveCheck {

    /** The system property that sets the period in seconds (default 60). */
    static final String PERIOD_PROPERTY = "verbs4j.perftest.check_alive_seconds";

    private static final long DEFAULT_SECONDS = 60;

    private final long periodNanos;
    /** The receive count, kept across the loops of one run as perftest's global is. */
    private long current;
    /** The count at the last look. */
    private long last;
    /** What the current loop requires. */
    private long total;
    /** When the next look is due. */
    private long due;
    private boolean armed;

    /** A watchdog that looks every {@code seconds}. */
    AliveCheck(long seconds) {
        this.periodNanos = seconds * 1_000_000_000L;
    }

    /**
     * The period in seconds: the system property's, or perftest's 60.
     *
     * @throws IllegalArgumentException naming the property when its value is not a whole number of
     *                                  seconds from 1 to 1,000,000,000
     */
    static long period() {
        String p = System.getProperty(PERIOD_PROPERTY);
        if (p == null) {
            return DEFAULT_SECONDS;
        }
        try {
            long s = Long.parseLong(p.strip());
            if (s >= 1 && s <= 1_000_000_000L) {
                return s;
            }
        } catch (NumberFormatException e) {
            // falls through
        }
        throw new IllegalArgumentException(PERIOD_PROPERTY + " must be a whole number of seconds from 1 to 1000000000: " + p);
    }

    /** A receiving loop of {@code total} messages starts: the first look is a period from {@code now}. */
    void arm(long total, long now) {
        this.total = total;
        this.due = now + periodNanos;
        this.armed = true;
    }

    /** The loop has received {@code count} messages so far. */
    void received(long count) {
        current = count;
    }

    /**
     * At a poll that found nothing: takes the look if it is due, and tells whether it ends the run
     * (no message since the last look, and fewer than required).
     */
    boolean silent(long now) {
        if (!armed || now - due < 0) {
            return false;
        }
        if (current > last) {
            last = current;
            due = now + periodNanos;
            return false;
        }
        // perftest's handler arms no further alarm once the count stands still
        armed = false;
        return current == last && current < total;
    }

    /** The loop ended (perftest's clean-up sets its last count back to 0). */
    void loopEnded() {
        last = 0;
    }

    /** The count the verdict names. */
    long current() {
        return current;
    }

    /** What the loop required. */
    long total() {
        return total;
    }
}
