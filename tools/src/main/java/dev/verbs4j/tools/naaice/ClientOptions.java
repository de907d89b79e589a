package dev.verbs4j.tools.naaice;

import dev.verbs4j.naaice.NaaClient;
import dev.verbs4j.tools.Getopt;
import dev.verbs4j.tools.OperatorLog;

import java.io.PrintStream;
import java.time.Duration;
import java.util.function.Consumer;

/**
 * The options {@link NaaiceBench} and {@link NaaiceLoad} read alike: the NAA's address and port
 * and the local address ({@code -a}, {@code -p}, {@code -l}), the step timeout ({@code -t}) and
 * the {@link CommonOptions}. A tool's option loop hands each option it does not take itself to
 * {@link #take}; after the loop, {@link #resolve} gives the addresses. One per run of a tool.
 */
final class ClientOptions {

    private final String tool;
    private final PrintStream err;
    private final Consumer<PrintStream> usage;
    private final CommonOptions common;
    private String address;
    private String localAddress;
    private int port = NaaClient.DEFAULT_PORT;
    private Duration timeout = Duration.ofSeconds(60);

    /** The options of {@code tool} (its prefix on {@code err}), which prints its usage with {@code usage}. */
    ClientOptions(String tool, PrintStream out, PrintStream err, Consumer<PrintStream> usage) {
        this.tool = tool;
        this.err = err;
        this.usage = usage;
        this.common = new CommonOptions(out, err, usage);
    }

    /**
     * Takes option {@code c} with {@code g}'s argument; returns the status to end with, or {@link
     * CommonOptions#GO_ON}.
     *
     * @throws IllegalArgumentException for a value out of range (see {@link #invalid})
     */
    int take(int c, Getopt g) {
        switch (c) {
            case 'a' -> address = g.argument();
            case 'p' -> port = (int) NaaArguments.number("--port", g.argument(), 1, 65535);
            case 'l' -> localAddress = g.argument();
            case 't' -> timeout = Duration.ofSeconds(NaaArguments.number("--timeout", g.argument(), 1, 86_400));
            default -> {
                return common.take(c);
            }
        }
        return CommonOptions.GO_ON;
    }

    /** Prints a bad option value, as thrown by the option loop; returns the tool's status 2. */
    int invalid(IllegalArgumentException e) {
        err.println(tool + ": " + e.getMessage());
        return 2;
    }

    /** The address of {@code -a}, or null when it was not given. */
    String address() {
        return address;
    }

    /** The timeout of each step ({@code -t}). */
    Duration timeout() {
        return timeout;
    }

    /** The log verbosity of {@code -v} and {@code -q}, applied ({@link OperatorLog#verbosity}). */
    void applyVerbosity() {
        OperatorLog.verbosity(common.verbosity());
    }

    /** The addresses, resolved; null after printing why not (see {@link NaaArguments#resolve}): the tool exits 2. */
    NaaArguments resolve() {
        return NaaArguments.resolve(tool, address, localAddress, port, err, usage);
    }
}
