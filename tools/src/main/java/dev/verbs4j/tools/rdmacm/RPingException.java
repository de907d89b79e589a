package dev.verbs4j.tools.rdmacm;

import java.io.PrintStream;

/**
 * A failure that ends an rping run or connection: the report the C program prints to stderr for
 * it (none when it has been printed already) and the status it exits with.
 */
final class RPingException extends RuntimeException {

    private final int status;

    /** A failure with {@code report} still to print (null for none) and the exit {@code status}. */
    RPingException(String report, int status) {
        super(report, null, false, false);
        this.status = status;
    }

    /** A failure whose report has been printed already. */
    static RPingException reported(int status) {
        return new RPingException(null, status);
    }

    /** The status rping exits with for this failure. */
    int status() {
        return status;
    }

    /** Prints the report, if there is one, to {@code err}. */
    void report(PrintStream err) {
        if (getMessage() != null) {
            err.print(getMessage());
        }
    }
}
