package dev.verbs4j.rdmacm.tools;

import dev.verbs4j.rdmacm.CmEvent;
import dev.verbs4j.rdmacm.CmId;
import dev.verbs4j.rdmacm.EventChannel;
import dev.verbs4j.rdmacm.PortSpace;
import dev.verbs4j.rdmacm.UdParameters;
import dev.verbs4j.verbs.Access;
import dev.verbs4j.verbs.AddressHandle;
import dev.verbs4j.verbs.CompletionQueue;
import dev.verbs4j.verbs.Errno;
import dev.verbs4j.verbs.Gid;
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
import dev.verbs4j.verbs.WcOpcode;
import dev.verbs4j.verbs.WorkCompletion;
import dev.verbs4j.verbs.WorkCompletions;
import dev.verbs4j.verbs.tools.Getopt;

import java.io.PrintStream;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.time.Duration;

/**
 * {@code mckey}: UD multicast over the RDMA connection manager, as librdmacm's example (and the
 * manual's §7.3). Every id resolves the group address, creates a UD queue pair and joins the
 * group; the sender ({@code -s}) then sends {@code -C} messages with immediate data = its QP
 * number to the group, the receivers take them (stripping the 40-byte GRH and checking that the
 * immediate data is the sending QP). Same options and output as the C program, and it speaks
 * with it: {@code -m group [-s] [-b bind] [-c connections] [-C count] [-S size] [-p ps] [-o] [-l]}.
 */
public final class McKey {

    private static final int GRH = 40;
    private static final Duration EVENT_WAIT = Duration.ofSeconds(60);
    private static final long POLL_NANOS = 60_000_000_000L;

    private final PrintStream out;
    private final PrintStream err;
    private int connections = 1;
    private int messageSize = 100;
    private int messageCount = 10;
    private boolean isSender;
    private boolean sendOnly;
    private boolean loopback = true;
    private boolean unmapped;
    private String dstAddr;
    private String srcAddr;
    private PortSpace portSpace = PortSpace.UDP;
    private InetSocketAddress src;
    private InetSocketAddress dst;
    private Node[] nodes;
    private int connectsLeft;

    private McKey(PrintStream out, PrintStream err) {
        this.out = out;
        this.err = err;
    }

    /** Runs mckey and exits with its status. */
    public static void main(String[] args) {
        int rc = run(args, System.out, System.err);
        System.out.flush();
        System.exit(rc);
    }

    /** Runs mckey; returns its status (0 on success). */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        return new McKey(out, err).execute(args);
    }

    private static final class Node {
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
        Getopt opts = new Getopt("mckey", args, "m:M:sb:c:C:S:p:ol");
        for (int c; (c = opts.next(err)) != -1; ) {
            String a = opts.argument();
            switch (c) {
                case 'm' -> dstAddr = a;
                case 'M' -> {
                    unmapped = true;
                    dstAddr = a;
                }
                case 's' -> isSender = true;
                case 'b' -> srcAddr = a;
                case 'c' -> connections = atoi(a);
                case 'C' -> messageCount = atoi(a);
                case 'S' -> messageSize = atoi(a);
                case 'p' -> {
                    try {
                        portSpace = PortSpace.of(Getopt.strtol(a));
                    } catch (IllegalArgumentException e) {
                        err.print("mckey: unknown port space " + a + "\n");
                        return 1;
                    }
                }
                case 'o' -> sendOnly = true;
                case 'l' -> loopback = false;
                default -> {
                    usage();
                    return 1;
                }
            }
        }
        if (unmapped && srcAddr == null) {
            out.print("unmapped multicast address requires binding to source address\n");
            return 1;
        }
        if (dstAddr == null) {
            usage();
            return 1;
        }
        connections = Math.max(connections, 0);
        connectsLeft = connections;
        nodes = new Node[connections];
        EventChannel channel;
        try {
            channel = EventChannel.create();
        } catch (VerbsException e) {
            err.print(e.errno() == Errno.ENODEV ? "No RDMA devices were detected\n"
                    : "failed to create RDMA CM event channel: " + Errno.message(e.errno()) + "\n");
            return 1;
        }
        int ret;
        Thread cmaThread = null;
        try {
            for (int i = 0; i < connections; i++) {
                nodes[i] = new Node();
                nodes[i].id = channel.createId(portSpace);
            }
            Thread[] started = new Thread[1];
            ret = runTest(channel, started);
            cmaThread = started[0];
            out.print("test complete\n");
            if (cmaThread != null) {
                cmaThread.interrupt();
            }
            for (Node n : nodes) {
                n.destroy();
            }
        } finally {
            if (cmaThread != null) {
                cmaThread.interrupt();
            }
            channel.close();
        }
        out.print("return status " + ret + "\n");
        return ret;
    }

    private int runTest(EventChannel channel, Thread[] cmaThread) {
        out.print("mckey: starting " + (isSender ? "client" : "server") + "\n");
        try {
            if (srcAddr != null) {
                src = new InetSocketAddress(InetAddress.getByName(srcAddr), 0);
            }
            if (unmapped) {
                out.print("mckey: unmapped (AF_IB) multicast addresses are not supported\n");
                return -Errno.EOPNOTSUPP;
            }
            dst = new InetSocketAddress(InetAddress.getByName(dstAddr), 0);
        } catch (UnknownHostException e) {
            out.print("getaddrinfo failed (Name or service not known) - invalid hostname or IP address\n");
            return -2;
        }
        out.print("mckey: joining\n");
        int ret = 0;
        for (Node n : nodes) {
            try {
                if (src != null) {
                    try {
                        n.id.bind(src);
                    } catch (VerbsException e) {
                        perror("mckey: addr bind failure", e);
                        connectsLeft--;
                        return -e.errno();
                    }
                }
                n.id.resolveAddress(src, dst, Duration.ofMillis(2000));
            } catch (VerbsException e) {
                perror("mckey: resolve addr failure", e);
                connectsLeft--;
                return -e.errno();
            }
        }
        try {
            ret = connectEvents(channel);
            if (ret != 0) {
                return ret;
            }
            cmaThread[0] = Thread.ofPlatform().daemon().name("mckey-cm-events").start(() -> cmaEvents(channel));
            // Pause to give a subnet manager time to program the switches, as the C program does.
            try {
                Thread.sleep(3000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return -Errno.EINTR;
            }
            if (messageCount != 0) {
                if (isSender) {
                    out.print("initiating data transfers\n");
                    for (Node n : nodes) {
                        ret = postSends(n);
                        if (ret != 0) {
                            return ret;
                        }
                    }
                } else {
                    out.print("receiving data transfers\n");
                    ret = pollCqs();
                    if (ret != 0) {
                        return ret;
                    }
                }
                out.print("data transfers complete\n");
            }
            return ret;
        } finally {
            for (Node n : nodes) {
                try {
                    n.id.leaveMulticast(dst);
                    ret = 0;
                } catch (VerbsException e) {
                    perror("mckey: failure leaving", e);
                    ret = -1;
                }
            }
        }
    }

    private void cmaEvents(EventChannel channel) {
        try {
            while (!Thread.currentThread().isInterrupted()) {
                CmEvent ev = channel.getEvent(Duration.ofMillis(500));
                if (ev != null && (ev.type() == dev.verbs4j.rdmacm.CmEventType.MULTICAST_ERROR
                        || ev.type() == dev.verbs4j.rdmacm.CmEventType.ADDR_CHANGE)) {
                    out.print("mckey: event: " + ev.type() + ", status: " + ev.status() + "\n");
                }
            }
        } catch (IllegalStateException closed) {
            // the channel was closed at the end of the test
        }
    }

    private int connectEvents(EventChannel channel) {
        int ret = 0;
        while (connectsLeft > 0 && ret == 0) {
            CmEvent event = channel.getEvent(EVENT_WAIT);
            if (event == null) {
                out.print("mckey: no connection manager event within " + EVENT_WAIT.toSeconds() + " s\n");
                return -Errno.ETIMEDOUT;
            }
            ret = switch (event.type()) {
                case ADDR_RESOLVED -> addrHandler(nodeOf(event.id()));
                case MULTICAST_JOIN -> joinHandler(nodeOf(event.id()), event.datagram());
                case ADDR_ERROR, ROUTE_ERROR, MULTICAST_ERROR -> {
                    out.print("mckey: event: " + event.type() + ", error: " + event.status() + "\n");
                    connectsLeft--;
                    yield event.status();
                }
                default -> 0;
            };
        }
        return ret;
    }

    private Node nodeOf(CmId id) {
        for (Node n : nodes) {
            if (n.id == id) {
                return n;
            }
        }
        throw new IllegalStateException("an event for an unknown id " + id);
    }

    private int addrHandler(Node node) {
        int ret = verifyTestParams(node);
        if (ret == 0) {
            ret = initNode(node);
        }
        if (ret == 0 && !isSender) {
            ret = postRecvs(node);
        }
        if (ret == 0) {
            try {
                node.id.joinMulticast(dst, sendOnly);
            } catch (VerbsException e) {
                perror("mckey: failure joining", e);
                ret = -e.errno();
            }
        }
        if (ret != 0) {
            connectsLeft--;
        }
        return ret;
    }

    private int joinHandler(Node node, UdParameters ud) {
        Gid dgid = ud.destination().gid();
        out.print("mckey: joined dgid: " + (dgid == null ? Gid.of(new byte[16]) : dgid) + " mlid 0x"
                + Integer.toHexString(ud.destination().dlid()) + " sl " + ud.destination().serviceLevel() + "\n");
        node.remoteQpn = ud.qpNum();
        node.remoteQkey = ud.qkey();
        try {
            node.ah = node.pd.createAddressHandle(ud.destination());
        } catch (VerbsException e) {
            out.print("mckey: failure creating address handle\n");
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
            out.print("mckey: message_size " + messageSize + " is larger than active mtu " + mtu + "\n");
            return -Errno.EINVAL;
        }
        return 0;
    }

    private int initNode(Node node) {
        try {
            node.pd = node.id.context().allocateProtectionDomain();
        } catch (VerbsException e) {
            out.print("mckey: unable to allocate PD\n");
            return -Errno.ENOMEM;
        }
        int cqe = messageCount != 0 ? messageCount * 2 : 2;
        try {
            node.cq = node.id.context().createCompletionQueue(cqe);
        } catch (VerbsException e) {
            out.print("mckey: unable to create CQ\n");
            return -Errno.ENOMEM;
        }
        if (!loopback) {
            // IBV_QP_CREATE_BLOCK_SELF_MCAST_LB is not offered by the verbs layer's QueuePairInit.
            err.print("mckey: unable to create QP: " + Errno.message(Errno.EOPNOTSUPP) + "\n");
            return -Errno.EOPNOTSUPP;
        }
        int wr = messageCount != 0 ? messageCount : 1;
        try {
            node.id.createQueuePair(node.pd, QueuePairInit.of(QpType.UD, node.cq).maxSendWr(wr).maxRecvWr(wr)
                    .maxSendSge(1).maxRecvSge(1).signalAll(false));
        } catch (VerbsException e) {
            perror("mckey: unable to create QP", e);
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
                out.print("mckey: failed to create messages: -1\n");
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

    /**
     * Sends the messages as the C sender does (unsignaled SEND_WITH_IMM, imm = own QPN), but
     * signals the last one and waits for it, so that leaving the group and destroying the queue
     * pair cannot cut the sends short.
     */
    private int postSends(Node node) {
        if (!node.connected || messageCount == 0) {
            return 0;
        }
        QueuePair qp = node.id.queuePair();
        for (int i = 0; i < messageSize; i++) {
            node.mr.segment().set(ValueLayout.JAVA_BYTE, i, (byte) i);
        }
        try (SendRequests sr = new SendRequests(1, 1); WorkCompletions wcs = new WorkCompletions(1)) {
            for (int i = 0; i < messageCount; i++) {
                sr.reset(0).wrId(i).opcode(Opcode.SEND_WITH_IMM).flags(i == messageCount - 1 ? SendFlags.SIGNALED : 0)
                        .immediateData(qp.qpNum()).ud(node.ah, node.remoteQpn, node.remoteQkey).sge(node.mr, 0, messageSize);
                qp.postSend(sr, 1);
            }
            long deadline = System.nanoTime() + POLL_NANOS;
            while (node.cq.poll(wcs) == 0) {
                if (System.nanoTime() > deadline || Thread.currentThread().isInterrupted()) {
                    out.print("mckey: the sends did not complete\n");
                    return -Errno.ETIMEDOUT;
                }
                Thread.onSpinWait();
            }
            if (!wcs.get(0).isSuccess()) {
                out.print("mckey: send failed: " + wcs.get(0).status() + "\n");
                return -Errno.EIO;
            }
        } catch (VerbsException e) {
            out.print("failed to post sends: " + -e.errno() + "\n");
            return -e.errno();
        }
        return 0;
    }

    /**
     * Takes {@code -C} receive completions per node, as the C receiver does, and checks each: it
     * succeeded, carries immediate data equal to the sending QP's number, and holds the 40-byte
     * GRH followed by at most {@code -S} bytes.
     */
    private int pollCqs() {
        try (WorkCompletions wcs = new WorkCompletions(8)) {
            for (Node node : nodes) {
                if (!node.connected) {
                    continue;
                }
                long deadline = System.nanoTime() + POLL_NANOS;
                for (int done = 0, n; done < messageCount; done += n) {
                    try {
                        n = node.cq.poll(wcs);
                    } catch (VerbsException e) {
                        out.print("mckey: failed polling CQ: " + -e.errno() + "\n");
                        return -e.errno();
                    }
                    for (int i = 0; i < n; i++) {
                        String problem = check(wcs.get(i));
                        if (problem != null) {
                            out.print("mckey: message " + (done + i) + ": " + problem + "\n");
                            return -Errno.EIO;
                        }
                    }
                    if (n == 0) {
                        if (System.nanoTime() > deadline) {
                            out.print("mckey: " + (messageCount - done) + " messages missing after "
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

    private String check(WorkCompletion wc) {
        if (!wc.isSuccess()) {
            return "completion status " + wc.status();
        }
        if (wc.opcode() != WcOpcode.RECV) {
            return "completion opcode " + wc.opcode();
        }
        if ((wc.flags() & WorkCompletion.FLAG_WITH_IMM) == 0) {
            return "no immediate data";
        }
        if (wc.immediateData() != wc.srcQp()) {
            return String.format("immediate data 0x%x is not the sender's QP number 0x%x", wc.immediateData(), wc.srcQp());
        }
        int payload = wc.byteLength() - GRH;
        if (payload < 0 || payload > messageSize) {
            return wc.byteLength() + " bytes received: not a 40-byte GRH and up to " + messageSize + " bytes";
        }
        return null;
    }

    private void perror(String what, VerbsException e) {
        err.print(what + ": " + Errno.message(e.errno()) + "\n");
    }

    private static int atoi(String s) {
        String t = s.strip();
        int i = 0;
        if (i < t.length() && (t.charAt(i) == '-' || t.charAt(i) == '+')) {
            i++;
        }
        int start = i;
        while (i < t.length() && Character.isDigit(t.charAt(i))) {
            i++;
        }
        try {
            return i == start ? 0 : Integer.parseInt(t.substring(0, i));
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    private void usage() {
        out.print("usage: mckey\n"
                + "\t-m multicast_address\n"
                + "\t[-M unmapped_multicast_address]\n"
                + "\t replaces -m and requires -b\n"
                + "\t[-s(ender)]\n"
                + "\t[-b bind_address]\n"
                + "\t[-c connections]\n"
                + "\t[-C message_count]\n"
                + "\t[-S message_size]\n"
                + "\t[-p port_space - 0x111 for UDP (default), 0x2 for IPOIB]\n"
                + "\t[-o join as a send-only full-member]\n"
                + "\t[-l join without multicast loopback]\n");
    }
}
