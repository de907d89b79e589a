package dev.verbs4j.perf.tools;

import dev.verbs4j.tools.Getopt;

import java.io.PrintStream;
import java.util.function.BooleanSupplier;

/**
 * How perftest 4.5 reads an option's value: its {@code CHECK_VALUE} of integers (the message names
 * the C type of the field), its ranges, and its refusals (a line on stderr, status 1). Used by the
 * rows of {@link OptionTable}.
 */
final class OptionValues {

    private OptionValues() {
    }

    /** Where a parsed integer goes. */
    @FunctionalInterface
    interface IntSink {
        void set(int v);
    }

    static Integer number(String a, String name, PrintStream err, IntSink sink) {
        return number(a, name, "int", err, sink);
    }

    /** perftest's CHECK_VALUE: the message names the C type of the field. */
    static Integer number(String a, String name, String type, PrintStream err, IntSink sink) {
        if (!isInteger(a)) {
            return refuse(err, " " + name + " argument " + a + " should be " + type);
        }
        sink.set(Getopt.strtol(a));
        return null;
    }

    /** {@link #number}, then, unless {@code valid} holds for the value set, {@code refusal} as a line and status 1. */
    static Integer number(String a, String name, String type, PrintStream err, IntSink sink, BooleanSupplier valid,
            String refusal) {
        Integer bad = number(a, name, type, err, sink);
        if (bad != null) {
            return bad;
        }
        if (!valid.getAsBoolean()) {
            return refuse(err, refusal);
        }
        return null;
    }

    /** A refusal as perftest's parser makes it: {@code message} as a line on stderr, status 1. */
    static Integer refuse(PrintStream err, String message) {
        err.print(message + "\n");
        return 1;
    }

    /** {@link #refuse}, after which perftest skips its "Parser function exited with Error" line. */
    static Integer refuseQuietly(PerfOptions o, PrintStream err, String message) {
        o.quietExit = true;
        return refuse(err, message);
    }

    static Integer range(String a, String name, int min, int max, PrintStream err, IntSink sink) {
        if (!isInteger(a)) {
            return refuse(err, " " + name + " argument " + a + " should be int");
        }
        int v = Getopt.strtol(a);
        if (v < min || v > max) {
            return refuse(err, " " + name + " should be between " + min + " and " + max);
        }
        sink.set(v);
        return null;
    }

    /** Whether {@code strtol(a, &end, 0)} consumes all of {@code a}. */
    static boolean isInteger(String a) {
        String t = a.strip();
        if (t.startsWith("-") || t.startsWith("+")) {
            t = t.substring(1);
        }
        if (t.isEmpty()) {
            return false;
        }
        if (t.length() > 2 && (t.startsWith("0x") || t.startsWith("0X"))) {
            return t.substring(2).chars().allMatch(ch -> Character.digit(ch, 16) >= 0);
        }
        int radix = t.startsWith("0") ? 8 : 10;
        return t.chars().allMatch(ch -> Character.digit(ch, radix) >= 0);
    }

    /** perftest's check of a UDP port option: an int (perftest 4.5 accepts any int as a port). */
    static Integer udpPort(String a, String name, PrintStream err) {
        return number(a, name, "int", err, v -> { });
    }

    static double parseDouble(String a) {
        try {
            return Double.parseDouble(a.strip());
        } catch (NumberFormatException e) {
            return 0;
        }
    }
}
