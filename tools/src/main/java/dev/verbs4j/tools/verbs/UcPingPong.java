package dev.verbs4j.tools.verbs;

import java.io.PrintStream;

/**
 * {@code uc_pingpong}: the Java twin of rdma-core's {@code ibv_uc_pingpong}, a ping-pong of SEND
 * messages over an unreliable connected (UC) queue pair, with the same options, output, exit codes and
 * TCP exchange ({@link OutOfBandExchange}), so that either side can be the C program.
 * Without a host argument it is the server; with one, the client. Each run owns and frees the
 * verbs objects it creates.
 */
public final class UcPingPong {

    private UcPingPong() {
    }

    /**
     * Runs the tool, writing to {@code out} and {@code err}; returns what {@code ibv_uc_pingpong}
     * returns. Interrupting the calling thread ends a run that waits (for the peer or for
     * completions) with status 1.
     */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        return PingPong.run(PingPong.Transport.UC, args, out, err);
    }
}
