package dev.verbs4j.tools;

import java.io.PrintStream;

/**
 * The end of a tool's run with its exit status, its message already printed: thrown from the
 * step that failed up to the top of the run, which returns the status. Carries no stack trace.
 */
public final class ToolExit extends Exception {

    private static final long serialVersionUID = 1L;

    private final int status;

    /** The end with {@code status}. */
    public ToolExit(int status) {
        super(null, null, false, false);
        this.status = status;
    }

    /** Prints {@code message} as a line to {@code err}; the end with {@code status} that follows it. */
    public static ToolExit printed(PrintStream err, String message, int status) {
        err.print(message + "\n");
        return new ToolExit(status);
    }

    /** The status the tool exits with. */
    public int status() {
        return status;
    }
}
