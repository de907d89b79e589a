package dev.verbs4j.vipl;

import dev.verbs4j.rdmacm.CmEvent;
import dev.verbs4j.rdmacm.CmEventType;
import dev.verbs4j.rdmacm.CmId;
import dev.verbs4j.rdmacm.ConnectionParameters;
import dev.verbs4j.rdmacm.EventChannel;
import dev.verbs4j.rdmacm.PortSpace;
import dev.verbs4j.verbs.Access;
import dev.verbs4j.verbs.Opcode;
import dev.verbs4j.verbs.QpState;
import dev.verbs4j.verbs.QpType;
import dev.verbs4j.verbs.QueuePair;
import dev.verbs4j.verbs.QueuePairAttributes;
import dev.verbs4j.verbs.QueuePairInit;
import dev.verbs4j.verbs.ReceiveRequest;
import dev.verbs4j.verbs.ReceiveRequests;
import dev.verbs4j.verbs.SendFlags;
import dev.verbs4j.verbs.SendRequest;
import dev.verbs4j.verbs.SendRequests;

import java.net.InetSocketAddress;
import java.time.Duration;

/**
 * A Virtual Interface ({@code VIP_VI_HANDLE}, §2.1, §3.3): a send and a receive work queue over an
 * RC queue pair (Reliable Delivery and Reliable Reception) created in its tag's protection domain,
 * connected through RDMA CM. It keeps the VI state of §5 and the posted descriptors of each queue
 * in order; the descriptors themselves stay the application's memory. The queue pair, its
 * hidden completion queues and the RDMA CM id belong to the VI; {@link #close()} is VipDestroyVi.
 *
 * <p>An error that moves a reliable VI to the Error state also closes its connection, so that
 * the peer VI learns of it at once (Error state, asynchronous CONN_LOST) instead of at its own
 * next transfer (§12 tests 7 and 20).
 */
public final class VipVi implements AutoCloseable {

    /** Receiver-not-ready retries: none, so that a missing receive is an error at once (D14). */
    static final int RNR_RETRY = 0;
    private static final Duration ACCEPT_WAIT = Duration.ofSeconds(10);

    final VipNic nic;
    VipViAttributes attributes;
    final VipCq sendCq;
    final VipCq recvCq;
    final WorkQueue send;
    final WorkQueue recv;
    QueuePair qp;
    private final SendRequests sendWr;
    private final ReceiveRequests recvWr;
    volatile VipViState state = VipViState.IDLE;
    volatile VipViAttributes remoteAttributes;
    /** The VipConnectPeerRequest in progress or whose outcome is not yet collected, else null. */
    volatile PeerAttempt peerConnect;
    /** The VipConnectRequest or VipConnectAccept in progress, else null. Under the lock. */
    private Attempt attempt;
    private CmId id;
    /** The INIT, RTR and RTS attributes of the current connection (an Unreliable VI re-arms with them). */
    private QueuePairAttributes[] connectedAttributes;
    /** An Unreliable VI's queue pair is in error and is being drained to be re-armed. */
    private boolean rearming;
    private EventChannel channel;
    volatile boolean destroyed;

    /**
     * A VipConnectRequest or VipConnectAccept in progress: the thread that runs it changes the VI
     * (its queue pair, its state) only under the NIC lock and only while the attempt is the VI's
     * own and not cancelled. VipDisconnect and VipCloseNic cancel it: they close its event
     * channel, which ends the attempt's waits, and the attempt returns {@link #code}, leaving the
     * VI to them. Guarded by the NIC lock.
     */
    private static final class Attempt {
        EventChannel channel;
        boolean cancelled;
        VipReturn code;
    }

    /** Thrown inside an attempt that was cancelled; ends it with the code its canceller chose. */
    private static final class Cancelled extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Cancelled() {
            super(null, null, false, false);
        }
    }

    /**
     * A VipConnectPeerRequest: the outcome its thread (or a VipDestroyVi, VipCloseNic that
     * cancels it) completes, and whether it was cancelled, which the thread checks between its
     * waits (each at most a slice long).
     */
    static final class PeerAttempt {
        final java.util.concurrent.CompletableFuture<VipReturn> outcome = new java.util.concurrent.CompletableFuture<>();
        volatile boolean cancelled;
        /** The attempt's (virtual) thread. */
        volatile Thread thread;

        void cancel(VipReturn code) {
            cancelled = true;
            outcome.complete(code);
        }
    }

    VipVi(VipNic nic, VipViAttributes attributes, VipCq sendCq, VipCq recvCq) {
        this.nic = nic;
        this.attributes = attributes;
        this.sendCq = sendCq;
        this.recvCq = recvCq;
        this.send = new WorkQueue(this, false, sendCq, nic.queueDepth);
        this.recv = new WorkQueue(this, true, recvCq, nic.queueDepth);
        this.qp = createQp(attributes.ptag(), qpType(attributes));
        this.sendWr = new SendRequests(1, nic.maxSge);
        this.recvWr = new ReceiveRequests(1, nic.maxSge);
    }

    private QueuePair createQp(VipPtag ptag, QpType type) {
        QueuePair q = ptag.pd.createQueuePair(QueuePairInit.of(type, send.ibvCq, recv.ibvCq)
                .maxSendWr(nic.queueDepth).maxRecvWr(nic.queueDepth).maxSendSge(nic.maxSge).maxRecvSge(nic.maxSge));
        nic.viByQpn.put(q.qpNum(), this);
        return q;
    }

    /** The NIC of this VI. */
    public VipNic nic() {
        return nic;
    }

    /** The current state (as VipQueryVi gives it). */
    public VipViState state() {
        return state;
    }

    /** The current attributes (as VipQueryVi gives them). */
    public VipViAttributes attributes() {
        return attributes;
    }

    /**
     * The remote VI's attributes, the OUT parameter {@code RemoteViAttribs} of a successful
     * VipConnectRequest (and of the request VipConnectAccept accepted); null when not connected.
     */
    public VipViAttributes remoteAttributes() {
        return remoteAttributes;
    }

    /** Whether VipDestroyVi destroyed it. */
    public boolean isDestroyed() {
        return destroyed;
    }

    /** The CQ the send queue is attached to, or null. */
    public VipCq sendCq() {
        return sendCq;
    }

    /** The CQ the receive queue is attached to, or null. */
    public VipCq recvCq() {
        return recvCq;
    }

    /** D18: Unreliable is a UC queue pair (no acknowledgements, no RDMA Read); the reliable levels RC. */
    private static QpType qpType(VipViAttributes a) {
        return a.reliabilityLevel() == VipReliabilityLevel.UNRELIABLE ? QpType.UC : QpType.RC;
    }

    int qpAccess() {
        boolean read = attributes.enableRdmaRead() && reliable();
        return (attributes.enableRdmaWrite() ? Access.REMOTE_WRITE : 0) | (read ? Access.REMOTE_READ : 0);
    }

    /**
     * After an error completion on an Unreliable VI, which stays Connected (§2.5.1): if the
     * queue pair went to the error state, what it flushes stays posted ({@link #rearming}) and,
     * once nothing is left in it, it is reset, moved to RTS again with the connection's attributes
     * (a UC queue pair has no connection state to lose: the peer resynchronises on the next
     * message) and the descriptors still queued are handed to it again, in order. Under the lock.
     */
    void afterUnreliableError() {
        if (state != VipViState.CONNECTED || connectedAttributes == null) {
            return;
        }
        try {
            if (qp.queryState() != QpState.ERR) {
                return;
            }
        } catch (RuntimeException e) {
            return;
        }
        rearming = true;
        rearmIfDrained();
    }

    /** The second half of {@link #afterUnreliableError}, once the queue pair holds no descriptor. Under the lock. */
    void rearmIfDrained() {
        if (!rearming || send.hasInVerbs() || recv.hasInVerbs()) {
            return;
        }
        rearming = false;
        try {
            qp.reset();
            for (QueuePairAttributes a : connectedAttributes) {
                qp.modify(a);
            }
        } catch (RuntimeException e) {
            enterError(); // the queue pair cannot be used again: a catastrophic error (§7.1)
            return;
        }
        for (WorkQueue q : new WorkQueue[]{recv, send}) {
            for (Posted p : q.ring) {
                if (!p.done && !p.inVerbs) {
                    submit(q, p, true);
                }
            }
        }
    }

    boolean rearming() {
        return rearming;
    }

    /** RDMA CM's attributes for {@code target}, as this VI's queue pair type takes them. */
    private QueuePairAttributes cmAttributes(CmId cmId, QpState target) {
        return cmId.initQueuePairAttributes(target).restrictTo(qpType(attributes));
    }

    boolean reliable() {
        return attributes.reliabilityLevel() != VipReliabilityLevel.UNRELIABLE;
    }

    // ---- posting ----

    /** The receive queue when {@code receive}, else the send queue. */
    WorkQueue queue(boolean receive) {
        return receive ? recv : send;
    }

    /** The CQ the receive queue (when {@code receive}) or the send queue is attached to, or null. */
    VipCq cq(boolean receive) {
        return receive ? recvCq : sendCq;
    }

    VipReturn post(VipDescriptor d, VipMemHandle descriptorMemory, boolean receive) {
        try {
            return postLocked(d, descriptorMemory, receive);
        } finally {
            nic.flushReports();
        }
    }

    private VipReturn postLocked(VipDescriptor d, VipMemHandle descriptorMemory, boolean receive) {
        WorkQueue q = receive ? recv : send;
        nic.lock.lock();
        try {
            if (destroyed) {
                return VipReturn.INVALID_PARAMETER;
            }
            if (!d.segment().scope().isAlive()) {
                return VipReturn.INVALID_PARAMETER; // its arena was closed: no descriptor to post
            }
            Posted p;
            try {
                p = q.append(d.segment(), descriptorMemory == null ? 0 : descriptorMemory.value());
            } catch (IllegalStateException | WrongThreadException e) {
                return VipReturn.INVALID_PARAMETER; // its memory is not accessible to this thread
            }
            int errors = 0;
            if (d.address() % VipDescriptor.ALIGNMENT != 0) {
                errors = VipStatus.FORMAT_ERROR;
            } else if (descriptorMemory == null || descriptorMemory.invalid() || descriptorMemory.nic != nic
                    || descriptorMemory.attributes.ptag() != attributes.ptag()
                    || !descriptorMemory.covers(d.address(), d.segment().byteSize())) {
                // §3.2.1: a descriptor must lie in registered memory of the VI's tag; also reported asynchronously.
                errors = VipStatus.PROTECTION_ERROR;
                nic.report(new VipErrorDescriptor(nic, this, q.cq, d.address(), CompletionMapping.opBits(receive, 0, false),
                        VipResourceCode.DESCRIPTOR, VipErrorCode.POST_DESC));
            }
            if (errors == 0) {
                errors = DescriptorCheck.format(d, p, receive, attributes, nic.maxSge);
            }
            if (errors == 0) {
                errors = DescriptorCheck.protection(d, p, nic, attributes.ptag());
            }
            if (errors != 0) {
                q.completeLocally(p, errors);
                if (state == VipViState.CONNECTED && reliable()) {
                    enterError();
                }
                return VipReturn.SUCCESS;
            }
            VipViState s = state;
            if (s == VipViState.ERROR || (!receive && s != VipViState.CONNECTED)) {
                // D10: a send posted while Idle or Pending Connect, anything posted in Error, completes flushed.
                q.completeLocally(p, VipStatus.DESC_FLUSHED_ERROR);
            } else if (s == VipViState.CONNECTED) {
                submit(q, p, false);
            }
            // else a receive while Idle or Pending Connect waits for the connection (§5.1)
            return VipReturn.SUCCESS;
        } finally {
            nic.lock.unlock();
        }
    }

    /**
     * Hands a checked descriptor to the queue pair, translating it without copying data. Under the lock.
     *
     * <p>A descriptor checked when it was posted but handed over later (a receive posted while the
     * VI was Idle, or re-armed on an Unreliable VI) is checked for protection again: when a region
     * it uses was deregistered or moved to another tag meanwhile (§3.2.1), a receive goes to the
     * queue pair without data segments and completes with PROTECTION_ERROR when a message reaches
     * it (the moment the region would have been accessed); a send completes with PROTECTION_ERROR
     * at once, and sends nothing. {@code recheck} is false when it was checked just now (posted
     * on a Connected VI).
     */
    private void submit(WorkQueue q, Posted p, boolean recheck) {
        submit(q, p, recheck, false);
    }

    private void submit(WorkQueue q, Posted p, boolean recheck, boolean retry) {
        VipDescriptor d = p.descriptor;
        int first = DescriptorCheck.firstData(p.op);
        int protection;
        try {
            protection = recheck ? DescriptorCheck.protection(d, p, nic, attributes.ptag()) : 0;
        } catch (RuntimeException e) {
            if (!WorkQueue.inaccessible(d, e)) {
                throw e;
            }
            q.memoryGone(p);
            return;
        }
        if (protection != 0 && !q.receive) {
            q.completeLocally(p, protection);
            if (state == VipViState.CONNECTED && reliable()) {
                enterError();
            }
            return;
        }
        try {
            if (q.receive) {
                ReceiveRequest wr = recvWr.get(0).wrId(q.wrId(p)).noSge();
                p.regionGone = protection != 0;
                int k = 0;
                for (int i = first; i < d.segCount() && !p.regionGone; i++) {
                    int len = d.segmentLength(i);
                    if (len != 0) {
                        VipMemHandle m = nic.regions.get(d.segmentHandle(i));
                        wr.sge(k++, m.mr, d.segmentData(i) - m.address(), len);
                    }
                }
                qp.postReceive(recvWr, 1);
            } else {
                int control = d.control();
                boolean imm = (control & VipControl.IMMEDIATE) != 0 && p.op != VipControl.OP_RDMAREAD;
                Opcode opcode = switch (p.op) {
                    case VipControl.OP_RDMAWRITE -> imm ? Opcode.RDMA_WRITE_WITH_IMM : Opcode.RDMA_WRITE;
                    case VipControl.OP_RDMAREAD -> Opcode.RDMA_READ;
                    default -> imm ? Opcode.SEND_WITH_IMM : Opcode.SEND;
                };
                SendRequest wr = sendWr.reset(0).wrId(q.wrId(p)).opcode(opcode)
                        .flags(SendFlags.SIGNALED | ((control & VipControl.QFENCE) != 0 ? SendFlags.FENCE : 0));
                if (imm) {
                    wr.immediateData(d.immediateData());
                }
                if (p.op != VipControl.OP_SENDRECV) {
                    wr.rdma(d.segmentData(0), d.segmentHandle(0));
                }
                int k = 0;
                for (int i = first; i < d.segCount(); i++) {
                    int len = d.segmentLength(i);
                    if (len != 0) {
                        VipMemHandle m = nic.regions.get(d.segmentHandle(i));
                        wr.sge(k++, m.mr, d.segmentData(i) - m.address(), len);
                    }
                }
                qp.postSend(sendWr, 1);
            }
            p.inVerbs = true;
        } catch (RuntimeException e) {
            if (WorkQueue.inaccessible(d, e)) {
                q.memoryGone(p);
                return;
            }
            if (!retry && e instanceof IllegalStateException) {
                // A region it names was closed since the check (its RdmaArena's close deregistered
                // it): checked again, it is handled as a region deregistered before the hand-over.
                submit(q, p, true, true);
                return;
            }
            // The queue pair refused it (its queue is full): VI overrun (§9.9.1), the descriptor completes in error.
            q.completeLocally(p, VipStatus.FORMAT_ERROR);
            nic.report(new VipErrorDescriptor(nic, this, q.cq, d.address(), CompletionMapping.opBits(q.receive, p.op, false),
                    VipResourceCode.VI, VipErrorCode.VI_OVERRUN));
        }
    }

    private void submitWaitingReceives() {
        for (Posted p : recv.ring) {
            if (!p.done && !p.inVerbs) {
                submit(recv, p, true);
            }
        }
    }

    /**
     * A reliable VI's connection broke: Error state, the queue pair flushes the rest (§2.5.2). Under the lock.
     *
     * <p>Decision (§12 tests 7 and 20, "the VIs go to ERROR"): the connection is also closed at
     * the RDMA CM level, so that the peer VI learns of it at once (its connection watch puts it in
     * the Error state and reports CONN_LOST, §9.9.1) rather than only when its own next transfer
     * times out against a queue pair in error. This holds for every error that breaks a reliable
     * connection: a receive queue found empty, a receive too small, a protection error, a
     * transport error. Both VIs then stay in Error until each side calls VipDisconnect.
     */
    void enterError() {
        if (state == VipViState.CONNECTED || state == VipViState.CONNECT_PENDING) {
            state = VipViState.ERROR;
            try {
                qp.toError();
            } catch (RuntimeException ignored) {
                // the queue pair may be in error already
            }
            if (id != null) {
                try {
                    id.disconnect();
                } catch (RuntimeException ignored) {
                    // the peer may have disconnected first
                }
            }
        }
    }

    // ---- connecting ----

    /**
     * Starts an attempt (under the lock), or returns why not: the VI destroyed or not Idle. The
     * VI is Pending Connect from now on.
     */
    private VipReturn begin(Attempt at) {
        if (destroyed) {
            return VipReturn.INVALID_PARAMETER;
        }
        if (state != VipViState.IDLE) {
            return VipReturn.INVALID_STATE;
        }
        state = VipViState.CONNECT_PENDING;
        attempt = at;
        return null;
    }

    /** Under the lock: throws {@link Cancelled} unless {@code at} is still this VI's attempt. */
    private void check(Attempt at) {
        if (at.cancelled || attempt != at || destroyed) {
            throw new Cancelled();
        }
    }

    /** Gives the attempt its event channel, or closes the channel when the attempt was cancelled meanwhile. */
    private void adopt(Attempt at, EventChannel ch) {
        nic.lock.lock();
        try {
            if (!at.cancelled && attempt == at && !destroyed) {
                at.channel = ch;
                return;
            }
        } finally {
            nic.lock.unlock();
        }
        ch.close();
        throw new Cancelled();
    }

    /**
     * Under the lock: cancels the attempt in progress, which then returns {@code code}, and
     * returns its event channel, which the caller closes once it has let go of the lock (that ends
     * the attempt's waits and destroys its connection id).
     */
    private EventChannel cancelAttempt(VipReturn code) {
        Attempt at = attempt;
        if (at == null) {
            return null;
        }
        attempt = null;
        at.cancelled = true;
        at.code = code;
        EventChannel ch = at.channel;
        at.channel = null;
        return ch;
    }

    private static void closeQuietly(AutoCloseable c) {
        if (c == null) {
            return;
        }
        try {
            c.close();
        } catch (Exception ignored) {
            // already closed, or going away with its owner
        }
    }

    /** RESET → INIT with RDMA CM's attributes and the VI's RDMA enables; then the receives waiting are handed over. */
    private void toInit(Attempt at, CmId cmId) {
        try {
            nic.lock.lock();
            try {
                check(at);
                connectedAttributes = new QueuePairAttributes[3];
                connectedAttributes[0] = cmAttributes(cmId, QpState.INIT).accessFlags(qpAccess());
                qp.modify(connectedAttributes[0]);
                submitWaitingReceives();
            } finally {
                nic.lock.unlock();
            }
        } finally {
            nic.flushReports();
        }
    }

    /** INIT → RTR → RTS with RDMA CM's attributes for the connection, kept for {@link #rearmIfDrained}. */
    private void readyToSend(Attempt at, CmId cmId) {
        nic.lock.lock();
        try {
            check(at);
            connectedAttributes[1] = cmAttributes(cmId, QpState.RTR);
            qp.modify(connectedAttributes[1]);
            connectedAttributes[2] = cmAttributes(cmId, QpState.RTS);
            qp.modify(connectedAttributes[2]);
        } finally {
            nic.lock.unlock();
        }
    }

    private void connected(Attempt at, CmId cmId, EventChannel ch, VipViAttributes remote) {
        try {
            nic.lock.lock();
            try {
                check(at);
                attempt = null;
                at.channel = null;
                submitWaitingReceives();
                this.id = cmId;
                this.channel = ch;
                this.remoteAttributes = remote;
                state = VipViState.CONNECTED;
            } finally {
                nic.lock.unlock();
            }
        } finally {
            nic.flushReports();
        }
        watch(ch);
    }

    /**
     * Watches the connection's event channel while the VI is connected: the peer's disconnect (or
     * its process ending, or the device going away) puts a Connected VI in the Error state and
     * reports the asynchronous CONN_LOST error (§9.9.1), so the consumer learns of it before its
     * next data transfer (§5.4 only requires it by then). The watch ends when this side
     * disconnects (the channel is closed) or the VI is destroyed.
     */
    private void watch(EventChannel ch) {
        Thread.ofVirtual().name("VIPL connection " + nic.name).start(() -> {
            while (true) {
                CmEvent ev;
                try {
                    ev = ch.getEvent(Duration.ofSeconds(1));
                } catch (RuntimeException closed) {
                    return;
                }
                VipErrorDescriptor lost = null;
                nic.lock.lock();
                try {
                    if (channel != ch || destroyed) {
                        return;
                    }
                    if (ev == null) {
                        continue;
                    }
                    CmEventType t = ev.type();
                    if (t != CmEventType.DISCONNECTED && t != CmEventType.DEVICE_REMOVAL) {
                        continue;
                    }
                    if (state == VipViState.CONNECTED) {
                        enterError();
                        lost = new VipErrorDescriptor(nic, this, null, 0, 0, VipResourceCode.VI, VipErrorCode.CONN_LOST);
                    }
                } finally {
                    nic.lock.unlock();
                }
                if (lost != null) {
                    nic.report(lost);
                }
                return;
            }
        });
    }

    /**
     * Ends attempt {@code at} with {@code code}: back to Idle (the queue pair to RESET, waiting
     * receives kept) and its channel closed; or, when it was cancelled, the code its canceller
     * chose, the VI left to the canceller.
     */
    private VipReturn failConnect(Attempt at, VipReturn code) {
        EventChannel ch;
        nic.lock.lock();
        try {
            if (at.cancelled || attempt != at) {
                return at.code != null ? at.code : VipReturn.ERROR_RESOURCE;
            }
            attempt = null;
            ch = at.channel;
            at.channel = null;
            if (!destroyed) {
                try {
                    qp.reset();
                } catch (RuntimeException ignored) {
                    // reset below by recreating on the next attempt is not needed on rxe
                }
                recv.takeBackFromVerbs();
                send.takeBackFromVerbs();
                state = VipViState.IDLE;
            }
        } finally {
            nic.lock.unlock();
        }
        closeQuietly(ch);
        return code;
    }

    private static CmEvent next(EventChannel ch, long deadline) {
        while (true) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return null;
            }
            CmEvent ev = ch.getEvent(Duration.ofNanos(Math.min(left, 1_000_000_000L)));
            if (ev != null) {
                return ev;
            }
        }
    }

    /** The queue pair number to put in the connection parameters, read under the lock. */
    private int qpNum(Attempt at) {
        nic.lock.lock();
        try {
            check(at);
            return qp.qpNum();
        } finally {
            nic.lock.unlock();
        }
    }

    private ConnectionParameters parameters(Attempt at, byte[] privateData) {
        return new ConnectionParameters(privateData, nic.rdmaDepth, nic.rdmaDepth, false, 7, RNR_RETRY, false, qpNum(at));
    }

    /** The VI's attributes as the connection message carries them, read under the lock. */
    private VipViAttributes attributes(Attempt at) {
        nic.lock.lock();
        try {
            check(at);
            return attributes;
        } finally {
            nic.lock.unlock();
        }
    }

    VipReturn connectRequest(VipNetAddress local, VipNetAddress remote, long timeoutMillis) {
        Attempt at = new Attempt();
        nic.lock.lock();
        try {
            VipReturn refused = begin(at);
            if (refused != null) {
                return refused;
            }
        } finally {
            nic.lock.unlock();
        }
        long deadline = timeoutMillis == Vipl.INFINITE ? Long.MAX_VALUE : System.nanoTime() + timeoutMillis * 1_000_000;
        try {
            EventChannel ch = EventChannel.create();
            adopt(at, ch);
            CmId cmId = ch.createId(PortSpace.TCP);
            Duration step = Duration.ofMillis(Math.max(1, Math.min(timeoutMillis, 5_000)));
            cmId.resolveAddress(new InetSocketAddress(local.inetAddress(), 0), new InetSocketAddress(remote.inetAddress(), Vipl.port()), step);
            CmEvent ev = next(ch, deadline);
            if (ev == null) {
                return failConnect(at, VipReturn.TIMEOUT);
            }
            if (ev.type() != CmEventType.ADDR_RESOLVED) {
                return failConnect(at, VipReturn.NOT_REACHABLE);
            }
            if (!cmId.context().name().equals(nic.name)) {
                return failConnect(at, VipReturn.INVALID_PARAMETER);
            }
            cmId.resolveRoute(step);
            ev = next(ch, deadline);
            if (ev == null) {
                return failConnect(at, VipReturn.TIMEOUT);
            }
            if (ev.type() != CmEventType.ROUTE_RESOLVED) {
                return failConnect(at, VipReturn.NOT_REACHABLE);
            }
            toInit(at, cmId);
            cmId.connect(parameters(at, ConnectMessage.of(attributes(at), remote.discriminator(), local.discriminator()).encode()));
            ev = next(ch, deadline);
            if (ev == null) {
                return failConnect(at, VipReturn.TIMEOUT);
            }
            if (ev.type() == CmEventType.REJECTED) {
                byte[] pd = ev.privateData();
                boolean byConsumer = pd.length >= 2 && pd[0] == ConnectMessage.REJECT[0] && pd[1] == ConnectMessage.REJECT[1];
                return failConnect(at, byConsumer ? VipReturn.REJECT : VipReturn.NOT_REACHABLE);
            }
            if (ev.type() != CmEventType.CONNECT_RESPONSE) {
                return failConnect(at, VipReturn.NOT_REACHABLE);
            }
            ConnectMessage reply = ConnectMessage.decode(ev.privateData());
            if (reply == null) {
                return failConnect(at, VipReturn.ERROR_RESOURCE);
            }
            readyToSend(at, cmId);
            cmId.establish();
            connected(at, cmId, ch, reply.attributes());
            return VipReturn.SUCCESS;
        } catch (RuntimeException e) {
            // a step failed, or the attempt was cancelled (its channel closed under it)
            return failConnect(at, VipReturn.ERROR_RESOURCE);
        }
    }

    VipReturn accept(VipConnHandle conn) {
        Attempt at = new Attempt();
        nic.lock.lock();
        try {
            if (destroyed || conn.consumed) {
                return VipReturn.INVALID_PARAMETER;
            }
            if (state != VipViState.IDLE) {
                return VipReturn.INVALID_STATE;
            }
            VipViAttributes r = conn.remoteAttributes;
            if (r.reliabilityLevel() != attributes.reliabilityLevel()) {
                return VipReturn.INVALID_RELIABILITY_LEVEL;
            }
            if (r.maxTransferSize() != attributes.maxTransferSize()) {
                return VipReturn.INVALID_MTU;
            }
            if (r.qos() != attributes.qos()) {
                return VipReturn.INVALID_QOS;
            }
            begin(at);
            conn.consumed = true;
        } finally {
            nic.lock.unlock();
        }
        boolean migrated = false;
        try {
            EventChannel ch = EventChannel.create();
            adopt(at, ch);
            conn.id.migrate(ch);
            migrated = true;
            toInit(at, conn.id);
            readyToSend(at, conn.id);
            conn.id.accept(parameters(at, ConnectMessage.of(attributes(at), new byte[0], new byte[0]).encode()));
            CmEvent ev = next(ch, System.nanoTime() + ACCEPT_WAIT.toNanos());
            if (ev == null || ev.type() != CmEventType.ESTABLISHED) {
                return failConnect(at, VipReturn.ERROR_RESOURCE);
            }
            connected(at, conn.id, ch, conn.remoteAttributes);
            return VipReturn.SUCCESS;
        } catch (RuntimeException e) {
            if (!migrated) {
                closeQuietly(conn.id); // still the listener's: refused by destroying it
            }
            return failConnect(at, VipReturn.ERROR_RESOURCE);
        }
    }

    /**
     * VipDisconnect: flushes every posted descriptor (DESC_FLUSHED) and returns to Idle (§4.2,
     * §9.4.5). A connection attempt in progress (VipConnectRequest, VipConnectAccept on another
     * thread) is cancelled: it returns INVALID_STATE and leaves the VI alone.
     */
    VipReturn disconnect() {
        CmId cmId;
        EventChannel ch;
        EventChannel cancelled;
        nic.lock.lock();
        try {
            if (destroyed) {
                return VipReturn.INVALID_PARAMETER;
            }
            if (state == VipViState.IDLE) {
                // (no attempt in progress: an attempt keeps the VI Pending Connect)
                send.flushRemaining();
                recv.flushRemaining();
                return VipReturn.SUCCESS;
            }
            cancelled = cancelAttempt(VipReturn.INVALID_STATE);
            rearming = false; // what the queue pair flushes now is flushed for the consumer too
            try {
                qp.toError();
            } catch (RuntimeException ignored) {
                // already in error
            }
            cmId = id;
            ch = channel;
            id = null;
            channel = null;
        } finally {
            nic.lock.unlock();
        }
        closeQuietly(cancelled);
        if (cmId != null) {
            try {
                cmId.disconnect();
            } catch (RuntimeException ignored) {
                // the peer may have gone first
            }
        }
        long deadline = System.nanoTime() + 2_000_000_000L;
        while (System.nanoTime() < deadline) {
            nic.poll(send.ibvCq);
            nic.poll(recv.ibvCq);
            nic.lock.lock();
            try {
                if (destroyed || !send.hasInVerbs() && !recv.hasInVerbs()) {
                    break;
                }
            } finally {
                nic.lock.unlock();
            }
            // (the flush takes microseconds; a virtual thread lets its carrier run others meanwhile)
            Thread.yield();
        }
        nic.lock.lock();
        try {
            if (!destroyed) {
                // (destroyed meanwhile by VipCloseNic on another thread: everything is gone already)
                send.flushRemaining();
                recv.flushRemaining();
                try {
                    qp.reset();
                } catch (RuntimeException ignored) {
                    // a queue pair that cannot be reset is replaced
                    nic.viByQpn.remove(qp.qpNum());
                    qp.close();
                    qp = createQp(attributes.ptag(), qpType(attributes));
                }
                remoteAttributes = null;
                state = VipViState.IDLE;
            }
        } finally {
            nic.lock.unlock();
        }
        closeQuietly(ch);
        return VipReturn.SUCCESS;
    }

    /** VipSetViAttributes on an Idle VI; a new tag gives the VI a new queue pair in that tag's domain (D12). */
    VipReturn setAttributes(VipViAttributes a) {
        nic.lock.lock();
        try {
            if (destroyed) {
                return VipReturn.INVALID_PARAMETER;
            }
            if (state != VipViState.IDLE) {
                return VipReturn.INVALID_STATE;
            }
            if (!a.ptag().usableOn(nic)) {
                return VipReturn.INVALID_PTAG;
            }
            if (a.ptag() != attributes.ptag() || qpType(a) != qpType(attributes)) {
                // another domain, or another reliability class (RC / UC): another queue pair
                QueuePair old = qp;
                qp = createQp(a.ptag(), qpType(a));
                nic.viByQpn.remove(old.qpNum());
                old.close();
                attributes.ptag().users.remove(this);
                a.ptag().users.add(this);
            }
            attributes = a;
            return VipReturn.SUCCESS;
        } finally {
            nic.lock.unlock();
        }
    }

    /**
     * VipDestroyVi: only Idle with both queues empty (§9.3.2). A VipConnectPeerRequest still
     * waiting for its peer is cancelled (its outcome is INVALID_PARAMETER, its thread ends).
     */
    VipReturn destroy() {
        nic.lock.lock();
        try {
            if (destroyed) {
                return VipReturn.INVALID_PARAMETER;
            }
            if (state != VipViState.IDLE || !send.ring.isEmpty() || !recv.ring.isEmpty()) {
                return VipReturn.ERROR_RESOURCE;
            }
            release();
            return VipReturn.SUCCESS;
        } finally {
            nic.lock.unlock();
        }
    }

    /** VipCloseNic: disconnects (cancelling any connection attempt) and destroys, whatever the state. */
    void forceDestroy() {
        PeerAttempt pa = peerConnect;
        if (pa != null) {
            pa.cancel(VipReturn.INVALID_PARAMETER);
        }
        EventChannel cancelled;
        nic.lock.lock();
        try {
            cancelled = cancelAttempt(VipReturn.INVALID_PARAMETER);
        } finally {
            nic.lock.unlock();
        }
        closeQuietly(cancelled);
        if (state != VipViState.IDLE) {
            disconnect();
        }
        nic.lock.lock();
        try {
            // an attempt another thread started after the disconnect: cancelled too
            cancelled = cancelAttempt(VipReturn.INVALID_PARAMETER);
            if (!destroyed) {
                release();
            }
        } finally {
            nic.lock.unlock();
        }
        closeQuietly(cancelled);
    }

    /** Frees everything of the VI. Under the lock. */
    private void release() {
        destroyed = true;
        PeerAttempt pa = peerConnect;
        if (pa != null) {
            pa.cancel(VipReturn.INVALID_PARAMETER);
        }
        // no connection attempt is in progress: the VI is Idle (VipDestroyVi), or VipCloseNic cancelled it
        nic.viByQpn.remove(qp.qpNum());
        qp.close();
        send.close();
        recv.close();
        sendWr.close();
        recvWr.close();
        for (VipCq c : new VipCq[]{sendCq, recvCq}) {
            if (c != null) {
                c.attachedQueues--;
                c.attachedDepth -= nic.queueDepth;
                c.removeEntriesOf(this);
            }
        }
        attributes.ptag().users.remove(this);
        nic.vis.remove(this);
    }

    /** VipDestroyVi. @throws VipException unless it returns VIP_SUCCESS */
    @Override
    public void close() {
        Vipl.check(Vipl.destroyVi(this), "VipDestroyVi");
    }

    @Override
    public String toString() {
        return "VipVi[" + nic.name() + ", " + state + (destroyed ? ", destroyed]" : "]");
    }
}
