package dev.verbs4j.tools.rdmacm;

import dev.verbs4j.rdmacm.AddressInfo;
import dev.verbs4j.rdmacm.CmId;

import java.io.PrintStream;

/**
 * {@code rdma_server}: the synchronous RDMA CM example of rdmacm-utils in Java, with its options
 * ({@code -s server_address -p port_number}, default 0.0.0.0 port 7471) and output. It listens,
 * takes one connection request, receives one 16-byte message, answers with one, and disconnects;
 * it interoperates with the C {@code rdma_client}.
 */
public final class RdmaServerExample {

    private RdmaServerExample() {
    }

    /** Runs the example; returns its exit status (0 on success). */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        return SyncExample.run("rdma_server", "0.0.0.0", AddressInfo.PASSIVE, args, out, err,
                listenId -> serve(listenId, out, err));
    }

    private static int serve(CmId listenId, PrintStream out, PrintStream err) {
        try {
            listenId.listen(0);
        } catch (RuntimeException e) {
            err.print("rdma_listen: " + e.getMessage() + "\n");
            return -1;
        }
        CmId id;
        try {
            id = listenId.getRequest();
        } catch (RuntimeException e) {
            err.print("rdma_get_request: " + e.getMessage() + "\n");
            return -1;
        }
        try (id) {
            return new SyncExample("rdma_server", id, out, err).exchange(false);
        }
    }
}
