package dev.verbs4j.tools.rdmacm;

import dev.verbs4j.tools.Getopt;
import dev.verbs4j.verbs.CompletionQueue;
import dev.verbs4j.verbs.WorkCompletion;
import dev.verbs4j.verbs.WorkCompletions;

import java.io.PrintStream;
import java.time.Duration;

/**
 * The frame of the RDMA programming manual's examples ({@link Mc}, {@link Srq}): getopt parsing in
 * which an unknown option or a missing required one prints the usage and a bad value prints
 * {@code "name: message"}, then the run, whose failure prints {@code "name: message"}; every
 * failure ends with status 1. Every wait of the run is bounded by {@code -t SECONDS} (default 30),
 * an option each example takes.
 */
abstract class ManualExample {

    final String name;
    final PrintStream out;
    final PrintStream err;
    /** The bound of every wait ({@code -t}). */
    Duration limit = Duration.ofSeconds(30);

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
                if (c == 't') {
                    limit = Duration.ofSeconds(opts.positiveArgument('t'));
                } else if (!option(c, opts.argument(), opts)) {
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

    /**
     * Spins on {@code cq} until a completion is polled into {@code wcs} and returns it; after
     * {@link #limit}, fails with {@code missing}, what did not arrive (see {@link #timedOut}).
     */
    final WorkCompletion pollOne(CompletionQueue cq, WorkCompletions wcs, String missing) {
        long deadline = System.nanoTime() + limit.toNanos();
        while (cq.poll(wcs) == 0) {
            if (System.nanoTime() - deadline > 0) {
                throw timedOut(missing);
            }
            Thread.onSpinWait();
        }
        return wcs.get(0);
    }

    /** The failure of a wait that ran out: {@code "<missing> within <limit> s"}. */
    final IllegalStateException timedOut(String missing) {
        return new IllegalStateException(missing + " within " + limit.toSeconds() + " s");
    }

    /**
     * Takes option {@code c} (other than {@code -t}) with its {@code argument}; false for an option
     * the example does not know.
     */
    abstract boolean option(int c, String argument, Getopt opts);

    /** Whether the required options were given. */
    abstract boolean complete();

    /** Prints the usage to the output stream. */
    abstract void usage();

    /** The example's run, after parsing; returns the exit status. */
    abstract int execute();
}
