package dev.verbs4j.tools;

import java.io.PrintStream;
import java.util.Arrays;
import java.util.function.Function;

/**
 * The entry point every tool shares: a tool is a {@link Tool} (arguments and streams in, exit
 * status out, never {@code System.exit}), which tests run in-process; a command line of tools
 * ({@link ToolMain}, the perftest twins) runs one through {@link #launch} and {@link #main}, the
 * only place that ends the JVM.
 */
public final class Cli {

    private Cli() {
    }

    /** A tool's body: runs with {@code args}, prints to {@code out} and {@code err}, returns the exit status. */
    @FunctionalInterface
    public interface Tool {
        int run(String[] args, PrintStream out, PrintStream err) throws Exception;
    }

    /**
     * Runs {@code tool} on the process's streams with {@link OperatorLog one-line logging} on standard
     * error, then exits with its status (its low 8 bits, as a process sees it) once both streams are
     * flushed. An exception the tool lets through is printed as the JVM prints an uncaught one, and
     * the status is 1.
     */
    public static void main(String[] args, Tool tool) {
        OperatorLog.install(System.err);
        int status = run(args, System.out, System.err, tool);
        System.out.flush();
        System.err.flush();
        System.exit(status & 0xff);
    }

    /**
     * The {@code main} of a command line of several tools: the first argument names the tool
     * ({@code named} gives it, or null), the others are its arguments, run as by {@link #main}. Without
     * a known name it prints {@code usage} to standard error and exits with status 2.
     */
    public static void launch(String[] args, Function<String, Tool> named, String usage) {
        Tool tool = args.length == 0 ? null : named.apply(args[0]);
        if (tool == null) {
            System.err.println(usage);
            System.exit(2);
        }
        main(Arrays.copyOfRange(args, 1, args.length), tool);
    }

    /** Runs {@code tool}; an exception it lets through is printed to {@code err} and gives status 1. */
    public static int run(String[] args, PrintStream out, PrintStream err, Tool tool) {
        try {
            return tool.run(args, out, err);
        } catch (Exception e) {
            out.flush();
            err.print("Exception in thread \"" + Thread.currentThread().getName() + "\" ");
            e.printStackTrace(err);
            return 1;
        }
    }
}
