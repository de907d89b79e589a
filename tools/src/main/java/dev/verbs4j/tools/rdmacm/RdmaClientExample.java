package dev.verbs4j.tools.rdmacm;

import dev.verbs4j.rdmacm.AddressInfo;
import dev.verbs4j.rdmacm.CmId;
import dev.verbs4j.rdmacm.PortSpace;

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
        String[] server = {"127.0.0.1"};
        String[] port = {"7471"};
        if (!SyncExample.parse("rdma_client", args, server, port, out, err)) {
            return 1;
        }
        out.print("rdma_client: start\n");
        int ret = connect(server[0], port[0], out, err);
        out.printf("rdma_client: end %d\n", ret);
        return ret & 0xff;
    }

    private static int connect(String server, String port, PrintStream out, PrintStream err) {
        AddressInfo res;
        try {
            res = AddressInfo.resolve(server, port, 0, PortSpace.TCP);
        } catch (RuntimeException e) {
            out.print("rdma_getaddrinfo: " + e.getMessage() + "\n");
            return -1;
        }
        try (res) {
            CmId id;
            try {
                id = CmId.createEndpoint(res.first());
            } catch (RuntimeException e) {
                err.print("rdma_create_ep: " + e.getMessage() + "\n");
                return -1;
            }
            try (id) {
                return new SyncExample("rdma_client", id, out, err).exchange(true);
            }
        }
    }
}
