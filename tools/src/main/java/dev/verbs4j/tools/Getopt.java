package dev.verbs4j.tools;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small {@code getopt_long(3)} for the command-line tools, so that they accept their C twins'
 * options spelled the same way: {@code -d rxe0}, {@code -drxe0}, {@code --ib-dev=rxe0},
 * {@code --ib-dev rxe0}, clustered flags ({@code -lv}). Non-option arguments are skipped and
 * collected, in order, as {@link #operands()} (as GNU getopt permutes them to the end). As glibc's
 * getopt_long, a long option may be abbreviated to any prefix that names one option only
 * ({@code --bidir}); a prefix of several is reported as ambiguous with the candidates, in the order
 * they were given, and messages name the option found, not the abbreviation.
 */
public final class Getopt {

    private final String program;
    private final String[] args;
    private final String shortOpts;
    private final Map<String, Character> longOpts = new LinkedHashMap<>();
    private final List<String> operands = new ArrayList<>();
    private int index;
    private int cluster;
    private String argument;

    /**
     * @param program   the name used in error messages
     * @param shortOpts getopt's option string ({@code "d:i:lv"})
     * @param longOpts  long options as {@code name:c}, mapping {@code --name} to short option {@code c}
     */
    public Getopt(String program, String[] args, String shortOpts, String... longOpts) {
        this.program = program;
        this.args = args;
        this.shortOpts = shortOpts;
        for (String l : longOpts) {
            int colon = l.lastIndexOf(':');
            this.longOpts.put(l.substring(0, colon), l.charAt(colon + 1));
        }
    }

    /** The argument of the option {@link #next} returned last. */
    public String argument() {
        return argument;
    }

    /**
     * The non-option arguments seen so far, in order; complete once {@link #next} returned -1
     * (everything after {@code --} included).
     */
    public List<String> operands() {
        return List.copyOf(operands);
    }

    /**
     * The argument of the option {@link #next} returned last as a number greater than zero.
     *
     * @throws IllegalArgumentException naming the option and the text when it is not one
     */
    public int positiveArgument(char option) {
        try {
            int v = Integer.parseInt(argument.strip());
            if (v > 0) {
                return v;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException("option -" + option + " needs a positive number, got '" + argument + "'");
    }

    /** The next option character, {@code '?'} after printing an error to {@code err}, or -1 at the end. */
    public int next(PrintStream err) {
        argument = null;
        if (cluster == 0) {
            while (index < args.length && (!args[index].startsWith("-") || args[index].equals("-"))) {
                operands.add(args[index++]);
            }
            if (index < args.length && args[index].equals("--")) {
                operands.addAll(Arrays.asList(args).subList(index + 1, args.length));
                index = args.length;
                return -1;
            }
            if (index >= args.length) {
                return -1;
            }
            if (args[index].startsWith("--")) {
                return nextLong(err);
            }
            cluster = 1;
        }
        String word = args[index];
        char c = word.charAt(cluster++);
        int at = shortOpts.indexOf(c);
        boolean last = cluster >= word.length();
        if (at < 0 || c == ':') {
            err.print(program + ": invalid option -- '" + c + "'\n");
            advanceIf(last);
            return '?';
        }
        if (at + 1 < shortOpts.length() && shortOpts.charAt(at + 1) == ':') {
            if (!last) {
                argument = word.substring(cluster);
            } else if (index + 1 < args.length) {
                argument = args[++index];
            } else {
                err.print(program + ": option requires an argument -- '" + c + "'\n");
                advanceIf(true);
                return '?';
            }
            advanceIf(true);
            return c;
        }
        advanceIf(last);
        return c;
    }

    private int nextLong(PrintStream err) {
        String word = args[index++];
        int eq = word.indexOf('=');
        String typed = eq < 0 ? word.substring(2) : word.substring(2, eq);
        String name = typed;
        Character c = longOpts.get(typed);
        if (c == null) {
            List<String> matches = new ArrayList<>();
            boolean ambiguous = false;
            for (Map.Entry<String, Character> e : longOpts.entrySet()) {
                if (e.getKey().startsWith(typed)) {
                    if (c != null && !c.equals(e.getValue())) {
                        ambiguous = true;
                    }
                    if (c == null) {
                        c = e.getValue();
                        name = e.getKey();
                    }
                    matches.add(e.getKey());
                }
            }
            if (ambiguous) {
                StringBuilder s = new StringBuilder(program).append(": option '--").append(typed)
                        .append("' is ambiguous; possibilities:");
                for (String m : matches) {
                    s.append(" '--").append(m).append('\'');
                }
                err.print(s.append('\n'));
                return '?';
            }
        }
        if (c == null) {
            err.print(program + ": unrecognized option '" + word + "'\n");
            return '?';
        }
        int at = shortOpts.indexOf(c);
        if (at < 0) {
            err.print(program + ": option '--" + name + "' is not supported\n");
            return '?';
        }
        boolean takesArgument = at + 1 < shortOpts.length() && shortOpts.charAt(at + 1) == ':';
        if (takesArgument) {
            if (eq >= 0) {
                argument = word.substring(eq + 1);
            } else if (index < args.length) {
                argument = args[index++];
            } else {
                err.print(program + ": option '--" + name + "' requires an argument\n");
                return '?';
            }
        } else if (eq >= 0) {
            err.print(program + ": option '--" + name + "' doesn't allow an argument\n");
            return '?';
        }
        return c;
    }

    private void advanceIf(boolean last) {
        if (last) {
            index++;
            cluster = 0;
        }
    }

    /** {@code strtol(s, NULL, 0)} clamped to int: leading blanks, sign, 0x/0 prefixes; 0 when nothing parses. */
    public static int strtol(String s) {
        return (int) Math.max(Integer.MIN_VALUE, Math.min(Integer.MAX_VALUE, strtoll(s)));
    }

    /** {@code strtol(s, NULL, 0)} of a 64-bit long: as {@link #strtol}, clamped to long. */
    public static long strtoll(String s) {
        String t = s.stripLeading();
        boolean negative = false;
        if (!t.isEmpty() && (t.charAt(0) == '-' || t.charAt(0) == '+')) {
            negative = t.charAt(0) == '-';
            t = t.substring(1);
        }
        int radix = 10;
        if (t.length() > 2 && t.charAt(0) == '0' && (t.charAt(1) == 'x' || t.charAt(1) == 'X')
                && Character.digit(t.charAt(2), 16) >= 0) {
            radix = 16;
            t = t.substring(2);
        } else if (t.startsWith("0")) {
            radix = 8;
        }
        java.math.BigInteger v = java.math.BigInteger.ZERO;
        java.math.BigInteger r = java.math.BigInteger.valueOf(radix);
        java.math.BigInteger cap = java.math.BigInteger.ONE.shiftLeft(64);
        for (int i = 0; i < t.length(); i++) {
            int d = Character.digit(t.charAt(i), radix);
            if (d < 0) {
                break;
            }
            v = v.multiply(r).add(java.math.BigInteger.valueOf(d)).min(cap);
        }
        v = negative ? v.negate() : v;
        return v.max(java.math.BigInteger.valueOf(Long.MIN_VALUE)).min(java.math.BigInteger.valueOf(Long.MAX_VALUE))
                .longValue();
    }
}
