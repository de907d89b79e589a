package dev.verbs4j.tools.rdmacm;

import dev.verbs4j.tools.Getopt;

import java.io.PrintStream;

/**
 * The frame of the RDMA programming manual's examples ({@link Mc}, {@link Srq}): getopt parsing in
 * which an unknown option or a missing required one prints the usage and a bad value prints
 * {@code "name: message"}, then the run, whose failure prints {@code "name: message"}; every
 * failure ends with status 1.
 */
abstract class ManualExample {

    final String name;
    final PrintStream out;
    final PrintStream err;

    ManualExample(String name, PrintStream out, PrintStream err) {
        this.name = name;
        this.out = out;
        this.err = err;
    }

    /** Parses {@code args} with the getopt {@code optstring}, then runs; returns the exit status. */
    final int run(String[] args, String optstring) {
        Getopt opts = new Getopt(name, args, optstring);
        for (int c; (c = opts.next(err)) != -1; ) {
            try {
                if (!option(c, opts.argument(), opts)) {
                    usage();
                    return 1;
                }
            } catch (IllegalArgumentException e) {
                return failed(e);
            }
        }
        if (!complete()) {
            usage();
            return 1;
        }
        try {
            return execute();
        } catch (RuntimeException e) {
            return failed(e);
        }
    }

    private int failed(RuntimeException e) {
        err.print(name + ": " + e.getMessage() + "\n");
        return 1;
    }

    /** Takes option {@code c} with its {@code argument}; false for an option the example does not know. */
    abstract boolean option(int c, String argument, Getopt opts);

    /** Whether the required options were given. */
    abstract boolean complete();

    /** Prints the usage to the output stream. */
    abstract void usage();

    /** The example's run, after parsing; returns the exit status. */
    abstract int execute();
}
