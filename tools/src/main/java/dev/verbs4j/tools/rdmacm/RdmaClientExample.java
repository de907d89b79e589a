package dev.verbs4j.tools.rdmacm;

import java.io.PrintStream;

/**
 * {@code rdma_client}: the synchronous RDMA CM example of rdmacm-utils in Java, with its options
 * ({@code -s server_address -p port_number}, default 127.0.0.1 port 7471) and output. It connects,
 * sends one 16-byte message, receives the answer, and disconnects; it interoperates with the C
 * {@code rdma_server}.
 */
public final class RdmaClientExample {

    private RdmaClientExample() {
    }

    /** Runs the example; returns its exit status (0 on success). */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        return SyncExample.run("rdma_client", "127.0.0.1", 0, args, out, err,
                id -> new SyncExample("rdma_client", id, out, err).exchange(true));
    }
}
