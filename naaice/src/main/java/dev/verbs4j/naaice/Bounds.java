package dev.verbs4j.naaice;

/**
 * The range checks of the NAAICE API's arguments, all with one message form ("maxRegions is
 * 1..255, got 0"), so that a limit reads the same wherever it is given. Holds nothing.
 */
final class Bounds {

    private Bounds() {
    }

    /** Throws unless {@code min <= n <= max}: "{@code what} is min..max, got n". */
    static void inRange(String what, long n, long min, long max) {
        if (n < min || n > max) {
            throw new IllegalArgumentException(what + " is " + min + ".." + max + ", got " + n);
        }
    }

    /** Throws unless {@code n >= min}: "{@code what} is at least min, got n". */
    static void atLeast(String what, long n, long min) {
        if (n < min) {
            throw new IllegalArgumentException(what + " is at least " + min + ", got " + n);
        }
    }
}
