package dev.verbs4j.tools.rdmacm;

import dev.verbs4j.rdmacm.AddressInfo;
import dev.verbs4j.rdmacm.CmEvent;
import dev.verbs4j.rdmacm.CmEventType;
import dev.verbs4j.rdmacm.CmId;
import dev.verbs4j.rdmacm.EventChannel;
import dev.verbs4j.rdmacm.PortSpace;
import dev.verbs4j.rdmacm.UdParameters;
import dev.verbs4j.tools.Getopt;
import dev.verbs4j.verbs.Access;
import dev.verbs4j.verbs.AddressHandle;
import dev.verbs4j.verbs.CompletionQueue;
import dev.verbs4j.verbs.MemoryRegion;
import dev.verbs4j.verbs.Opcode;
import dev.verbs4j.verbs.ProtectionDomain;
import dev.verbs4j.verbs.QpType;
import dev.verbs4j.verbs.QueuePair;
import dev.verbs4j.verbs.QueuePairInit;
import dev.verbs4j.verbs.ReceiveRequests;
import dev.verbs4j.verbs.SendFlags;
import dev.verbs4j.verbs.SendRequests;
import dev.verbs4j.verbs.WorkCompletion;
import dev.verbs4j.verbs.WorkCompletions;

import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.time.Duration;

/**
 * The multicast example of the RDMA programming manual ({@code mc}): a UD queue pair on an RDMA
 * CM id joins a multicast group; the sender sends {@code count} SEND_WITH_IMM messages (immediate
 * data: its QPN) to the group, the receiver takes them, then both leave. Unlike the manual's
 * code, the receiver gives each message a slot of its own and with {@code -V} checks its bytes (mc sends byte j as j;
 * mckey sends what its buffer happens to hold), the CQ holds
 * every message, and every wait is bounded (default 30 s). Owns every resource it creates.
 *
 * <pre>mc -m MCAST_ADDR [-s] [-b BIND_ADDR] [-c COUNT] [-l LENGTH] [-t SECONDS] [-V]</pre>
 */
public final class Mc extends ManualExample {

    private static final int GRH = 40;
    private static final Duration RESOLVE = Duration.ofMillis(2000);

    private String mcastAddr;
    private String bindAddr;
    private boolean sender;
    private boolean verify;
    private int count = 4;
    private int length = 64;

    private Mc(PrintStream out, PrintStream err) {
        super("mc", out, err);
    }

    /** Runs mc; returns its status (0 on success). */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        return new Mc(out, err).run(args, "m:b:c:l:p:st:V");
    }

    @Override
    boolean option(int c, String a, Getopt opts) {
        switch (c) {
            case 'm' -> mcastAddr = a;
            case 'b' -> bindAddr = a;
            case 'c' -> count = opts.positiveArgument('c');
            case 'l' -> length = opts.positiveArgument('l');
            case 'p' -> { } // parsed and unused, as in the manual's code
            case 's' -> sender = true;
            case 'V' -> verify = true;
            default -> {
                return false;
            }
        }
        return true;
    }

    @Override
    boolean complete() {
        return mcastAddr != null;
    }

    @Override
    void usage() {
        out.print("usage: mc -m mcast_addr [-s] [-b bind_addr] [-c count] [-l length] [-t seconds] [-V]\n");
        out.print("\t-m\tthe multicast group (IPv4 or IPv6)\n");
        out.print("\t-s\tsend (default: receive)\n");
        out.print("\t-b\tthe local address to bind to\n");
        out.print("\t-c\tmessages to send or receive (default 4)\n");
        out.print("\t-l\tmessage length (default 64)\n");
        out.print("\t-t\tseconds to wait for each step (default 30)\n");
        out.print("\t-V\tcheck the received bytes (byte j is j, as mc sends them)\n");
    }

    @Override
    int execute() {
        InetSocketAddress bind = bindAddr == null ? null : address(bindAddr, AddressInfo.PASSIVE);
        InetSocketAddress group = address(mcastAddr, 0);
        try (EventChannel channel = EventChannel.create(); CmId id = channel.createId(PortSpace.UDP)) {
            if (bind != null) {
                id.bind(bind);
            }
            id.resolveAddress(bind, group, RESOLVE);
            expect(channel, CmEventType.ADDR_RESOLVED);
            int mtu = 1 << (id.context().queryPort(id.portNumber()).activeMtuCode() + 7);
            if (length > mtu) {
                err.print("mc: message length " + length + " is larger than the active MTU " + mtu + "\n");
                return 1;
            }
            int slot = sender ? length : length + GRH;
            try (ProtectionDomain pd = id.context().allocateProtectionDomain();
                 CompletionQueue cq = id.context().createCompletionQueue(count);
                 MemoryRegion mr = pd.allocateRegion((long) slot * count, Access.LOCAL_WRITE)) {
                QueuePair qp = id.createQueuePair(pd, QueuePairInit.of(QpType.UD, cq).maxSendWr(count).maxRecvWr(count)
                        .maxSendSge(1).maxRecvSge(1));
                if (!sender) {
                    try (ReceiveRequests rr = new ReceiveRequests(1, 1)) {
                        for (int i = 0; i < count; i++) {
                            rr.get(0).wrId(i).sge(mr, (long) i * slot, slot);
                            qp.postReceive(rr, 1);
                        }
                    }
                }
                id.joinMulticast(group);
                UdParameters ud = expect(channel, CmEventType.MULTICAST_JOIN).datagram();
                out.print("mc: joined dgid: " + ud.destination().gid() + " mlid 0x" + Integer.toHexString(ud.destination().dlid())
                        + " sl " + ud.destination().serviceLevel() + "\n");
                Thread events = eventPrinter(channel);
                int rc;
                try (AddressHandle ah = sender ? pd.createAddressHandle(ud.destination()) : null) {
                    rc = sender ? send(qp, cq, mr, ah, ud) : receive(cq, mr, slot);
                } finally {
                    id.leaveMulticast(group);
                    events.interrupt();
                }
                out.print("mc: left the group\n");
                return rc;
            }
        }
    }

    private int send(QueuePair qp, CompletionQueue cq, MemoryRegion mr, AddressHandle ah, UdParameters ud) {
        MemorySegment buf = mr.segment();
        try (SendRequests sr = new SendRequests(1, 1); WorkCompletions wcs = new WorkCompletions(1)) {
            for (int i = 0; i < count; i++) {
                MemorySegment msg = buf.asSlice((long) i * length, length);
                fill(msg);
                sr.reset(0).wrId(i).opcode(Opcode.SEND_WITH_IMM).flags(SendFlags.SIGNALED).immediateData(qp.qpNum())
                        .ud(ah, ud.qpNum(), ud.qkey()).sge(mr, (long) i * length, length);
                qp.postSend(sr, 1);
                WorkCompletion wc = pollOne(cq, wcs, "no completion of message " + (i + 1));
                if (!wc.isSuccess()) {
                    err.print("mc: send " + (i + 1) + " failed: " + wc.status().description() + "\n");
                    return 1;
                }
                out.print("sent message " + (i + 1) + "\n");
            }
        }
        return 0;
    }

    private int receive(CompletionQueue cq, MemoryRegion mr, int slot) {
        try (WorkCompletions wcs = new WorkCompletions(1)) {
            for (int i = 0; i < count; i++) {
                WorkCompletion wc = pollOne(cq, wcs, "no message " + (i + 1));
                if (!wc.isSuccess()) {
                    err.print("mc: receive " + (i + 1) + " failed: " + wc.status().description() + "\n");
                    return 1;
                }
                int n = (int) wc.wrId();
                MemorySegment msg = mr.segment().asSlice((long) n * slot + GRH, length);
                if (n != i || wc.byteLength() != slot || (verify && !matches(msg))) {
                    err.print("mc: message " + (i + 1) + " is not what was sent (slot " + n + ", " + (wc.byteLength() - GRH)
                            + " bytes)\n");
                    return 1;
                }
                out.print("received message " + (i + 1) + "\n");
            }
        }
        return 0;
    }

    /** Byte j of every message is j. */
    private static void fill(MemorySegment msg) {
        for (long j = 0; j < msg.byteSize(); j++) {
            msg.set(ValueLayout.JAVA_BYTE, j, (byte) j);
        }
    }

    private static boolean matches(MemorySegment msg) {
        for (long j = 0; j < msg.byteSize(); j++) {
            if (msg.get(ValueLayout.JAVA_BYTE, j) != (byte) j) {
                return false;
            }
        }
        return true;
    }

    private CmEvent expect(EventChannel channel, CmEventType type) {
        CmEvent event = channel.getEvent(limit);
        if (event == null) {
            throw timedOut("no " + type + " event");
        }
        if (event.type() != type) {
            throw new IllegalStateException("expected " + type + ", got " + event);
        }
        return event;
    }

    /** As the manual's code: a thread that prints every later CM event. */
    private Thread eventPrinter(EventChannel channel) {
        Thread t = Thread.ofPlatform().daemon().name("mc-events").start(() -> {
            try {
                while (!Thread.currentThread().isInterrupted()) {
                    CmEvent e = channel.getEvent(Duration.ofMillis(200));
                    if (e != null) {
                        out.print("mc: event " + e.type() + ", status " + e.status() + "\n");
                    }
                }
            } catch (RuntimeException e) {
                // the channel closed under us: done
            }
        });
        return t;
    }

    private static InetSocketAddress address(String host, int flags) {
        try (AddressInfo info = AddressInfo.resolve(host, null, flags, PortSpace.UDP)) {
            AddressInfo.Entry e = info.first();
            InetSocketAddress a = (flags & AddressInfo.PASSIVE) != 0 ? e.source() : e.destination();
            if (a == null) {
                throw new IllegalArgumentException("rdma_getaddrinfo gave no address for " + host);
            }
            return a;
        }
    }
}
