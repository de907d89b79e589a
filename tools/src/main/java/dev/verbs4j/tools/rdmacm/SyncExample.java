package dev.verbs4j.tools.rdmacm;

import dev.verbs4j.rdmacm.AddressInfo;
import dev.verbs4j.rdmacm.CmId;
import dev.verbs4j.rdmacm.PortSpace;
import dev.verbs4j.rdmacm.CmVerbs;
import dev.verbs4j.verbs.MemoryRegion;
import dev.verbs4j.verbs.RdmaArena;
import dev.verbs4j.verbs.SendFlags;
import dev.verbs4j.verbs.WorkCompletion;
import dev.verbs4j.verbs.WorkCompletions;
import dev.verbs4j.tools.Getopt;

import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.time.Duration;

/** What rdma_server and rdma_client share: options, address and endpoint, and the one-message exchange over a synchronous id. */
final class SyncExample {

    private static final int MSG_SIZE = 16;
    private static final Duration SLICE = Duration.ofSeconds(1);

    private final String name;
    private final CmId id;
    private final PrintStream out;
    private final PrintStream err;

    SyncExample(String name, CmId id, PrintStream out, PrintStream err) {
        this.name = name;
        this.id = id;
        this.out = out;
        this.err = err;
    }

    /** The part of one example that follows the creation of its endpoint; returns the example's result. */
    @FunctionalInterface
    interface Side {
        int run(CmId endpoint);
    }

    /**
     * The frame of both examples: options {@code -s} (default {@code defaultServer}) and {@code -p}
     * (default 7471), "start", the address ({@code flags}: {@link AddressInfo#PASSIVE} for the
     * server), the endpoint, {@code side} on it, "end" with the result; returns the exit status.
     */
    static int run(String name, String defaultServer, int flags, String[] args, PrintStream out, PrintStream err,
            Side side) {
        String server = defaultServer;
        String port = "7471";
        Getopt opts = new Getopt(name, args, "s:p:");
        for (int op; (op = opts.next(err)) != -1; ) {
            switch (op) {
                case 's' -> server = opts.argument();
                case 'p' -> port = opts.argument();
                default -> {
                    out.print("usage: " + name + "\n");
                    out.print("\t[-s server_address]\n");
                    out.print("\t[-p port_number]\n");
                    return 1;
                }
            }
        }
        out.print(name + ": start\n");
        int ret = onEndpoint(server, port, flags, out, err, side);
        out.printf("%s: end %d\n", name, ret);
        return ret & 0xff;
    }

    private static int onEndpoint(String server, String port, int flags, PrintStream out, PrintStream err, Side side) {
        AddressInfo res;
        try {
            res = AddressInfo.resolve(server, port, flags, PortSpace.TCP);
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
                return side.run(id);
            }
        }
    }

    /**
     * Creates the queue pair (one send and one receive, 16 bytes inline, every send signalled),
     * posts the receive, connects or accepts, then the client sends first and the server answers.
     */
    int exchange(boolean client) {
        CmVerbs verbs;
        try {
            verbs = CmVerbs.createQueuePair(id, null, 1, 1,
                    init -> init.maxSendSge(1).maxRecvSge(1).maxInlineData(MSG_SIZE).signalAll(true));
        } catch (RuntimeException e) {
            err.print((client ? "rdma_create_ep: " : "rdma_create_qp: ") + e.getMessage() + "\n");
            return -1;
        }
        int sendFlags = 0;
        if (verbs.queuePair().maxInlineData() >= MSG_SIZE) {
            sendFlags = SendFlags.INLINE;
        } else {
            out.print(name + ": device doesn't support IBV_SEND_INLINE, using sge sends\n");
        }
        try (verbs; RdmaArena arena = RdmaArena.ofShared(); WorkCompletions wc = new WorkCompletions(1)) {
            MemorySegment sendMsg = arena.allocate(MSG_SIZE);
            MemorySegment recvMsg = arena.allocate(MSG_SIZE);
            MemoryRegion mr;
            MemoryRegion sendMr = null;
            try {
                mr = verbs.registerMessages(recvMsg);
            } catch (RuntimeException e) {
                err.print("rdma_reg_msgs for recv_msg: " + e.getMessage() + "\n");
                return -1;
            }
            if ((sendFlags & SendFlags.INLINE) == 0) {
                try {
                    sendMr = verbs.registerMessages(sendMsg);
                } catch (RuntimeException e) {
                    err.print("rdma_reg_msgs for send_msg: " + e.getMessage() + "\n");
                    return -1;
                }
            }
            try {
                verbs.postReceive(0, recvMsg, mr);
            } catch (RuntimeException e) {
                err.print("rdma_post_recv: " + e.getMessage() + "\n");
                return -1;
            }
            try {
                if (client) {
                    id.connect(null);
                } else {
                    id.accept(null);
                }
            } catch (RuntimeException e) {
                err.print((client ? "rdma_connect: " : "rdma_accept: ") + e.getMessage() + "\n");
                return -1;
            }
            int ret;
            if (client) {
                ret = send(verbs, sendMsg, sendMr, sendFlags, wc);
                if (ret == 0) {
                    ret = await(verbs, wc, false, "rdma_get_recv_comp");
                }
            } else {
                ret = await(verbs, wc, false, "rdma_get_recv_comp");
                if (ret == 0) {
                    ret = send(verbs, sendMsg, sendMr, sendFlags, wc);
                }
            }
            try {
                id.disconnect();
            } catch (RuntimeException e) {
                // as the C program: the outcome of the exchange decides the status
            }
            mr.close();
            if (sendMr != null) {
                sendMr.close();
            }
            return ret;
        }
    }

    private int send(CmVerbs verbs, MemorySegment msg, MemoryRegion mr, int flags, WorkCompletions wc) {
        try {
            verbs.postSend(0, msg, mr, flags);
        } catch (RuntimeException e) {
            err.print("rdma_post_send: " + e.getMessage() + "\n");
            return -1;
        }
        return await(verbs, wc, true, "rdma_get_send_comp");
    }

    private int await(CmVerbs verbs, WorkCompletions wc, boolean send, String what) {
        try {
            while ((send ? verbs.getSendCompletion(wc, SLICE) : verbs.getReceiveCompletion(wc, SLICE)) == 0) {
                if (Thread.currentThread().isInterrupted()) {
                    err.print(what + ": Interrupted system call\n");
                    return -1;
                }
            }
        } catch (RuntimeException e) {
            err.print(what + ": " + e.getMessage() + "\n");
            return -1;
        }
        WorkCompletion c = wc.get(0);
        if (!c.isSuccess()) {
            err.print(what + ": completion status " + c.status().description() + "\n");
            return -1;
        }
        return 0;
    }
}
