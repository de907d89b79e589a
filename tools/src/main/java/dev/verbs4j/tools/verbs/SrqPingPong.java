package dev.verbs4j.tools.verbs;

import dev.verbs4j.tools.ToolExit;
import dev.verbs4j.verbs.Access;
import dev.verbs4j.verbs.DeviceAttributes;
import dev.verbs4j.verbs.Opcode;
import dev.verbs4j.verbs.PortAttributes;
import dev.verbs4j.verbs.QpState;
import dev.verbs4j.verbs.QpType;
import dev.verbs4j.verbs.QueuePair;
import dev.verbs4j.verbs.QueuePairAttributes;
import dev.verbs4j.verbs.QueuePairEndpoint;
import dev.verbs4j.verbs.QueuePairInit;
import dev.verbs4j.verbs.ReceiveRequests;
import dev.verbs4j.verbs.SendFlags;
import dev.verbs4j.verbs.SendRequests;
import dev.verbs4j.verbs.SharedReceiveQueue;
import dev.verbs4j.verbs.WorkCompletions;

import java.io.IOException;
import java.io.PrintStream;
import java.util.Arrays;

/**
 * {@code srq_pingpong}: the Java twin of rdma-core's {@code ibv_srq_pingpong}, a ping-pong of SEND
 * messages over several reliable connected (RC) queue pairs that take their receive buffers from
 * one shared receive queue, with the same options, output, exit codes and TCP exchange, so that
 * either side can be the C program.
 *
 * <p>The exchange is that of the other pingpongs ({@link OutOfBandExchange}), repeated: each side
 * sends one {@code "%04x:%06x:%06x:%s"} message for each of the C tool's 256 queue pair slots (the
 * unused ones all zeros), the client first; the server connects its queue pairs, answers with its
 * own 256 messages, and the client ends with {@code "done"}. Without a host argument it is the
 * server; with one, the client. Each run owns and frees the verbs objects it creates.
 */
public final class SrqPingPong extends PingPongBase {

    private static final String PROGRAM = "srq_pingpong";
    private static final String SHORT_OPTIONS = "p:d:i:s:m:q:r:n:l:eog:c";

    /** The C tool's slot count: it always exchanges this many endpoints. */
    static final int MAX_QP = 256;

    private static final int ODP_SUPPORT_SRQ_RECV = 1 << 5;

    // the option only this tool has, with the C default
    private long numQp = 16;

    // the run's objects
    private SharedReceiveQueue srq;
    private QueuePair[] qps;
    private int qpCount;

    private SrqPingPong(PrintStream out, PrintStream err) {
        super(PROGRAM, 4096, out, err);
    }

    /**
     * Runs the tool, writing to {@code out} and {@code err}; returns what {@code ibv_srq_pingpong}
     * returns. Interrupting the calling thread ends a run that waits (for the peer or for
     * completions) with status 1.
     */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        return new SrqPingPong(out, err).runToEnd(args);
    }

    @Override
    int execute(String[] args) throws ToolExit {
        Integer bad = parse(args, SHORT_OPTIONS,
                "port:p", "ib-dev:d", "ib-port:i", "size:s", "mtu:m", "num-qp:q", "rx-depth:r", "iters:n", "sl:l",
                "events:e", "odp:o", "gid-idx:g", "chk:c");
        if (bad != null) {
            return bad;
        }
        if (numQp > rxDepth) {
            return fail("rx_depth " + (int) rxDepth + " is too small for " + (int) numQp
                    + " QPs -- must have at least one receive per QP.");
        }
        if (numQp >= MAX_QP) {
            return fail("num_qp " + (int) numQp + " must be less than " + (MAX_QP - 1));
        }
        qpCount = (int) numQp;
        int numWc = checkedInt(numQp + rxDepth);

        initContext();
        PortAttributes portInfo = startReceiving();
        QueuePairEndpoint[] local = new QueuePairEndpoint[MAX_QP];
        Arrays.fill(local, new QueuePairEndpoint(0, 0, 0, ZERO_GID));
        for (int i = 0; i < qpCount; ++i) {
            local[i] = localEndpoint(portInfo, qps[i].qpNum(), true, "Could not get local gid for gid index ");
            printAddress("local address: ", local[i], ",");
        }

        QueuePairEndpoint[] remote = serverName != null ? clientExchange(local) : serverExchange(local);
        for (int i = 0; i < qpCount; ++i) {
            printAddress("remote address:", remote[i], ",");
        }

        if (serverName != null && !connectQps(local, remote)) {
            return 1;
        }

        send = new SendRequests(1, 1);
        send.reset(0).wrId(SEND_WRID).opcode(Opcode.SEND).flags(sendFlags).sge(mr, 0, (int) size);
        wcs = new WorkCompletions(Math.max(1, numWc));
        pingPong(qpCount, 0);
        return closeAll();
    }

    // ---- options ----

    @Override
    boolean option(int c, String arg) {
        return switch (c) {
            case 's' -> {
                size = unsigned(arg);
                yield size >= 1;
            }
            case 'q' -> {
                numQp = unsigned(arg);
                yield true;
            }
            default -> false;
        };
    }

    @Override
    void usage() {
        out.print(usageHead()
                .append("  -s, --size=<size>      size of message to exchange (default 4096)\n")
                .append("  -m, --mtu=<size>       path MTU (default 1024)\n")
                .append("  -q, --num-qp=<num>     number of QPs to use (default 16)\n")
                .append("  -r, --rx-depth=<dep>   number of receives to post at a time (default 500)\n")
                .append("  -n, --iters=<iters>    number of exchanges per QP(default 1000)\n")
                .append("  -l, --sl=<sl>          service level value\n")
                .append("  -e, --events           sleep on CQ events (default poll)\n")
                .append("  -g, --gid-idx=<gid index> local port gid index\n")
                .append("  -o, --odp\t\t    use on demand paging\n")
                .append("  -c, --chk              validate received buffer\n"));
    }

    // ---- set-up ----

    /** What the C tool's {@code pp_init_ctx()} does, in its order and with its messages. */
    private void initContext() throws ToolExit {
        openContext(findDevice(), size, (byte) 0);
        int access = Access.LOCAL_WRITE;
        if (useOdp) {
            DeviceAttributes attrs = orExit(context::queryDevice, "Couldn't query device for its features");
            int rcCaps = ODP_SUPPORT_SEND | ODP_SUPPORT_SRQ_RECV;
            if ((attrs.odpGeneralCaps() & ODP_SUPPORT) == 0 || (attrs.odpRcCaps() & rcCaps) != rcCaps) {
                throw exit("The device isn't ODP capable or does not support RC send, receive and srq with ODP");
            }
            access |= Access.ON_DEMAND;
        }
        allocateDomain();
        int mrAccess = access;
        mr = orExit(() -> pd.register(buf, mrAccess), "Couldn't register MR");
        cq = orExit(() -> context.createCompletionQueue(checkedInt(rxDepth + numQp), channel, 0), "Couldn't create CQ");
        srq = orExit(() -> pd.createSharedReceiveQueue(checkedInt(rxDepth), 1), "Couldn't create SRQ");
        qps = new QueuePair[qpCount];
        for (int i = 0; i < qpCount; ++i) {
            qps[i] = orExit(() -> pd.createQueuePair(QueuePairInit.of(QpType.RC, cq).sharedReceiveQueue(srq)
                    .maxSendWr(1).maxSendSge(1)), "Couldn't create QP[" + i + "]");
            if (qps[i].maxInlineData() >= size) {
                sendFlags |= SendFlags.INLINE;
            }
        }
        for (int i = 0; i < qpCount; ++i) {
            try {
                qps[i].modify(new QueuePairAttributes().state(QpState.INIT).pkeyIndex(0).port(ibPort).accessFlags(0));
            } catch (RuntimeException e) {
                throw exit("Failed to modify QP[" + i + "] to INIT");
            }
        }
        recv = new ReceiveRequests(1, 1);
        recv.get(0).wrId(RECV_WRID).sge(mr, 0, (int) size);
    }

    /** Posts one receive to the SRQ. */
    @Override
    void postReceive() {
        srq.postReceive(recv, 1);
    }

    // ---- the exchange ----

    private QueuePairEndpoint[] clientExchange(QueuePairEndpoint[] local) throws ToolExit {
        return exchange().asClient(serverName, tcpPort, x -> {
            exchange().sendLocal(x, local);
            QueuePairEndpoint[] remote = receiveAll(x, "client read");
            finishExchange(x);
            return remote;
        });
    }

    private QueuePairEndpoint[] serverExchange(QueuePairEndpoint[] local) throws ToolExit {
        return exchange().asServer(tcpPort, x -> {
            QueuePairEndpoint[] remote = receiveAll(x, "server read");
            if (!connectQps(local, remote)) {
                throw exit("Couldn't connect to remote QP");
            }
            exchange().sendLocal(x, local);
            finishExchange(x);
            return remote;
        });
    }

    /** The exchange's last step: the client's {@code "done"}, or the server's wait for it (C says "client write" on both sides). */
    private void finishExchange(OutOfBandExchange x) throws ToolExit {
        try {
            if (serverName != null) {
                x.sendDone();
            } else {
                x.receiveDone();
            }
        } catch (IOException e) {
            err.print("client write: " + e.getMessage() + "\n");
            throw new ToolExit(1);
        }
    }

    /** Reads the peer's {@link #MAX_QP} messages, as C does whatever the number of queue pairs. */
    private QueuePairEndpoint[] receiveAll(OutOfBandExchange x, String who) throws ToolExit {
        QueuePairEndpoint[] remote = new QueuePairEndpoint[MAX_QP];
        for (int i = 0; i < MAX_QP; ++i) {
            remote[i] = exchange().receiveRemote(x, who, " [" + i + "]");
        }
        return remote;
    }

    /** The C tool's {@code pp_connect_ctx()}: false after printing why it failed. */
    private boolean connectQps(QueuePairEndpoint[] my, QueuePairEndpoint[] dest) {
        // as C, the first remote GID decides whether there is a GRH, and is the destination of all
        for (int i = 0; i < qpCount; ++i) {
            if (!connect(qps[i], "QP[" + i + "]", my[i].psn(), dest[i], addressVector(dest[i].lid(), dest[0].gid()), true)) {
                return false;
            }
        }
        return true;
    }

    // ---- the ping-pong ----

    @Override
    QueuePair queuePair(int slot) {
        return qps[slot];
    }

    // ---- tear-down ----

    /** Frees everything in C's order, with its messages; returns the exit status. */
    private int closeAll() throws ToolExit {
        for (int i = 0; i < qpCount; ++i) {
            close(qps[i], "Couldn't destroy QP[" + i + "]");
        }
        close(srq, "Couldn't destroy SRQ");
        close(cq, "Couldn't destroy CQ");
        close(mr, "Couldn't deregister MR");
        return closeDomain();
    }
}
