package dev.verbs4j.tools.rdmacm;

import dev.verbs4j.rdmacm.CmEvent;
import dev.verbs4j.rdmacm.CmEventType;
import dev.verbs4j.rdmacm.EventChannel;
import dev.verbs4j.rdmacm.UdParameters;
import dev.verbs4j.verbs.Errno;
import dev.verbs4j.verbs.Gid;
import dev.verbs4j.verbs.SendFlags;
import dev.verbs4j.verbs.VerbsException;
import dev.verbs4j.verbs.WcOpcode;
import dev.verbs4j.verbs.WorkCompletion;
import dev.verbs4j.verbs.WorkCompletions;

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
public final class McKey extends DatagramTest {

    private boolean isSender;
    private boolean sendOnly;
    private boolean loopback = true;
    private boolean unmapped;
    private String dstAddr;
    private String srcAddr;
    private InetSocketAddress src;
    private InetSocketAddress dst;
    /** The thread that reports the connection manager's events during the transfers. */
    private Thread cmaThread;

    private McKey(PrintStream out, PrintStream err) {
        super("mckey", out, err);
    }

    /** Runs mckey; returns its status (0 on success). */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        return new McKey(out, err).execute(args, "m:M:sb:c:C:S:p:ol");
    }

    @Override
    boolean optionsComplete() {
        if (unmapped && srcAddr == null) {
            out.print("unmapped multicast address requires binding to source address\n");
            return false;
        }
        if (dstAddr == null) {
            usage();
            return false;
        }
        return true;
    }

    @Override
    int test(EventChannel channel) {
        for (DatagramNode n : nodes) {
            n.id = channel.createId(portSpace);
        }
        return runTest(channel);
    }

    @Override
    void afterTest() {
        if (cmaThread != null) {
            cmaThread.interrupt();
        }
    }

    @Override
    boolean option(int c, String a) {
        switch (c) {
            case 'm' -> dstAddr = a;
            case 'M' -> {
                unmapped = true;
                dstAddr = a;
            }
            case 's' -> isSender = true;
            case 'b' -> srcAddr = a;
            case 'o' -> sendOnly = true;
            case 'l' -> loopback = false;
            default -> {
                usage();
                return false;
            }
        }
        return true;
    }

    private int runTest(EventChannel channel) {
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
        for (DatagramNode n : nodes) {
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
                n.id.resolveAddress(src, dst, ROUTE_TIMEOUT);
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
            cmaThread = Thread.ofPlatform().daemon().name("mckey-cm-events").start(() -> cmaEvents(channel));
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
                    for (DatagramNode n : nodes) {
                        ret = postSends(n);
                        if (ret != 0) {
                            return ret;
                        }
                    }
                } else {
                    out.print("receiving data transfers\n");
                    ret = pollCqs("messages", this::check);
                    if (ret != 0) {
                        return ret;
                    }
                }
                out.print("data transfers complete\n");
            }
            return ret;
        } finally {
            for (DatagramNode n : nodes) {
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
                if (ev != null && (ev.type() == CmEventType.MULTICAST_ERROR || ev.type() == CmEventType.ADDR_CHANGE)) {
                    out.print("mckey: event: " + ev.type() + ", status: " + ev.status() + "\n");
                }
            }
        } catch (IllegalStateException closed) {
            // the channel was closed at the end of the test
        }
    }

    @Override
    int handle(CmEvent event) {
        return switch (event.type()) {
            case ADDR_RESOLVED -> addrHandler(nodeOf(event.id()));
            case MULTICAST_JOIN -> joinHandler(nodeOf(event.id()), event.datagram());
            case ADDR_ERROR, ROUTE_ERROR, MULTICAST_ERROR -> eventError(event);
            default -> 0;
        };
    }

    private int addrHandler(DatagramNode node) {
        int ret = node.prepare(loopback, !isSender);
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

    private int joinHandler(DatagramNode node, UdParameters ud) {
        Gid dgid = ud.destination().gid();
        out.print("mckey: joined dgid: " + (dgid == null ? Gid.of(new byte[16]) : dgid) + " mlid 0x"
                + Integer.toHexString(ud.destination().dlid()) + " sl " + ud.destination().serviceLevel() + "\n");
        return node.setPeer(ud);
    }

    /**
     * Sends the messages as the C sender does (unsignaled SEND_WITH_IMM, imm = own QPN), but
     * signals the last one and waits for it, so that leaving the group and destroying the queue
     * pair cannot cut the sends short.
     */
    private int postSends(DatagramNode node) {
        if (!node.connected || messageCount == 0) {
            return 0;
        }
        for (int i = 0; i < messageSize; i++) {
            node.mr.segment().set(ValueLayout.JAVA_BYTE, i, (byte) i);
        }
        int last = messageCount - 1;
        int ret = node.postSends(i -> i == last ? SendFlags.SIGNALED : 0);
        if (ret != 0) {
            return ret;
        }
        try (WorkCompletions wcs = new WorkCompletions(1)) {
            if (!awaitCompletion(node, wcs)) {
                out.print("mckey: the sends did not complete\n");
                return -Errno.ETIMEDOUT;
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
     * The receiver's check of each completion: it succeeded, carries immediate data equal to the
     * sending QP's number, and holds the 40-byte GRH followed by at most {@code -S} bytes.
     */
    private int check(DatagramNode node, WorkCompletions wcs, int done, int n) {
        for (int i = 0; i < n; i++) {
            String problem = problem(wcs.get(i));
            if (problem != null) {
                out.print("mckey: message " + (done + i) + ": " + problem + "\n");
                return -Errno.EIO;
            }
        }
        return 0;
    }

    private String problem(WorkCompletion wc) {
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
