package dev.verbs4j.perf.tools;

/**
 * perftest's software rate limiter ({@code --rate_limit_type=SW}, or HW where the queue pair
 * does not take a static rate): posts go in bursts of {@code --burst_size} requests (the send
 * depth by default), and a burst starts no earlier than the gap after the previous one, the gap
 * being what makes {@code --rate_limit} (in {@code --rate_units}: Gb/s, MiB/s or packets/s) with
 * bursts of that size. One instance per stream, used on the thread that posts; no native resources.
 */
final class RateLimiter {

    private final boolean on;
    private final long gapNanos;
    private final int burst;
    private final int list;
    private boolean sending;
    private boolean started;
    private long deadline;
    private int inBurst;

    private RateLimiter(boolean on, long gapNanos, int burst, int list) {
        this.on = on;
        this.gapNanos = gapNanos;
        this.burst = burst;
        this.list = list;
    }

    /** The limiter of a stream of {@code size}-byte operations; one that never holds back without SW limiting. */
    static RateLimiter of(PerfOptions o, long size) {
        if (o.rateLimitType != PerfOptions.RateLimitType.SW) {
            return new RateLimiter(false, 0, 1, 1);
        }
        // perftest's arithmetic: packets per second as an int, bursts per second as an unsigned int
        int pps = switch (o.rateUnits) {
            case MEGA_BYTE_PS -> (int) (o.rateLimit / size * 1048576);
            case GIGA_BIT_PS -> (int) (o.rateLimit / (size * 8) * 1_000_000_000);
            case PACKET_PS -> (int) o.rateLimit;
        };
        int burst = Math.max(1, o.burstSize);
        long bursts = Integer.toUnsignedLong(pps) / burst;
        long gap = bursts == 0 ? Long.MAX_VALUE / 4 : (long) (1_000_000_000.0 / bursts);
        return new RateLimiter(true, gap, burst, Math.max(1, o.postList));
    }

    /** Before the posts on a queue pair: false while the gap before the next burst lasts. */
    boolean open(long now) {
        if (!on || sending) {
            return true;
        }
        if (started && deadline - now > 0) {
            return false;
        }
        started = true;
        deadline = now + gapNanos;
        sending = true;
        inBurst = 0;
        return true;
    }

    /** Whether the current burst may take one more post. */
    boolean sending() {
        return !on || sending;
    }

    /** One post (of a post list) went out. */
    void posted() {
        if (on) {
            inBurst += list;
            if (inBurst >= burst) {
                sending = false;
            }
        }
    }
}
