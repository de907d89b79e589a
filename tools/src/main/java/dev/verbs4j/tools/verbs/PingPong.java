package dev.verbs4j.tools.verbs;

import dev.verbs4j.tools.ToolExit;
import dev.verbs4j.verbs.Access;
import dev.verbs4j.verbs.AddressHandle;
import dev.verbs4j.verbs.AddressVector;
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
import dev.verbs4j.verbs.WorkCompletion;
import dev.verbs4j.verbs.WorkCompletions;

import java.io.IOException;
import java.io.PrintStream;

/**
 * The common body of {@link RcPingPong}, {@link UcPingPong} and {@link UdPingPong}: rdma-core's
 * {@code ibv_*_pingpong} examples redone on the verbs4j API, with their options, output, exit
 * codes and wire protocol ({@link OutOfBandExchange}). Each run owns the verbs objects and the
 * buffer it creates and frees them before returning.
 */
final class PingPong extends PingPongBase {

    /** The three transports, with what differs between the three C programs. */
    enum Transport {
        RC("rc_pingpong", QpType.RC, "p:d:i:s:m:r:n:l:eg:oOPtcjN", 4096),
        UC("uc_pingpong", QpType.UC, "p:d:i:s:m:r:n:l:eg:c", 4096),
        UD("ud_pingpong", QpType.UD, "p:d:i:s:r:n:l:eg:c", 1024);

        final String program;
        final QpType qpType;
        final String shortOptions;
        final int defaultSize;

        Transport(String program, QpType qpType, String shortOptions, int defaultSize) {
            this.program = program;
            this.qpType = qpType;
            this.shortOptions = shortOptions;
            this.defaultSize = defaultSize;
        }
    }

    /** UD receive buffers start with room for the 40-byte GRH. */
    private static final int GRH_BYTES = 40;
    private static final int UD_QKEY = 0x11111111;

    private static final int ODP_SUPPORT_IMPLICIT = 1 << 1;
    private static final int ODP_SUPPORT_RECV = 1 << 1;

    private final Transport transport;

    // options only some transports have, with the C defaults
    private boolean implicitOdp;
    private boolean prefetchMr;
    private boolean useTs;
    private boolean useDm;
    private boolean useNewSend;

    // the run's objects
    private QueuePair qp;
    private AddressHandle ah;

    private PingPong(Transport transport, PrintStream out, PrintStream err) {
        super(transport.program, transport.defaultSize, out, err);
        this.transport = transport;
    }

    /** Runs {@code transport}'s tool with {@code args}; returns the C program's exit status. */
    static int run(Transport transport, String[] args, PrintStream out, PrintStream err) {
        return new PingPong(transport, out, err).runToEnd(args);
    }

    @Override
    int execute(String[] args) throws ToolExit {
        Integer bad = parse(args, transport.shortOptions,
                "port:p", "ib-dev:d", "ib-port:i", "size:s", "mtu:m", "rx-depth:r", "iters:n", "sl:l", "events:e",
                "gid-idx:g", "odp:o", "iodp:O", "prefetch:P", "ts:t", "chk:c", "dm:j", "new_send:N");
        if (bad != null) {
            return bad;
        }
        if (useOdp && useDm) {
            return fail("DM memory region can't be on demand");
        }
        if (!useOdp && prefetchMr) {
            return fail("prefetch is valid only with on-demand memory region");
        }
        if (useNewSend) {
            return fail(program + ": -N/--new_send (the ibv_wr_* send API) is not supported by verbs4j");
        }

        initContext();
        PortAttributes portInfo = startReceiving();
        QueuePairEndpoint local = localEndpoint(portInfo, qp.qpNum(), transport != Transport.UD,
                transport == Transport.UD ? "Could not get local gid for gid index " : "can't read sgid of index ");
        printAddress("local address: ", local, transport == Transport.UD ? ":" : ",");

        QueuePairEndpoint remote = serverName != null ? clientExchange(local) : serverExchange(local);
        printAddress("remote address:", remote, ",");

        if (serverName != null && !connectQp(local.psn(), remote)) {
            return 1;
        }

        int sendOffset = transport == Transport.UD ? GRH_BYTES : 0;
        send = new SendRequests(1, 1);
        var wr = send.reset(0).wrId(SEND_WRID).opcode(Opcode.SEND).flags(sendFlags).sge(mr, sendOffset, (int) size);
        if (transport == Transport.UD) {
            wr.ud(ah, remote.qpn(), UD_QKEY);
        }
        wcs = new WorkCompletions(2);
        pingPong(1, sendOffset);
        return closeAll();
    }

    // ---- options ----

    @Override
    boolean option(int c, String arg) {
        switch (c) {
            case 's' -> size = unsigned(arg);
            case 'P' -> prefetchMr = true;
            case 'O' -> {
                useOdp = true;
                implicitOdp = true;
            }
            case 't' -> useTs = true;
            case 'j' -> useDm = true;
            case 'N' -> useNewSend = true;
            default -> {
                return false;
            }
        }
        return true;
    }

    @Override
    void usage() {
        StringBuilder s = usageHead();
        if (transport == Transport.UD) {
            s.append("  -s, --size=<size>      size of message to exchange (default 2048)\n")
                    .append("  -r, --rx-depth=<dep>   number of receives to post at a time (default 500)\n")
                    .append("  -n, --iters=<iters>    number of exchanges (default 1000)\n")
                    .append("  -l, --sl=<SL>          send messages with service level <SL> (default 0)\n")
                    .append("  -e, --events           sleep on CQ events (default poll)\n")
                    .append("  -g, --gid-idx=<gid index> local port gid index\n")
                    .append("  -c, --chk              validate received buffer\n");
        } else {
            s.append("  -s, --size=<size>      size of message to exchange (default 4096)\n")
                    .append("  -m, --mtu=<size>       path MTU (default 1024)\n")
                    .append("  -r, --rx-depth=<dep>   number of receives to post at a time (default 500)\n")
                    .append("  -n, --iters=<iters>    number of exchanges (default 1000)\n")
                    .append("  -l, --sl=<sl>          service level value\n")
                    .append("  -e, --events           sleep on CQ events (default poll)\n")
                    .append("  -g, --gid-idx=<gid index> local port gid index\n");
            if (transport == Transport.RC) {
                s.append("  -o, --odp\t\t    use on demand paging\n")
                        .append("  -O, --iodp\t\t    use implicit on demand paging\n")
                        .append("  -P, --prefetch\t    prefetch an ODP MR\n")
                        .append("  -t, --ts\t            get CQE with timestamp\n")
                        .append("  -c, --chk\t            validate received buffer\n")
                        .append("  -j, --dm\t            use device memory\n")
                        .append("  -N, --new_send            use new post send WR API\n");
            } else {
                s.append("  -c, --chk              validate received buffer\n");
            }
        }
        out.print(s);
    }

    // ---- set-up ----

    /** What the C tools' {@code pp_init_ctx()} does, with the same messages. */
    private void initContext() throws ToolExit {
        long bufBytes = transport == Transport.UD ? size + GRH_BYTES : size;
        openContext(findDevice(), bufBytes, (byte) 0x7b);

        if (transport == Transport.UD) {
            int portMtu = 1 << (orExit(() -> context.queryPort(ibPort), "Unable to query port info for port " + ibPort)
                    .activeMtuCode() + 7);
            if (size > portMtu) {
                throw exit("Requested size larger than port MTU (" + portMtu + ")");
            }
        }

        allocateDomain();

        int access = Access.LOCAL_WRITE;
        if (useOdp || useTs || useDm) {
            DeviceAttributes attrs = orExit(context::queryDevice, "Couldn't query device for its features");
            if (useOdp) {
                int rcCaps = ODP_SUPPORT_SEND | ODP_SUPPORT_RECV;
                if ((attrs.odpGeneralCaps() & ODP_SUPPORT) == 0 || (attrs.odpRcCaps() & rcCaps) != rcCaps) {
                    throw exit("The device isn't ODP capable or does not support RC send and receive with ODP");
                }
                if (implicitOdp && (attrs.odpGeneralCaps() & ODP_SUPPORT_IMPLICIT) == 0) {
                    throw exit("The device doesn't support implicit ODP");
                }
                if (implicitOdp) {
                    throw exit(program + ": -O/--iodp (implicit on-demand paging) is not supported by verbs4j");
                }
                if (prefetchMr) {
                    throw exit(program + ": -P/--prefetch (ibv_advise_mr) is not supported by verbs4j");
                }
                access |= Access.ON_DEMAND;
            }
            if (useTs) {
                if (attrs.completionTimestampMask() == 0) {
                    throw exit("The device isn't completion timestamp capable");
                }
                throw exit(program + ": -t/--ts (completion timestamps) is not supported by verbs4j");
            }
            if (useDm) {
                if (attrs.maxDmSize() == 0) {
                    throw exit("Device doesn't support dm allocation");
                }
                if (attrs.maxDmSize() < size) {
                    throw exit("Device memory is insufficient");
                }
                throw exit(program + ": -j/--dm (device memory) is not supported by verbs4j");
            }
        }

        int mrAccess = access;
        mr = orExit(() -> pd.register(buf.asSlice(0, bufBytes), mrAccess), "Couldn't register MR");
        cq = orExit(() -> context.createCompletionQueue(checkedInt(rxDepth + 1), channel, 0), "Couldn't create CQ");
        qp = orExit(() -> pd.createQueuePair(QueuePairInit.of(transport.qpType, cq)
                .maxSendWr(1).maxRecvWr(checkedInt(rxDepth)).maxSendSge(1).maxRecvSge(1)), "Couldn't create QP");
        if (qp.maxInlineData() >= size) {
            sendFlags |= SendFlags.INLINE;
        }

        QueuePairAttributes init = new QueuePairAttributes().state(QpState.INIT).pkeyIndex(0).port(ibPort);
        if (transport == Transport.UD) {
            init.qkey(UD_QKEY);
        } else {
            init.accessFlags(0);
        }
        try {
            qp.modify(init);
        } catch (RuntimeException e) {
            throw exit("Failed to modify QP to INIT");
        }
        recv = new ReceiveRequests(1, 1);
        recv.get(0).wrId(RECV_WRID).sge(mr, 0, (int) bufBytes);
    }

    @Override
    void postReceive() {
        qp.postReceive(recv, 1);
    }

    // ---- the exchange ----

    private QueuePairEndpoint clientExchange(QueuePairEndpoint local) throws ToolExit {
        return exchange().asClient(serverName, tcpPort, x -> {
            exchange().sendLocal(x, local);
            try {
                QueuePairEndpoint remote = x.receive();
                x.sendDone();
                return remote;
            } catch (IOException e) {
                err.print("client read/write: " + e.getMessage() + "\n");
                throw exit("Couldn't read/write remote address");
            }
        });
    }

    private QueuePairEndpoint serverExchange(QueuePairEndpoint local) throws ToolExit {
        return exchange().asServer(tcpPort, x -> {
            QueuePairEndpoint remote = exchange().receiveRemote(x, "server read", "");
            if (!connectQp(local.psn(), remote)) {
                throw exit("Couldn't connect to remote QP");
            }
            try {
                x.send(local);
                x.receiveDone();
            } catch (IOException e) {
                throw exit("Couldn't send/recv local address");
            }
            return remote;
        });
    }

    /** The C tools' {@code pp_connect_ctx()}: false after printing why it failed. */
    private boolean connectQp(int myPsn, QueuePairEndpoint dest) {
        AddressVector av = addressVector(dest.lid(), dest.gid());
        if (transport != Transport.UD) {
            return connect(qp, "QP", myPsn, dest, av, transport == Transport.RC);
        }
        try {
            qp.modify(new QueuePairAttributes().state(QpState.RTR));
        } catch (RuntimeException e) {
            err.print("Failed to modify QP to RTR\n");
            return false;
        }
        try {
            qp.modify(new QueuePairAttributes().state(QpState.RTS).sqPsn(myPsn));
        } catch (RuntimeException e) {
            err.print("Failed to modify QP to RTS\n");
            return false;
        }
        try {
            ah = pd.createAddressHandle(av);
        } catch (RuntimeException e) {
            err.print("Failed to create AH\n");
            return false;
        }
        return true;
    }

    // ---- the ping-pong ----

    @Override
    QueuePair queuePair(int slot) {
        return qp;
    }

    /** One queue pair on its own CQ: as C, completions are not matched to it by QPN. */
    @Override
    int slotOf(WorkCompletion wc) {
        return 0;
    }

    @Override
    void completionFailed(int polled) {
        if (transport == Transport.RC) {
            err.print("parse WC failed " + polled + "\n");
        }
    }

    // ---- tear-down ----

    /** Frees everything in C's order, with its messages; returns the exit status. */
    private int closeAll() throws ToolExit {
        close(qp, "Couldn't destroy QP");
        close(cq, "Couldn't destroy CQ");
        close(mr, "Couldn't deregister MR");
        if (ah != null) {
            close(ah, "Couldn't destroy AH");
        }
        return closeDomain();
    }
}
