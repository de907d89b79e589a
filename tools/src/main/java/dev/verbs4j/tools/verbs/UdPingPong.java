package dev.verbs4j.tools.verbs;

import java.io.PrintStream;

/**
 * {@code ud_pingpong}: the Java twin of rdma-core's {@code ibv_ud_pingpong}, a ping-pong of SEND
 * messages over an unreliable datagram (UD) queue pair, with the same options, output, exit codes and
 * TCP exchange ({@link OutOfBandExchange}), so that either side can be the C program.
 * Messages go through an address handle; receive buffers keep 40 bytes in front for the GRH.
 * Without a host argument it is the server; with one, the client. Each run owns and frees the
 * verbs objects it creates.
 */
public final class UdPingPong {

    private UdPingPong() {
    }

    /**
     * Runs the tool, writing to {@code out} and {@code err}; returns what {@code ibv_ud_pingpong}
     * returns. Interrupting the calling thread ends a run that waits (for the peer or for
     * completions) with status 1.
     */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        return PingPong.run(PingPong.Transport.UD, args, out, err);
    }
}
