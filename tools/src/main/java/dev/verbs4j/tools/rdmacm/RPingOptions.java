package dev.verbs4j.tools.rdmacm;

import dev.verbs4j.tools.Getopt;

import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * rping's command line: {@code -s|-c [-vVdPq] [-S size] [-C count] [-a addr] [-I addr] [-p port]},
 * read as the C program reads it, with its messages for what it refuses.
 */
final class RPingOptions {

    /** The largest buffer, as in the C program; a ping is at most one byte less. */
    static final int BUFSIZE = 64 * 1024;
    /** sizeof(stringify(INT_MAX)) + sizeof(RPING_MSG_FMT), as the C program computes it. */
    static final int MIN_BUFSIZE = 11 + 15;
    private static final int EINVAL = 22;

    int debug;
    boolean server;
    boolean persistent;
    int verbose;
    int validate;
    int count;
    int size = 64;
    boolean selfCreateQp;
    int port = 7174;
    InetAddress address;
    InetAddress source;

    private RPingOptions() {
        try {
            address = InetAddress.getByAddress(new byte[4]);
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Reads {@code args}; prints what the C program prints for them ({@code -d} lines to
     * {@code out}, refusals to {@code err}, the usage to {@code out}).
     *
     * @throws RPingException with the status to exit with, when the options are refused
     */
    static RPingOptions parse(String[] args, PrintStream out, PrintStream err) {
        RPingOptions o = new RPingOptions();
        int status = 0;
        boolean chosen = false;
        PrintStream quiet = new PrintStream(OutputStream.nullOutputStream()); // opterr = 0
        Getopt opts = new Getopt("rping", args, "a:I:Pp:C:S:t:scvVdq");
        for (int op; (op = opts.next(quiet)) != -1; ) {
            switch (op) {
                case 'a', 'I' -> {
                    InetAddress a = lookUp(opts.argument(), out);
                    if (a == null) {
                        status = -1;
                    } else if (op == 'a') {
                        o.address = a;
                    } else {
                        o.source = a;
                    }
                }
                case 'P' -> o.persistent = true;
                case 'p' -> {
                    o.port = atoi(opts.argument()) & 0xffff;
                    o.debug(out, "port %d\n", atoi(opts.argument()));
                }
                case 's' -> {
                    o.server = true;
                    chosen = true;
                    o.debug(out, "server\n");
                }
                case 'c' -> {
                    o.server = false;
                    chosen = true;
                    o.debug(out, "client\n");
                }
                case 'S' -> {
                    o.size = atoi(opts.argument());
                    if (o.size < MIN_BUFSIZE || o.size > BUFSIZE - 1) {
                        err.printf("Invalid size %d (valid range is %d to %d)\n", o.size, MIN_BUFSIZE, BUFSIZE);
                        status = EINVAL;
                    } else {
                        o.debug(out, "size %d\n", atoi(opts.argument()));
                    }
                }
                case 'C' -> {
                    o.count = atoi(opts.argument());
                    if (o.count < 0) {
                        err.printf("Invalid count %d\n", o.count);
                        status = EINVAL;
                    } else {
                        o.debug(out, "count %d\n", o.count);
                    }
                }
                case 'v' -> {
                    o.verbose++;
                    o.debug(out, "verbose\n");
                }
                case 'V' -> {
                    o.validate++;
                    o.debug(out, "validate data\n");
                }
                case 'd' -> o.debug++;
                case 'q' -> o.selfCreateQp = true;
                default -> {
                    usage(out);
                    throw RPingException.reported(EINVAL);
                }
            }
        }
        if (status != 0) {
            throw RPingException.reported(status);
        }
        if (!chosen) {
            usage(out);
            throw RPingException.reported(EINVAL);
        }
        return o;
    }

    /** Prints a {@code -d} line to {@code out}. */
    void debug(PrintStream out, String format, Object... args) {
        if (debug > 0) {
            out.printf(format, args);
        }
    }

    private static InetAddress lookUp(String name, PrintStream out) {
        try {
            return InetAddress.getByName(name);
        } catch (UnknownHostException e) {
            out.print("getaddrinfo failed (Name or service not known) - invalid hostname or IP address\n");
            return null;
        }
    }

    /** C's atoi: leading blanks and sign, then digits while there are any; saturates like glibc's strtol. */
    private static int atoi(String s) {
        String t = s.strip();
        int i = 0;
        boolean neg = false;
        if (i < t.length() && (t.charAt(i) == '-' || t.charAt(i) == '+')) {
            neg = t.charAt(i) == '-';
            i++;
        }
        long v = 0;
        for (; i < t.length() && Character.isDigit(t.charAt(i)); i++) {
            v = Math.min(v * 10 + (t.charAt(i) - '0'), 1L << 32);
        }
        return (int) (neg ? -v : v);
    }

    private static void usage(PrintStream out) {
        out.print("rping -s [-vVd] [-S size] [-C count] [-a addr] [-p port]\n");
        out.print("rping -c [-vVd] [-S size] [-C count] [-I addr] -a addr [-p port]\n");
        out.print("\t-c\t\tclient side\n");
        out.print("\t-I\t\tSource address to bind to for client.\n");
        out.print("\t-s\t\tserver side.  To bind to any address with IPv6 use -a ::0\n");
        out.print("\t-v\t\tdisplay ping data to stdout\n");
        out.print("\t-V\t\tvalidate ping data\n");
        out.print("\t-d\t\tdebug printfs\n");
        out.print("\t-S size \tping data size\n");
        out.print("\t-C count\tping count times\n");
        out.print("\t-a addr\t\taddress\n");
        out.print("\t-p port\t\tport\n");
        out.print("\t-P\t\tpersistent server mode allowing multiple connections\n");
        out.print("\t-q\t\tuse self-created, self-modified QP\n");
    }
}
