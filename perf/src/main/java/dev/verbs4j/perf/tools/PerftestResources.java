package dev.verbs4j.perf.tools;

import dev.verbs4j.perf.tools.PerfOptions.Kind;
import dev.verbs4j.perf.tools.PerfOptions.Verb;
import dev.verbs4j.tools.ToolExit;
import dev.verbs4j.verbs.Access;
import dev.verbs4j.verbs.AddressHandle;
import dev.verbs4j.verbs.AddressVector;
import dev.verbs4j.verbs.Closeables;
import dev.verbs4j.verbs.CompletionChannel;
import dev.verbs4j.verbs.CompletionQueue;
import dev.verbs4j.verbs.Context;
import dev.verbs4j.verbs.Gid;
import dev.verbs4j.verbs.MemoryRegion;
import dev.verbs4j.verbs.Mtu;
import dev.verbs4j.verbs.SharedReceiveQueue;
import dev.verbs4j.verbs.ProtectionDomain;
import dev.verbs4j.verbs.QpState;
import dev.verbs4j.verbs.QpType;
import dev.verbs4j.verbs.QueuePair;
import dev.verbs4j.verbs.QueuePairAttributes;
import dev.verbs4j.verbs.QueuePairInit;
import dev.verbs4j.verbs.RdmaArena;
import dev.verbs4j.verbs.ReceiveRequests;
import dev.verbs4j.verbs.SendRequests;
import dev.verbs4j.verbs.WorkCompletions;

import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The verbs objects of one perftest run on its {@link PerftestDevice}: one buffer with its memory
 * region (per queue pair a send area, then per queue pair the area the peer reaches), the
 * completion queues (with the channel of {@code -e}), the test queue pairs with their work
 * requests, their local and peer descriptions and, for UD, the peer addresses. Sets them up,
 * connects the queue pairs and frees them ({@link #close}).
 */
final class PerftestResources {

    /** perftest's Q_Key of every UD queue pair. */
    static final int QKEY = 0x11111111;
    /** The GRH in front of every UD receive. */
    static final int UD_ADDITION = 40;
    private static final int WCS = 64;

    private static final System.Logger LOG = System.getLogger(PerftestResources.class.getName());

    private final PerfOptions o;
    private final PrintStream out;
    private final PrintStream err;
    private final PerftestDevice device;

    private RdmaArena arena;
    private MemorySegment buf;
    private ProtectionDomain pd;
    private MemoryRegion mr;
    /** Every buffer and its region: one, or one per queue pair with --mr_per_qp ({@link #perQp}). */
    private MemorySegment[] bufs;
    private MemoryRegion[] mrs;
    private boolean perQp;
    /** The completion channel of -e, else null. */
    private CompletionChannel events;
    private CompletionQueue sendCq;
    private CompletionQueue recvCq;
    private QueuePair[] qps;
    /** UD: per queue pair, the address handle of the peer's queue pair (on the sending sides). */
    private AddressHandle[] ahs;
    /** UD over RDMA CM: per queue pair, the peer's QPN and Q_Key as the connection manager gave them. */
    private int[] peerQpn;
    private int[] peerQkey;
    private boolean attachedMulticast;
    private SendRequests[] sends;
    private ReceiveRequests[] recvs;
    private WorkCompletions wcs;
    /** Per queue pair, this side's description and the peer's (from the key exchange). */
    private Wire.Dest[] my;
    private Wire.Dest[] rem;

    /** The bytes of one queue pair's area (a whole number of cache lines). */
    private long region;
    /** Whether the memory region was registered with relaxed ordering. */
    private boolean relaxed;
    /** The shared receive queue of --use-srq, or null. */
    private SharedReceiveQueue srq;

    PerftestResources(PerfOptions o, PrintStream out, PrintStream err, PerftestDevice device) {
        this.o = o;
        this.out = out;
        this.err = err;
        this.device = device;
    }

    private ToolExit exit(String message, int status) {
        return ToolExit.printed(err, message, status);
    }

    /** {@code IBV_ODP_SUPPORT_SEND} and {@code IBV_ODP_SUPPORT_RECV}. */
    private static final int ODP_SUPPORT_SEND = 1;
    private static final int ODP_SUPPORT_RECV = 1 << 1;

    // ---- the objects ----

    /**
     * The buffer, memory region, completion queues and queue pairs (in INIT); with {@code cmQps}
     * the queue pairs come from RDMA CM instead (created later by the caller, see {@link #createQp}).
     */
    void create(boolean cmQps) throws ToolExit {
        Context context = device.context();
        int cacheLine = device.cacheLine();
        long buffSize = Math.max(o.size, device.cycleBuffer());
        region = (buffSize + cacheLine - 1) / cacheLine * cacheLine;
        long total = region * 2 * o.numQps;
        if (o.isUd()) {
            total += cacheLine; // a receive starts UD_ADDITION bytes before the cache line (the GRH)
        }
        if (o.odp) {
            // perftest's check of on-demand paging for RC before its memory region
            int caps;
            try {
                caps = context.queryDevice().odpRcCaps();
            } catch (RuntimeException e) {
                throw PerftestBuffer.noRegion(err, " Couldn't query device for on-demand paging capabilities.");
            }
            if ((caps & ODP_SUPPORT_SEND) == 0) {
                throw PerftestBuffer.noRegion(err, " Send is not supported for RC transport.");
            }
            if ((caps & ODP_SUPPORT_RECV) == 0) {
                throw PerftestBuffer.noRegion(err, " Receive is not supported for RC transport.");
            }
        }
        // --mr_per_qp: a buffer (send half, then the half the peer reaches) and a region per queue pair
        perQp = o.mrPerQp && o.numQps > 1;
        bufs = new MemorySegment[perQp ? o.numQps : 1];
        try {
            arena = RdmaArena.ofShared();
            PerftestBuffer allocation = new PerftestBuffer(o, out, err, arena);
            for (int i = 0; i < bufs.length; i++) {
                long size = perQp ? region * 2 + (o.isUd() ? cacheLine : 0) : total;
                bufs[i] = i == 0 && o.mmapFile != null ? allocation.mapFile(perQp ? region * 2 : total)
                        : o.useHugepages ? allocation.hugePages(size) : arena.allocate(size, 4096);
            }
        } catch (RuntimeException | OutOfMemoryError e) {
            throw exit("Couldn't allocate work buf.", 1);
        }
        buf = bufs[0];
        // perftest zeroes a buffer in huge pages (a fresh mapping is zero) and fills the others
        if (!(o.verb == Verb.WRITE && o.kind == Kind.LAT) && !(o.useHugepages && o.mmapFile == null)) {
            for (MemorySegment b : bufs) {
                PerftestBuffer.fillRandom(b);
            }
        }
        try {
            pd = context.allocateProtectionDomain();
        } catch (RuntimeException e) {
            throw exit("Couldn't allocate PD", 1);
        }
        int access = Access.LOCAL_WRITE | switch (o.verb) {
            case SEND -> 0;
            case WRITE -> Access.REMOTE_WRITE;
            case READ -> Access.REMOTE_READ;
            case ATOMIC -> Access.REMOTE_ATOMIC;
        };
        relaxed = !(o.verb == Verb.WRITE && o.kind == Kind.LAT) && !o.disablePcieRelaxed;
        if (o.odp) {
            access |= Access.ON_DEMAND;
        }
        mrs = new MemoryRegion[bufs.length];
        for (int i = 0; i < bufs.length; i++) {
            try {
                mrs[i] = pd.register(bufs[i], relaxed ? access | Access.RELAXED_ORDERING : access);
            } catch (RuntimeException e) {
                try {
                    relaxed = false;
                    mrs[i] = pd.register(bufs[i], access);
                } catch (RuntimeException e2) {
                    throw exit("Couldn't allocate MR", 1);
                }
            }
        }
        mr = mrs[0];
        createQueues();
        qps = new QueuePair[o.numQps];
        my = new Wire.Dest[o.numQps];
        rem = new Wire.Dest[o.numQps];
        sends = new SendRequests[o.numQps];
        recvs = new ReceiveRequests[o.numQps];
        ahs = new AddressHandle[o.numQps];
        peerQpn = new int[o.numQps];
        peerQkey = new int[o.numQps];
        // one thread creates, drives and closes everything: the confined fast path (no atomic
        // operation per post or poll)
        wcs = WorkCompletions.confined(WCS);
        if (!cmQps) {
            for (int i = 0; i < o.numQps; i++) {
                createQp(i, null);
            }
        }
    }

    /** The completion channel of -e and the completion queues (one for SEND's receives too), armed with -e. */
    private void createQueues() throws ToolExit {
        Context context = device.context();
        if (o.events) {
            try {
                events = context.createCompletionChannel();
            } catch (RuntimeException e) {
                throw exit("Couldn't create completion channel", 1);
            }
        }
        try {
            sendCq = context.createCompletionQueue(Math.max(1, o.txDepth * o.numQps), events, o.eqNum);
            recvCq = o.verb == Verb.SEND ? context.createCompletionQueue(Math.max(1, o.rxDepth * o.numQps), events, o.eqNum)
                    : sendCq;
            sendCq.confine();
            recvCq.confine();
        } catch (RuntimeException e) {
            throw exit("Couldn't create CQ", 1);
        }
        // --use-srq: the side that receives (a latency test, the server, -b) takes them from one SRQ
        if (o.useSrq && (o.kind == Kind.LAT || !o.isClient() || o.duplex)) {
            try {
                srq = pd.createSharedReceiveQueue(o.rxDepth, 1);
            } catch (RuntimeException e) {
                throw exit("Couldn't create SRQ", 1);
            }
        }
        if (events != null) {
            try {
                sendCq.requestNotify(false);
                if (recvCq != sendCq) {
                    recvCq.requestNotify(false);
                }
            } catch (RuntimeException e) {
                throw exit("Couldn't request CQ notification", 1);
            }
        }
    }

    /** The init attributes of every test queue pair. */
    QueuePairInit qpInit() {
        QpType type = o.isUd() ? QpType.UD : o.isUc() ? QpType.UC : QpType.RC;
        QueuePairInit init = QueuePairInit.of(type, sendCq, recvCq).maxSendWr(o.txDepth).maxRecvWr(o.rxDepth)
                .maxSendSge(1).maxRecvSge(1).maxInlineData(o.inlineSize);
        return srq != null ? init.sharedReceiveQueue(srq) : init;
    }

    /** Creates queue pair {@code i} (or takes {@code given}, made by RDMA CM) and its local description. */
    void createQp(int i, QueuePair given) throws ToolExit {
        if (given == null) {
            try {
                qps[i] = pd.createQueuePair(qpInit());
            } catch (RuntimeException e) {
                throw exit(" Unable to create QP.", 1);
            }
            QueuePairAttributes init = new QueuePairAttributes().state(QpState.INIT).pkeyIndex(o.pkeyIndex).port(o.ibPort);
            if (o.isUd()) {
                init.qkey(QKEY);
            } else {
                init.accessFlags(switch (o.verb) {
                    case SEND -> Access.REMOTE_WRITE | Access.LOCAL_WRITE;
                    case WRITE -> Access.REMOTE_WRITE;
                    case READ -> Access.REMOTE_READ;
                    case ATOMIC -> Access.REMOTE_ATOMIC;
                });
            }
            try {
                qps[i].modify(init);
            } catch (RuntimeException e) {
                throw exit("Failed to modify QP to INIT", 1);
            }
        } else {
            qps[i] = given;
        }
        qps[i].confine();
        int psn = ThreadLocalRandom.current().nextInt() & 0xffffff;
        // the address the peer reads and writes: buf stays registered (mr) and allocated until close()
        my[i] = new Wire.Dest(device.lid(), device.ownOutReads(), qps[i].qpNum(), psn, mr(i).rkey(),
                buffer(i).address() + remoteOffset(i), device.gid().raw(), 0);
        sends[i] = SendRequests.confined(Math.max(1, o.postList), 1);
        recvs[i] = ReceiveRequests.confined(Math.max(1, o.recvPostList), 1);
    }

    // ---- connecting ----

    /** RTR for every queue pair (and RTS when {@code send}), towards the peer's descriptions. */
    void connect(boolean send) throws ToolExit {
        int gidIndex = device.gidIndex();
        for (int i = 0; i < o.numQps; i++) {
            Wire.Dest r = rem[i];
            // --dlid replaces the peer's LID, --tclass is the GRH's traffic class (--flow_label is raw Ethernet's)
            AddressVector av = new AddressVector(o.ibPort, o.dlid != 0 ? o.dlid : r.lid(), o.sl,
                    gidIndex >= 0 ? Gid.of(r.gid()) : null, Math.max(0, gidIndex), 255, gidIndex >= 0 ? o.trafficClass : 0, 0);
            QueuePairAttributes rtr = new QueuePairAttributes().state(QpState.RTR);
            if (!o.isUd()) {
                rtr.addressVector(av).pathMtu(Mtu.of(device.mtuCode())).destQpn(r.qpn()).rqPsn(r.psn());
            }
            if (!o.isUd() && !o.isUc()) {
                rtr.maxDestRdAtomic(device.ownOutReads()).minRnrTimer(12);
            }
            try {
                qps[i].modify(rtr);
            } catch (RuntimeException e) {
                err.print("Failed to modify QP " + qps[i].qpNum() + " to RTR\n");
                throw exit(" Unable to Connect the HCA's through the link", 1);
            }
            if (send) {
                QueuePairAttributes rts = new QueuePairAttributes().state(QpState.RTS).sqPsn(my[i].psn());
                if (!o.isUd() && !o.isUc()) {
                    rts.timeout(o.qpTimeout).retryCount(7).rnrRetry(7).maxRdAtomic(Math.max(1, r.outReads()));
                }
                try {
                    qps[i].modify(rts);
                } catch (RuntimeException e) {
                    err.print("Failed to modify QP to RTS\n");
                    throw exit(" Unable to Connect the HCA's through the link", 1);
                }
                if (o.isUd()) {
                    try {
                        ahs[i] = pd.createAddressHandle(av);
                    } catch (RuntimeException e) {
                        err.print("Failed to create AH\n");
                        throw exit(" Unable to Connect the HCA's through the link", 1);
                    }
                }
            }
            if (o.rateLimitType == PerfOptions.RateLimitType.HW) {
                // checked after RTR, RTS and the address handle, as perftest does: these tools set no static
                // rate, and an Ethernet port takes none, so perftest limits in software, or fails when HW was asked for
                if (!o.rateLimitTypeGiven) {
                    o.rateLimitType = PerfOptions.RateLimitType.SW;
                    err.print("\u001b[31mThe QP failed to accept HW rate limit, providing SW rate limit \u001b[0m\n");
                } else {
                    err.print("\u001b[31mThe QP failed to accept HW rate limit  \u001b[0m\n");
                    throw exit(" Unable to Connect the HCA's through the link", 1);
                }
            }
        }
    }

    /**
     * Multicast ({@link Multicast#attaches}): attaches every queue pair to this side's group and
     * makes the group (MLID 0, QPN 0xffffff) its description for the peer, as perftest's
     * send_set_up_connection does.
     */
    void attachMulticast() throws ToolExit {
        byte[] group = Multicast.group(o);
        if (group == null) {
            throw exit(" Invalid MGID " + o.mgid + ": 16 numbers separated by colons", 1);
        }
        if (!device.headerInfo(relaxed).ethernet()) {
            // InfiniBand: perftest registers the group with the subnet administrator first; these tools do not
            err.print("Couldn't Register the Mcast group on the SM\n");
            throw exit(" Unable to set up socket connection", 1);
        }
        Gid mgid = Gid.of(group);
        for (int i = 0; i < o.numQps; i++) {
            try {
                qps[i].attachMulticast(mgid, 0);
            } catch (RuntimeException e) {
                err.print("Couldn't attach QP to MultiCast group");
                throw exit(" Unable to set up socket connection", 1);
            }
            attachedMulticast = true;
            Wire.Dest d = my[i];
            my[i] = new Wire.Dest(0, d.outReads(), Multicast.QPN, d.psn(), d.rkey(), d.vaddr(), group, d.srqn());
        }
    }

    /** Whether {@link #attachMulticast} attached a queue pair to a group. */
    boolean attachedMulticast() {
        return attachedMulticast;
    }

    /** UD over RDMA CM: sends of queue pair {@code i} go to {@code qpn} with {@code qkey} through {@code ah}. */
    void datagramPeer(int i, AddressHandle ah, int qpn, int qkey) {
        ahs[i] = ah;
        peerQpn[i] = qpn;
        peerQkey[i] = qkey;
    }

    // ---- what the other parts of the run use ----

    /** The shared receive queue of --use-srq on the receiving side, else null. */
    SharedReceiveQueue srq() {
        return srq;
    }

    /** Whether {@link #create} made the queue pairs' arrays (the run got as far as its verbs objects). */
    boolean created() {
        return qps != null;
    }

    PerftestDevice device() {
        return device;
    }

    ProtectionDomain pd() {
        return pd;
    }

    MemorySegment buffer() {
        return buf;
    }

    MemoryRegion mr() {
        return mr;
    }

    /** The memory region queue pair {@code i}'s requests use (its own with --mr_per_qp). */
    MemoryRegion mr(int i) {
        return perQp ? mrs[i] : mr;
    }

    /** The buffer of queue pair {@code i} ({@link #localOffset} and {@link #remoteOffset} are into it). */
    MemorySegment buffer(int i) {
        return perQp ? bufs[i] : buf;
    }

    CompletionChannel events() {
        return events;
    }

    CompletionQueue sendCq() {
        return sendCq;
    }

    CompletionQueue recvCq() {
        return recvCq;
    }

    WorkCompletions wcs() {
        return wcs;
    }

    QueuePair qp(int i) {
        return qps[i];
    }

    QueuePair[] qps() {
        return qps;
    }

    SendRequests sends(int i) {
        return sends[i];
    }

    ReceiveRequests recvs(int i) {
        return recvs[i];
    }

    AddressHandle ah(int i) {
        return ahs[i];
    }

    int peerQpn(int i) {
        return peerQpn[i];
    }

    int peerQkey(int i) {
        return peerQkey[i];
    }

    /** This side's description of queue pair {@code i}. */
    Wire.Dest local(int i) {
        return my[i];
    }

    /** The peer's description of the queue pair facing queue pair {@code i}. */
    Wire.Dest peer(int i) {
        return rem[i];
    }

    void peer(int i, Wire.Dest d) {
        rem[i] = d;
    }

    /** Where QP {@code i} sends from. */
    long localOffset(int i) {
        return perQp ? 0 : i * region;
    }

    /** The region of QP {@code i} the peer writes to / reads from / receives into. */
    long remoteOffset(int i) {
        return perQp ? region : (o.numQps + i) * region;
    }

    /** What the header says about the device and the memory region. */
    PerfOutput.HeaderInfo headerInfo() {
        return device.headerInfo(relaxed);
    }

    // ---- tear-down ----

    /**
     * Frees the verbs objects: address handles, queue pairs, completion queues and channel, memory
     * regions, PD and work requests. The buffer stays until {@link #closeBuffer}. Runs after the
     * run's status is settled: a failed close is logged at WARNING, and the others still run.
     */
    void close() {
        Closeables.closeLogged(LOG, orNone(ahs));
        Closeables.closeLogged(LOG, orNone(qps));
        Closeables.closeLogged(LOG, srq, sendCq != recvCq ? recvCq : null, sendCq, events);
        Closeables.closeLogged(LOG, orNone(mrs));
        Closeables.closeLogged(LOG, pd);
        Closeables.closeLogged(LOG, orNone(sends));
        Closeables.closeLogged(LOG, orNone(recvs));
        Closeables.closeLogged(LOG, wcs);
    }

    private static AutoCloseable[] orNone(AutoCloseable[] resources) {
        return resources == null ? new AutoCloseable[0] : resources;
    }

    /** Frees the buffer (after the memory region and whoever else used it). */
    void closeBuffer() {
        Closeables.closeLogged(LOG, arena);
    }
}
