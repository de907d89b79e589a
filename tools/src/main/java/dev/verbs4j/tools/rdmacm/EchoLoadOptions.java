package dev.verbs4j.tools.rdmacm;

import dev.verbs4j.tools.Getopt;
import dev.verbs4j.tools.Sizes;

import java.io.PrintStream;
import java.time.Duration;

/**
 * The command line of {@code rdma-echo-load}: the side (server or client), the addresses, how
 * many connections and messages, their size, and the time limit. An immutable value; {@link
 * #parse} prints refusals and the usage itself.
 *
 * @param server      whether this is the server side ({@code -s})
 * @param address     the server side's listening address, or the client's server address
 * @param port        the RDMA CM port
 * @param local       the client's local address, or null
 * @param connections the client's concurrent connections (one virtual thread each); the server
 *                    ends after serving this many when {@code -C} is given
 * @param messages    messages each client connection sends and checks
 * @param size        bytes per message
 * @param serveCount  the server ends after this many connections ended (0: serves until killed)
 * @param timeout     the limit of every connect and every message round trip
 */
public record EchoLoadOptions(boolean server, String address, int port, String local, int connections, int messages,
                              int size, int serveCount, Duration timeout) {

    /** The RDMA CM port used when none is given. */
    public static final int DEFAULT_PORT = 7472;

    static final String USAGE = """
            Usage: rdma-echo-load -s [-a ADDRESS] [-p PORT] [-C COUNT]      (server)
                   rdma-echo-load -a SERVER [OPTIONS]                        (client)
              -s, --server            serve: echo every message of every connection (one virtual thread each)
              -a, --address=HOST      server: the address to listen on (default 0.0.0.0); client: the server
              -p, --port=PORT         RDMA CM port (default 7472)
              -l, --local=HOST        client: the local address to connect from
              -c, --connections=N     client: concurrent connections, one virtual thread each (default 16)
              -n, --messages=M        client: messages per connection, each echoed and checked (default 100)
              -S, --size=BYTES        message size, k and m suffixes (default 64; at most 65536)
              -C, --count=N           server: end after N connections ended (default: serve until killed)
              -t, --timeout=SECONDS   limit of each connect and each round trip (default 60)
              -h, --help              this text
            """;

    /** The options of {@code args}, or null after printing a refusal or the usage ({@code exit[0]} set to the status). */
    public static EchoLoadOptions parse(String[] args, PrintStream out, PrintStream err, int[] exit) {
        Getopt g = new Getopt("rdma-echo-load", args, "sa:p:l:c:n:S:C:t:h", "server:s", "address:a", "port:p", "local:l",
                "connections:c", "messages:n", "size:S", "count:C", "timeout:t", "help:h");
        boolean server = false;
        String address = null;
        String local = null;
        int port = DEFAULT_PORT;
        int connections = 16;
        int messages = 100;
        int size = 64;
        int count = 0;
        Duration timeout = Duration.ofSeconds(60);
        try {
            for (int c; (c = g.next(err)) != -1; ) {
                switch (c) {
                    case 's' -> server = true;
                    case 'a' -> address = g.argument();
                    case 'l' -> local = g.argument();
                    case 'p' -> port = (int) number("--port", g.argument(), 1, 65535);
                    case 'c' -> connections = (int) number("--connections", g.argument(), 1, 100_000);
                    case 'n' -> messages = (int) number("--messages", g.argument(), 1, 100_000_000);
                    case 'S' -> size = (int) size(g.argument());
                    case 'C' -> count = (int) number("--count", g.argument(), 1, 100_000_000);
                    case 't' -> timeout = Duration.ofSeconds(number("--timeout", g.argument(), 1, 86_400));
                    case 'h' -> {
                        out.print(USAGE);
                        exit[0] = 0;
                        return null;
                    }
                    default -> {
                        err.print(USAGE);
                        exit[0] = 2;
                        return null;
                    }
                }
            }
        } catch (IllegalArgumentException e) {
            err.println("rdma-echo-load: " + e.getMessage());
            exit[0] = 2;
            return null;
        }
        if (!g.operands().isEmpty()) {
            err.println("rdma-echo-load: unexpected argument " + g.operands().get(0));
            exit[0] = 2;
            return null;
        }
        if (!server && address == null) {
            err.println("rdma-echo-load: the client needs --address (the server's); -s for the server side");
            err.print(USAGE);
            exit[0] = 2;
            return null;
        }
        if (server && local != null) {
            err.println("rdma-echo-load: --local is a client option");
            exit[0] = 2;
            return null;
        }
        return new EchoLoadOptions(server, address == null ? "0.0.0.0" : address, port, local, connections, messages, size,
                count, timeout);
    }

    private static long number(String option, String value, long min, long max) {
        try {
            long v = Long.parseLong(value);
            if (v >= min && v <= max) {
                return v;
            }
        } catch (NumberFormatException e) {
            // refused below
        }
        throw new IllegalArgumentException(option + " must be " + min + " .. " + max + ", got '" + value + "'");
    }

    private static long size(String value) {
        try {
            long v = Sizes.parse(value);
            if (v >= 8 && v <= 65536) {
                return v;
            }
        } catch (NumberFormatException e) {
            // refused below
        }
        throw new IllegalArgumentException("--size must be 8 .. 65536 bytes, got '" + value + "'");
    }
}
