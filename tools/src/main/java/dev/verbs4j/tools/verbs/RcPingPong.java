package dev.verbs4j.tools.verbs;

import java.io.PrintStream;

/**
 * {@code rc_pingpong}: the Java twin of rdma-core's {@code ibv_rc_pingpong}, a ping-pong of SEND
 * messages over a reliable connected (RC) queue pair, with the same options, output, exit codes and TCP
 * exchange ({@link OutOfBandExchange}), so that either side can be the C program.
 * Without a host argument it is the server; with one, the client. Each run owns and frees the
 * verbs objects it creates.
 */
public final class RcPingPong {

    private RcPingPong() {
    }

    /**
     * Runs the tool, writing to {@code out} and {@code err}; returns what {@code ibv_rc_pingpong}
     * returns. Interrupting the calling thread ends a run that waits (for the peer or for
     * completions) with status 1.
     */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        return PingPong.run(PingPong.Transport.RC, args, out, err);
    }
}
