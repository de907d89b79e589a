package dev.verbs4j.tools.naaice;

import dev.verbs4j.tools.Sizes;

import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.function.Consumer;

/**
 * What the naaice client tools ({@link NaaiceBench}, {@link NaaiceLoad}) read the same way from
 * their command lines: numbers and sizes in a range (an {@link IllegalArgumentException} naming the
 * option otherwise), and the NAA's address with the local one, resolved.
 *
 * @param naa   the NAA's address and port
 * @param local the local address to connect from, or null
 */
record NaaArguments(InetSocketAddress naa, InetSocketAddress local) {

    /**
     * The addresses of {@code -a} and {@code -l}, resolved; null after printing why not on {@code
     * err} ({@code tool}'s prefix; then the usage text when {@code -a} is missing): the tool exits 2.
     */
    static NaaArguments resolve(String tool, String address, String localAddress, int port, PrintStream err,
            Consumer<PrintStream> usage) {
        if (address == null) {
            err.println(tool + ": --address is required");
            usage.accept(err);
            return null;
        }
        try {
            return new NaaArguments(new InetSocketAddress(InetAddress.getByName(address), port),
                    localAddress == null ? null : new InetSocketAddress(InetAddress.getByName(localAddress), 0));
        } catch (UnknownHostException e) {
            err.println(tool + ": unknown host: " + e.getMessage());
            return null;
        }
    }

    /** A size with k, m, g suffixes ({@link Sizes}) from {@code min} to {@code max}. */
    static long size(String option, String value, long min, long max) {
        try {
            long v = Sizes.parse(value);
            if (v >= min && v <= max) {
                return v;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw outOfRange(option, value, min, max);
    }

    /** A decimal number from {@code min} to {@code max}. */
    static long number(String option, String value, long min, long max) {
        try {
            long v = Long.parseLong(value.strip());
            if (v >= min && v <= max) {
                return v;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw outOfRange(option, value, min, max);
    }

    private static IllegalArgumentException outOfRange(String option, String value, long min, long max) {
        return new IllegalArgumentException("option " + option + " needs a number from " + min + " to " + max + ", got '"
                + value + "'");
    }
}
