package dev.verbs4j.tools.naaice;

import java.io.PrintStream;
import java.util.function.Consumer;

/**
 * The options all naaice tools take and the end of their option loops: {@code -v} and {@code -q}
 * count the log verbosity, {@code -h} prints the usage to standard output (status 0), an option
 * the tool does not know prints it to the tool's usage stream (status 2). Also the usage lines
 * the client-side tools share.
 */
final class CommonOptions {

    /** The usage lines of the options that name the NAA and the local address. */
    static final String NAA_USAGE = """
              -a, --address=ADDRESS   the NAA's address
              -p, --port=PORT         the NAA's port (default 12345)
              -l, --local=ADDRESS     the local address to connect from
            """;

    /** The usage lines of the step timeout and the common options of the client-side tools. */
    static final String CLIENT_USAGE_TAIL = """
              -t, --timeout=SECONDS   timeout of each step (default 60)
              -v, --verbose           log more (DEBUG as well as INFO)
              -q, --quiet             log warnings and errors only
              -h, --help              this text
            """;

    /** The status {@link #take} returns when the option loop goes on. */
    static final int GO_ON = -1;

    private final PrintStream out;
    private final PrintStream usageStream;
    private final Consumer<PrintStream> usage;
    private int verbosity;

    /** The common options of a tool printing its usage with {@code usage}, to {@code usageStream} after an unknown option. */
    CommonOptions(PrintStream out, PrintStream usageStream, Consumer<PrintStream> usage) {
        this.out = out;
        this.usageStream = usageStream;
        this.usage = usage;
    }

    /** Takes option {@code c}, one the tool itself does not take; returns the status to end with, or {@link #GO_ON}. */
    int take(int c) {
        switch (c) {
            case 'v' -> verbosity++;
            case 'q' -> verbosity--;
            case 'h' -> {
                usage.accept(out);
                return 0;
            }
            default -> {
                usage.accept(usageStream);
                return 2;
            }
        }
        return GO_ON;
    }

    /** {@code -v} counted up, {@code -q} down (see {@link dev.verbs4j.tools.OperatorLog#verbosity}). */
    int verbosity() {
        return verbosity;
    }
}
