package dev.verbs4j.perf.tools;

import java.io.PrintStream;
import java.util.function.Predicate;

/**
 * One option of the perftest tools, as a row of {@link OptionTable}: its letter (a code of its own
 * for a long-only option), its long name, whether it takes a value, which tools take it, and how it
 * sets its value. Pure value; no native resources.
 *
 * @param code     the short letter, or the code getopt returns for a long-only option
 * @param longName the name after {@code --}, in perftest 4.5's spelling
 * @param argument whether a value follows
 * @param tools    which tools take the option, and how the others refuse it
 * @param action   how the option sets its value: null to go on, else the status to exit with
 */
record OptionSpec(char code, String longName, Argument argument, Tools tools, Action action) {

    /** Whether the option takes a value (getopt's {@code ':'}). */
    enum Argument { NONE, REQUIRED }

    /** Where a tool that does not take the option refuses it: before its value is read, or after (perftest's order). */
    enum Check { BEFORE_VALUE, AFTER_VALUE }

    /**
     * Which tools take an option; the others refuse it with perftest's message.
     *
     * @param accepts whether a tool (its verb and kind, and what was parsed before) takes the option
     * @param refusal the line perftest prints on stderr for the others
     * @param check   whether the refusal comes before or after the value is read
     */
    record Tools(Predicate<PerfOptions> accepts, String refusal, Check check) {

        /** Every tool takes the option. */
        static final Tools ALL = new Tools(o -> true, null, Check.BEFORE_VALUE);

        static Tools only(Predicate<PerfOptions> accepts, String refusal) {
            return new Tools(accepts, refusal, Check.BEFORE_VALUE);
        }

        static Tools onlyAfterValue(Predicate<PerfOptions> accepts, String refusal) {
            return new Tools(accepts, refusal, Check.AFTER_VALUE);
        }
    }

    /** How an option sets its value into the options being parsed. */
    @FunctionalInterface
    interface Action {
        /** Null to go on parsing, else the status to exit with (after the messages). */
        Integer apply(PerfOptions o, String argument, PrintStream out, PrintStream err);
    }

    /** The option as a {@code Getopt} long option ({@code name:c}). */
    String longOption() {
        return longName + ":" + code;
    }

    /** The option in a getopt option string: its code, and {@code ':'} when it takes a value. */
    String shortOption() {
        return argument == Argument.REQUIRED ? code + ":" : String.valueOf(code);
    }

    /** Applies the option to {@code o}: the tools' check in its place, then the value. */
    Integer apply(PerfOptions o, String value, PrintStream out, PrintStream err) {
        if (tools.check() == Check.BEFORE_VALUE && !tools.accepts().test(o)) {
            return OptionValues.refuse(err, tools.refusal());
        }
        Integer bad = action.apply(o, value, out, err);
        if (bad != null) {
            return bad;
        }
        if (tools.check() == Check.AFTER_VALUE && !tools.accepts().test(o)) {
            return OptionValues.refuse(err, tools.refusal());
        }
        return null;
    }
}
