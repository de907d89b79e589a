package dev.verbs4j.tools.verbs;

import dev.verbs4j.tools.ToolExit;
import dev.verbs4j.verbs.QueuePairEndpoint;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.PrintStream;
import java.net.UnknownHostException;

/**
 * The ping-pong tools' side of the TCP exchange of addresses ({@link OutOfBandExchange}): the
 * connection as client or server, the local addresses sent and the remote ones read, each failure
 * with the C programs' message on stderr and exit status 1. Owns each connection while its
 * conversation runs.
 *
 * @param err where the messages go
 */
record PingPongExchange(PrintStream err) {

    /** One side's part of the TCP exchange, on an open connection. */
    @FunctionalInterface
    interface Conversation<T> {
        T over(OutOfBandExchange x) throws ToolExit;
    }

    /** Connects to the server (as a client) and has {@code talk} there; the connection is closed after. */
    <T> T asClient(String serverName, int tcpPort, Conversation<T> talk) throws ToolExit {
        OutOfBandExchange x;
        try {
            x = OutOfBandExchange.connect(serverName, tcpPort, null, null);
        } catch (UnknownHostException e) {
            throw exit("Name or service not known for " + serverName + ":" + tcpPort);
        } catch (IOException | RuntimeException e) {
            throw exit("Couldn't connect to " + serverName + ":" + tcpPort);
        }
        try (x) {
            return talk.over(x);
        } catch (IOException closing) {
            throw exit("Couldn't read/write remote address");
        }
    }

    /** Waits for a client (as the server) and has {@code talk} with it; the connection is closed after. */
    <T> T asServer(int tcpPort, Conversation<T> talk) throws ToolExit {
        OutOfBandExchange x;
        try {
            x = OutOfBandExchange.accept(tcpPort, null, null);
        } catch (InterruptedIOException e) {
            throw exit("accept() failed");
        } catch (IOException | RuntimeException e) {
            throw exit("Couldn't listen to port " + tcpPort);
        }
        try (x) {
            return talk.over(x);
        } catch (IOException closing) {
            throw exit("Couldn't send/recv local address");
        }
    }

    /** Sends the local addresses, in order. */
    void sendLocal(OutOfBandExchange x, QueuePairEndpoint... local) throws ToolExit {
        try {
            for (QueuePairEndpoint e : local) {
                x.send(e);
            }
        } catch (IOException e) {
            throw exit("Couldn't send local address");
        }
    }

    /** Reads one remote address; {@code who} and {@code which} go into the messages when that fails. */
    QueuePairEndpoint receiveRemote(OutOfBandExchange x, String who, String which) throws ToolExit {
        try {
            return x.receive();
        } catch (IOException e) {
            int n = e instanceof OutOfBandExchange.ShortMessageException s ? s.received() : -1;
            err.print(who + ": " + e.getMessage() + "\n");
            throw exit(n + "/" + OutOfBandExchange.MESSAGE_BYTES + ": Couldn't read remote address" + which);
        }
    }

    private ToolExit exit(String message) {
        err.print(message + "\n");
        return new ToolExit(1);
    }
}
