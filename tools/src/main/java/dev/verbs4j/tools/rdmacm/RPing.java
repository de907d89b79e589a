package dev.verbs4j.tools.rdmacm;

import dev.verbs4j.rdmacm.CmId;
import dev.verbs4j.rdmacm.EventChannel;
import dev.verbs4j.rdmacm.PortSpace;

import java.io.PrintStream;
import java.time.Duration;

/**
 * {@code rping}: the RDMA CM ping-pong of rdmacm-utils in Java, with its options, its output and
 * its wire protocol, so that it runs against the C program either way round. Per ping the client
 * SENDs the address, rkey and size of its source buffer ({@link RdmaInfo}), the server RDMA-READs
 * it and SENDs a go-ahead; the client SENDs its sink buffer, the server RDMA-WRITEs the data back
 * and SENDs another go-ahead. {@code -v} prints the data.
 *
 * <p>The parts: {@link RPingOptions} reads the command line, {@link RPingEvents} follows the
 * connection manager, {@link RPingServer} and {@link RPingClient} run the two sides over an
 * {@link RPingConnection}. A failure is an {@link RPingException}, whose status rping exits with.
 */
public final class RPing {

    static final Duration RESOLVE_TIMEOUT = Duration.ofMillis(2000);
    static final Duration POLL_SLICE = Duration.ofMillis(100);
    private static final int NO_STATUS = Integer.MIN_VALUE;

    final PrintStream out;
    final PrintStream err;
    RPingOptions options;
    /** Set by the event thread when the C program would exit(): the status to exit with. */
    private volatile int fatal = NO_STATUS;

    private RPing(PrintStream out, PrintStream err) {
        this.out = out;
        this.err = err;
    }

    /** Runs rping; returns its exit status (0 on success). */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        return new RPing(out, err).execute(args) & 0xff;
    }

    private int execute(String[] args) {
        try {
            options = RPingOptions.parse(args, out, err);
            session();
            return failed() ? fatal : 0;
        } catch (RPingException e) {
            e.report(err);
            return failed() ? fatal : e.status();
        }
    }

    /** The event channel, the first id and its event thread around one run of either side. */
    private void session() {
        EventChannel channel;
        try {
            channel = EventChannel.create();
        } catch (RuntimeException e) {
            throw new RPingException("rdma_create_event_channel: " + e.getMessage() + "\n", 1);
        }
        RPingEvents events = null;
        try {
            CmId cmId;
            try {
                cmId = channel.createId(PortSpace.TCP);
            } catch (RuntimeException e) {
                throw new RPingException("rdma_create_id: " + e.getMessage() + "\n", 1);
            }
            RPingConnection first = new RPingConnection(this, options.server, cmId);
            debug("created cm_id %s\n", cmId);
            events = RPingEvents.start(this, channel, first);
            try {
                if (options.server) {
                    new RPingServer(this, events).run(first);
                } else {
                    new RPingClient(this).run(first);
                }
            } finally {
                debug("destroy cm_id %s\n", cmId);
            }
        } finally {
            if (events != null) {
                events.stop();
            }
            channel.close();
        }
    }

    /** Prints a {@code -d} line. */
    void debug(String format, Object... args) {
        options.debug(out, format, args);
    }

    /** Whether the event thread has given up, as the C program's exit() from it would. */
    boolean failed() {
        return fatal != NO_STATUS;
    }

    /** Records that the event thread gave up with {@code status}. */
    void fail(int status) {
        fatal = status;
    }

    /** A failure whose report is printed only while the event thread has not given up. */
    RPingException unlessFailed(String report, int status) {
        return new RPingException(failed() ? null : report, status);
    }
}
