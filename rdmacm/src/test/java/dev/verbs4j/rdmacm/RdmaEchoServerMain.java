package dev.verbs4j.rdmacm;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;

/**
 * Test support: an echo server in a process of its own, for tests that kill it. Arguments: the
 * address and port to listen on. Prints {@code LISTENING <port>} once it listens, then echoes
 * every message of every connection until killed.
 */
public final class RdmaEchoServerMain {

    private RdmaEchoServerMain() {
    }

    public static void main(String[] args) throws Exception {
        InetSocketAddress local = new InetSocketAddress(InetAddress.getByName(args[0]), Integer.parseInt(args[1]));
        try (RdmaServer server = RdmaServer.bind(local)) {
            System.out.println("LISTENING " + server.localAddress().getPort());
            System.out.flush();
            while (true) {
                RdmaConnection c;
                try {
                    c = server.accept(Duration.ofHours(1));
                } catch (RdmaTimeoutException e) {
                    continue;
                }
                Thread.ofPlatform().daemon().start(() -> echo(c));
            }
        }
    }

    static void echo(RdmaConnection c) {
        try (c) {
            byte[] buffer = new byte[c.options().maxMessageSize()];
            while (true) {
                int n = c.receive(buffer, 0, buffer.length, Duration.ofHours(1));
                if (n == RdmaConnection.END_OF_STREAM) {
                    return;
                }
                c.send(buffer, 0, n, Duration.ofMinutes(1));
            }
        } catch (Exception e) {
            System.err.println("echo ended: " + e);
        }
    }
}
