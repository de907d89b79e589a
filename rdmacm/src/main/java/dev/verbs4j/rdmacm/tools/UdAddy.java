package dev.verbs4j.rdmacm.tools;

import dev.verbs4j.rdmacm.CmEvent;
import dev.verbs4j.rdmacm.CmEventType;
import dev.verbs4j.rdmacm.CmId;
import dev.verbs4j.rdmacm.ConnectionParameters;
import dev.verbs4j.rdmacm.EventChannel;
import dev.verbs4j.rdmacm.PortSpace;
import dev.verbs4j.rdmacm.UdParameters;
import dev.verbs4j.verbs.Access;
import dev.verbs4j.verbs.AddressHandle;
import dev.verbs4j.verbs.CompletionQueue;
import dev.verbs4j.verbs.Errno;
import dev.verbs4j.verbs.MemoryRegion;
import dev.verbs4j.verbs.Opcode;
import dev.verbs4j.verbs.ProtectionDomain;
import dev.verbs4j.verbs.QpType;
import dev.verbs4j.verbs.QueuePair;
import dev.verbs4j.verbs.QueuePairInit;
import dev.verbs4j.verbs.ReceiveRequests;
import dev.verbs4j.verbs.SendFlags;
import dev.verbs4j.verbs.SendRequests;
import dev.verbs4j.verbs.VerbsException;
import dev.verbs4j.verbs.WorkCompletions;
import dev.verbs4j.verbs.tools.Getopt;

import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.time.Duration;

/**
 * {@code udaddy}: unreliable datagrams over the RDMA connection manager, as librdmacm's example.
 * The client resolves the server, "connects" (a service id lookup that returns the server's QP
 * number, Q_Key and address), and sends {@code -C} messages with immediate data = its own QP
 * number; the server answers each with a reply to the address of the first datagram. Same
 * options and output as the C program, and it speaks with it:
 * {@code [-s server] [-b bind] [-c connections] [-C count] [-S size] [-t tos] [-p ps] [-P udp|ipoib] [-f fmt]}.
 */
public final class UdAddy {

    private static final int GRH = 40;
    private static final Duration EVENT_WAIT = Duration.ofSeconds(60);
    private static final long POLL_NANOS = 60_000_000_000L;

    private final PrintStream out;
    private final PrintStream err;
    private int connections = 1;
    private int messageSize = 100;
    private int messageCount = 10;
    private String port = "7174";
    private Integer tos;
    private String dstAddr;
    private String srcAddr;
    private PortSpace portSpace = PortSpace.UDP;
    private Node[] nodes;
    private int connIndex;
    private int connectsLeft;

    private UdAddy(PrintStream out, PrintStream err) {
        this.out = out;
        this.err = err;
    }

    /** Runs udaddy and exits with its status. */
    public static void main(String[] args) {
        int rc = run(args, System.out, System.err);
        System.out.flush();
        System.exit(rc);
    }

    /** Runs udaddy; returns its status (0 on success). */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        return new UdAddy(out, err).execute(args);
    }

    private final class Node {
        CmId id;
        boolean connected;
        ProtectionDomain pd;
        CompletionQueue cq;
        MemoryRegion mr;
        AddressHandle ah;
        int remoteQpn;
        int remoteQkey;

        void destroy() {
            if (id == null) {
                return;
            }
            try {
                if (ah != null) {
                    ah.close();
                }
                QueuePair qp = id.queuePair();
                if (qp != null) {
                    qp.close();
                }
                if (cq != null) {
                    cq.close();
                }
                if (mr != null) {
                    mr.close();
                }
                if (pd != null) {
                    pd.close();
                }
            } finally {
                id.close();
            }
        }
    }

    private int execute(String[] args) {
        Getopt opts = new Getopt("udaddy", args, "s:b:c:C:S:t:p:P:f:");
        for (int c; (c = opts.next(err)) != -1; ) {
            String a = opts.argument();
            switch (c) {
                case 's' -> dstAddr = a;
                case 'b' -> srcAddr = a;
                case 'c' -> connections = atoi(a);
                case 'C' -> messageCount = atoi(a);
                case 'S' -> messageSize = atoi(a);
                case 't' -> tos = Getopt.strtol(a) & 0xff;
                case 'p' -> {
                    try {
                        portSpace = PortSpace.of(Getopt.strtol(a));
                    } catch (IllegalArgumentException e) {
                        err.print("udaddy: unknown port space " + a + "\n");
                        return 1;
                    }
                }
                case 'f' -> {
                    if (startsWithIgnoreCase(a, "gid")) {
                        err.print("udaddy: AF_IB (gid) addresses are not supported\n");
                        return 1;
                    } else if (!startsWithIgnoreCase(a, "ip") && !startsWithIgnoreCase(a, "name")) {
                        err.print("Warning: unknown address format\n");
                    }
                }
                case 'P' -> {
                    if (startsWithIgnoreCase(a, "ipoib")) {
                        portSpace = PortSpace.IPOIB;
                    } else if (!startsWithIgnoreCase(a, "udp")) {
                        err.print("Warning: unknown port space format\n");
                    }
                }
                default -> {
                    usage();
                    return 1;
                }
            }
        }
        if (connections < 1) {
            connections = 0;
        }
        connectsLeft = connections;
        nodes = new Node[connections];
        int ret;
        EventChannel channel;
        try {
            channel = EventChannel.create();
        } catch (VerbsException e) {
            err.print(e.errno() == Errno.ENODEV ? "No RDMA devices were detected\n"
                    : "failed to create RDMA CM event channel: " + Errno.message(e.errno()) + "\n");
            return 1;
        }
        try {
            for (int i = 0; i < connections; i++) {
                nodes[i] = new Node();
                if (dstAddr != null) {
                    nodes[i].id = channel.createId(portSpace);
                }
            }
            ret = dstAddr != null ? runClient(channel) : runServer(channel);
            out.print("test complete\n");
            for (Node n : nodes) {
                if (n != null) {
                    n.destroy();
                }
            }
        } finally {
            channel.close();
        }
        out.print("return status " + ret + "\n");
        return ret;
    }

    private int runServer(EventChannel channel) {
        out.print("udaddy: starting server\n");
        CmId listenId = channel.createId(portSpace);
        try {
            InetSocketAddress bind;
            try {
                bind = srcAddr == null ? new InetSocketAddress(port(port)) : new InetSocketAddress(InetAddress.getByName(srcAddr), port(port));
            } catch (UnknownHostException | IllegalArgumentException e) {
                out.print("udaddy: getrdmaaddr error: Name or service not known\n");
                return -1;
            }
            try {
                listenId.bind(bind);
            } catch (VerbsException e) {
                perror("udaddy: bind address failed", e);
                return -1;
            }
            try {
                listenId.listen(0);
            } catch (VerbsException e) {
                perror("udaddy: failure trying to listen", e);
                return -1;
            }
            connectEvents(channel);
            int ret = 0;
            if (messageCount != 0) {
                out.print("receiving data transfers\n");
                ret = pollCqs();
                if (ret != 0) {
                    return ret;
                }
                out.print("sending replies\n");
                for (Node n : nodes) {
                    ret = postSends(n, SendFlags.SIGNALED);
                    if (ret != 0) {
                        return ret;
                    }
                }
                ret = pollCqs();
                if (ret != 0) {
                    return ret;
                }
                out.print("data transfers complete\n");
            }
            return ret;
        } finally {
            listenId.close();
        }
    }

    private int runClient(EventChannel channel) {
        out.print("udaddy: starting client\n");
        InetSocketAddress src;
        InetSocketAddress dst;
        try {
            src = srcAddr == null ? null : new InetSocketAddress(InetAddress.getByName(srcAddr), 0);
            dst = new InetSocketAddress(InetAddress.getByName(dstAddr), port(port));
        } catch (UnknownHostException | IllegalArgumentException e) {
            out.print("udaddy: getaddrinfo error: Name or service not known\n");
            return -1;
        }
        out.print("udaddy: connecting\n");
        for (Node n : nodes) {
            try {
                n.id.resolveAddress(src, dst, Duration.ofMillis(2000));
            } catch (VerbsException e) {
                perror("udaddy: failure getting addr", e);
                connectsLeft--;
                return -e.errno();
            }
        }
        int ret = connectEvents(channel);
        if (ret != 0) {
            return ret;
        }
        if (messageCount != 0) {
            out.print("initiating data transfers\n");
            for (Node n : nodes) {
                ret = postSends(n, 0);
                if (ret != 0) {
                    return ret;
                }
            }
            out.print("receiving data transfers\n");
            ret = pollCqs();
            if (ret != 0) {
                return ret;
            }
            out.print("data transfers complete\n");
        }
        return 0;
    }

    private int connectEvents(EventChannel channel) {
        int ret = 0;
        while (connectsLeft > 0 && ret == 0) {
            CmEvent event = channel.getEvent(EVENT_WAIT);
            if (event == null) {
                out.print("udaddy: no connection manager event within " + EVENT_WAIT.toSeconds() + " s\n");
                return -Errno.ETIMEDOUT;
            }
            ret = handle(event);
        }
        return ret;
    }

    private int handle(CmEvent event) {
        return switch (event.type()) {
            case ADDR_RESOLVED -> addrHandler(nodeOf(event.id()));
            case ROUTE_RESOLVED -> routeHandler(nodeOf(event.id()));
            case CONNECT_REQUEST -> connectHandler(event.id());
            case ESTABLISHED -> resolvedHandler(nodeOf(event.id()), event.datagram());
            case ADDR_ERROR, ROUTE_ERROR, CONNECT_ERROR, UNREACHABLE, REJECTED -> {
                out.print("udaddy: event: " + event.type() + ", error: " + event.status() + "\n");
                connectsLeft--;
                yield event.status();
            }
            default -> 0;
        };
    }

    private Node nodeOf(CmId id) {
        for (Node n : nodes) {
            if (n != null && n.id == id) {
                return n;
            }
        }
        throw new IllegalStateException("an event for an unknown id " + id);
    }

    private int addrHandler(Node node) {
        if (tos != null) {
            try {
                node.id.setTypeOfService(tos);
            } catch (VerbsException e) {
                perror("udaddy: set TOS option failed", e);
            }
        }
        try {
            node.id.resolveRoute(Duration.ofMillis(2000));
            return 0;
        } catch (VerbsException e) {
            perror("udaddy: resolve route failed", e);
            connectsLeft--;
            return -e.errno();
        }
    }

    private int routeHandler(Node node) {
        int ret = verifyTestParams(node);
        if (ret == 0) {
            ret = initNode(node);
        }
        if (ret == 0) {
            ret = postRecvs(node);
        }
        if (ret == 0) {
            try {
                node.id.connect(datagramParameters(0));
            } catch (VerbsException e) {
                perror("udaddy: failure connecting", e);
                ret = -e.errno();
            }
        }
        if (ret != 0) {
            connectsLeft--;
        }
        return ret;
    }

    private int connectHandler(CmId id) {
        int ret;
        if (connIndex == connections) {
            ret = -Errno.ENOMEM;
        } else {
            Node node = nodes[connIndex++];
            node.id = id;
            ret = verifyTestParams(node);
            if (ret == 0) {
                ret = initNode(node);
            }
            if (ret == 0) {
                ret = postRecvs(node);
            }
            if (ret == 0) {
                try {
                    node.id.accept(datagramParameters(node.id.queuePair().qpNum()));
                    node.connected = true;
                    connectsLeft--;
                    return 0;
                } catch (VerbsException e) {
                    perror("udaddy: failure accepting", e);
                    ret = -e.errno();
                }
            }
            node.destroy();
            node.id = null;
            connectsLeft--;
            out.print("udaddy: failing connection request\n");
            return ret;
        }
        out.print("udaddy: failing connection request\n");
        try {
            id.reject(new byte[0]);
        } finally {
            id.close();
        }
        return ret;
    }

    private int resolvedHandler(Node node, UdParameters ud) {
        node.remoteQpn = ud.qpNum();
        node.remoteQkey = ud.qkey();
        try {
            node.ah = node.pd.createAddressHandle(ud.destination());
        } catch (VerbsException e) {
            out.print("udaddy: failure creating address handle\n");
            connectsLeft--;
            return -1;
        }
        node.connected = true;
        connectsLeft--;
        return 0;
    }

    private int verifyTestParams(Node node) {
        int mtu;
        try {
            mtu = 1 << (node.id.context().queryPort(node.id.portNumber()).activeMtuCode() + 7);
        } catch (VerbsException e) {
            return -e.errno();
        }
        if (messageCount != 0 && messageSize > mtu) {
            out.print("udaddy: message_size " + messageSize + " is larger than active mtu " + mtu + "\n");
            return -Errno.EINVAL;
        }
        return 0;
    }

    private int initNode(Node node) {
        try {
            node.pd = node.id.context().allocateProtectionDomain();
        } catch (VerbsException e) {
            out.print("udaddy: unable to allocate PD\n");
            return -Errno.ENOMEM;
        }
        int cqe = messageCount != 0 ? messageCount * 2 : 2;
        try {
            node.cq = node.id.context().createCompletionQueue(cqe);
        } catch (VerbsException e) {
            out.print("udaddy: unable to create CQ\n");
            return -Errno.ENOMEM;
        }
        int wr = messageCount != 0 ? messageCount : 1;
        try {
            node.id.createQueuePair(node.pd, QueuePairInit.of(QpType.UD, node.cq).maxSendWr(wr).maxRecvWr(wr)
                    .maxSendSge(1).maxRecvSge(1).signalAll(false));
        } catch (VerbsException e) {
            perror("udaddy: unable to create QP", e);
            return -e.errno();
        }
        if (messageSize == 0) {
            messageCount = 0;
        }
        if (messageCount != 0) {
            try {
                node.mr = node.pd.allocateRegion(messageSize + GRH, Access.LOCAL_WRITE);
            } catch (VerbsException e) {
                out.print("failed to reg MR\n");
                out.print("udaddy: failed to create messages: -1\n");
                return -1;
            }
        }
        return 0;
    }

    private int postRecvs(Node node) {
        if (messageCount == 0) {
            return 0;
        }
        try (ReceiveRequests rr = new ReceiveRequests(1, 1)) {
            rr.get(0).wrId(0).sge(node.mr, 0, messageSize + GRH);
            for (int i = 0; i < messageCount; i++) {
                node.id.queuePair().postReceive(rr, 1);
            }
        } catch (VerbsException e) {
            out.print("failed to post receives: " + -e.errno() + "\n");
            return -e.errno();
        }
        return 0;
    }

    private int postSends(Node node, int flags) {
        if (node == null || !node.connected || messageCount == 0) {
            return 0;
        }
        QueuePair qp = node.id.queuePair();
        try (SendRequests sr = new SendRequests(1, 1)) {
            sr.reset(0).wrId(0).opcode(Opcode.SEND_WITH_IMM).flags(flags).immediateData(qp.qpNum())
                    .ud(node.ah, node.remoteQpn, node.remoteQkey).sge(node.mr, 0, messageSize);
            for (int i = 0; i < messageCount; i++) {
                qp.postSend(sr, 1);
            }
        } catch (VerbsException e) {
            out.print("failed to post sends: " + -e.errno() + "\n");
            return -e.errno();
        }
        return 0;
    }

    private int pollCqs() {
        try (WorkCompletions wcs = new WorkCompletions(8)) {
            for (Node node : nodes) {
                if (node == null || !node.connected) {
                    continue;
                }
                long deadline = System.nanoTime() + POLL_NANOS;
                for (int done = 0, n; done < messageCount; done += n) {
                    try {
                        n = node.cq.poll(wcs);
                    } catch (VerbsException e) {
                        out.print("udaddy: failed polling CQ: " + -e.errno() + "\n");
                        return -e.errno();
                    }
                    if (n > 0 && node.ah == null) {
                        try {
                            node.ah = node.pd.createAddressHandle(wcs.get(0), node.mr.segment(), node.id.portNumber());
                            node.remoteQpn = wcs.get(0).immediateData();
                            node.remoteQkey = replyQkey();
                        } catch (VerbsException e) {
                            out.print("udaddy: failed to create reply AH\n");
                            return -1;
                        }
                    }
                    if (n == 0) {
                        if (System.nanoTime() > deadline) {
                            out.print("udaddy: " + (messageCount - done) + " completions missing after "
                                    + POLL_NANOS / 1_000_000_000L + " s\n");
                            return -Errno.ETIMEDOUT;
                        }
                        if (Thread.currentThread().isInterrupted()) {
                            return -Errno.EINTR;
                        }
                        Thread.onSpinWait();
                    }
                }
            }
        }
        return 0;
    }

    /** The Q_Key librdmacm gave the id's queue pair (it sets RDMA_UDP_QKEY for the UDP port space). */
    private int replyQkey() {
        return CmId.UDP_QKEY;
    }

    /** What udaddy passes to connect and accept: zeros, but for the QP number. */
    private static ConnectionParameters datagramParameters(int qpNum) {
        return new ConnectionParameters(new byte[0], 0, 0, false, 0, 0, false, qpNum);
    }

    private void perror(String what, VerbsException e) {
        err.print(what + ": " + Errno.message(e.errno()) + "\n");
    }

    private static int port(String service) {
        int p = Integer.parseInt(service.strip());
        if (p < 0 || p > 65535) {
            throw new IllegalArgumentException("port " + service);
        }
        return p;
    }

    private static int atoi(String s) {
        String t = s.strip();
        int i = 0;
        if (i < t.length() && (t.charAt(i) == '-' || t.charAt(i) == '+')) {
            i++;
        }
        while (i < t.length() && Character.isDigit(t.charAt(i))) {
            i++;
        }
        try {
            return i == 0 || (i == 1 && !Character.isDigit(t.charAt(0))) ? 0 : Integer.parseInt(t.substring(0, i));
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    private static boolean startsWithIgnoreCase(String s, String prefix) {
        return s.regionMatches(true, 0, prefix, 0, prefix.length());
    }

    private void usage() {
        out.print("usage: udaddy\n"
                + "\t[-s server_address]\n"
                + "\t[-b bind_address]\n"
                + "\t[-f address_format]\n"
                + "\t    name, ip, ipv6, or gid\n"
                + "\t[-P port_space]\n"
                + "\t    udp or ipoib\n"
                + "\t[-c connections]\n"
                + "\t[-C message_count]\n"
                + "\t[-S message_size]\n"
                + "\t[-t type_of_service]\n"
                + "\t[-p port_space - 0x111 for UDP (default), 0x2 for IPOIB]\n");
    }
}
