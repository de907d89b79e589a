package dev.verbs4j.perf.tools;

import dev.verbs4j.tools.Cli;
import java.io.PrintStream;

/**
 * {@code ib_send_lat}: the Java twin of perftest's tool of that name, measuring SEND latency: a ping-pong of messages, half the round trip. Same options,
 * output and exit statuses as perftest 4.5, and its wire protocol, so either side can be the C
 * program (TCP exchange by default, RDMA CM with {@code -R}). Without a host argument it is the
 * server; with one, the client. Each run owns and frees the verbs objects it creates.
 */
public final class SendLat {

    private SendLat() {
    }

    /** Runs the tool and exits with its status. */
    public static void main(String[] args) {
        Cli.main(args, SendLat::run);
    }

    /**
     * Runs the tool, writing to {@code out} and {@code err}; returns the status {@code ib_send_lat}
     * exits with. Interrupting the calling thread ends a waiting run with status 1.
     */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        return Perftest.run("ib_send_lat", PerfOptions.Verb.SEND, PerfOptions.Kind.LAT, args, out, err);
    }
}
