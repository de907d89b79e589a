package dev.verbs4j.tools.rdmacm;

import dev.verbs4j.rdmacm.AddressInfo;
import dev.verbs4j.rdmacm.CmId;
import dev.verbs4j.rdmacm.PortSpace;

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
        String[] server = {"0.0.0.0"};
        String[] port = {"7471"};
        if (!SyncExample.parse("rdma_server", args, server, port, out, err)) {
            return 1;
        }
        out.print("rdma_server: start\n");
        int ret = serve(server[0], port[0], out, err);
        out.printf("rdma_server: end %d\n", ret);
        return ret & 0xff;
    }

    private static int serve(String server, String port, PrintStream out, PrintStream err) {
        AddressInfo res;
        try {
            res = AddressInfo.resolve(server, port, AddressInfo.PASSIVE, PortSpace.TCP);
        } catch (RuntimeException e) {
            out.print("rdma_getaddrinfo: " + e.getMessage() + "\n");
            return -1;
        }
        try (res) {
            CmId listenId;
            try {
                listenId = CmId.createEndpoint(res.first());
            } catch (RuntimeException e) {
                err.print("rdma_create_ep: " + e.getMessage() + "\n");
                return -1;
            }
            try (listenId) {
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
    }
}
