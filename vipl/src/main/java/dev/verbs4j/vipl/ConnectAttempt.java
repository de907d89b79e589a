package dev.verbs4j.vipl;

import dev.verbs4j.rdmacm.CmEventType;
import dev.verbs4j.rdmacm.CmId;
import dev.verbs4j.rdmacm.EventChannel;
import dev.verbs4j.verbs.Closeables;
import dev.verbs4j.verbs.QpState;
import dev.verbs4j.verbs.QueuePairAttributes;

/**
 * A VipConnectRequest or VipConnectAccept in progress: the VI's side of the {@link CmConnector}'s
 * dance, Idle → Pending Connect → Connected, or back to Idle. The thread that runs it changes the
 * VI (its queue pair, its state) only under the NIC lock and only while the attempt is the VI's
 * own and not cancelled; so a race with VipDisconnect or VipCloseNic never touches a destroyed
 * queue pair. They cancel it ({@link #cancel}): they close its event channel, which ends the
 * attempt's waits, and the attempt returns {@link #code}, leaving the VI to them. The fields are
 * guarded by the NIC lock.
 */
final class ConnectAttempt implements ConnectSteps {

    private static final System.Logger LOG = System.getLogger("dev.verbs4j.vipl");

    private final ViStateMachine machine;
    private final VipVi vi;
    private final VipNic nic;
    private EventChannel channel;
    private boolean cancelled;
    private VipReturn code;

    /** Thrown inside an attempt that was cancelled; ends it with the code its canceller chose. */
    private static final class Cancelled extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Cancelled() {
            super(null, null, false, false);
        }
    }

    private ConnectAttempt(ViStateMachine machine) {
        this.machine = machine;
        this.vi = machine.vi;
        this.nic = vi.nic;
    }

    /** VipConnectRequest on a VI found Idle: Pending Connect while the connector runs. */
    static VipReturn request(ViStateMachine machine, VipNetAddress local, VipNetAddress remote, long timeoutMillis) {
        ConnectAttempt at = new ConnectAttempt(machine);
        at.nic.lock.lock();
        try {
            VipReturn refused = at.begin();
            if (refused != null) {
                return refused;
            }
        } finally {
            at.nic.lock.unlock();
        }
        return CmConnector.request(at, local, remote, timeoutMillis);
    }

    /** VipConnectAccept: the request's attributes must match the VI's; then the connector runs. */
    static VipReturn accept(ViStateMachine machine, VipConnHandle conn) {
        ConnectAttempt at = new ConnectAttempt(machine);
        VipVi vi = at.vi;
        at.nic.lock.lock();
        try {
            if (vi.destroyed || conn.consumed) {
                return VipReturn.INVALID_PARAMETER;
            }
            if (machine.state != VipViState.IDLE) {
                return VipReturn.INVALID_STATE;
            }
            VipViAttributes r = conn.remoteAttributes;
            VipViAttributes attributes = vi.attributes;
            if (r.reliabilityLevel() != attributes.reliabilityLevel()) {
                return VipReturn.INVALID_RELIABILITY_LEVEL;
            }
            if (r.maxTransferSize() != attributes.maxTransferSize()) {
                return VipReturn.INVALID_MTU;
            }
            if (r.qos() != attributes.qos()) {
                return VipReturn.INVALID_QOS;
            }
            at.begin();
            conn.consumed = true;
        } finally {
            at.nic.lock.unlock();
        }
        return CmConnector.accept(at, conn);
    }

    /**
     * Starts the attempt (under the lock), or returns why not: the VI destroyed or not Idle. The
     * VI is Pending Connect from now on.
     */
    private VipReturn begin() {
        if (vi.destroyed) {
            return VipReturn.INVALID_PARAMETER;
        }
        if (machine.state != VipViState.IDLE) {
            return VipReturn.INVALID_STATE;
        }
        machine.state = VipViState.CONNECT_PENDING;
        machine.attempt = this;
        return null;
    }

    /** Under the lock: throws {@link Cancelled} unless this is still the VI's attempt. */
    private void check() {
        if (cancelled || machine.attempt != this || vi.destroyed) {
            throw new Cancelled();
        }
    }

    /**
     * Under the lock, by VipDisconnect or VipCloseNic, which took the attempt from the VI: from
     * now on it returns {@code code}. Its event channel, for the canceller to close once it has
     * let go of the lock.
     */
    EventChannel cancel(VipReturn code) {
        cancelled = true;
        this.code = code;
        EventChannel ch = channel;
        channel = null;
        return ch;
    }

    @Override
    public String nicName() {
        return nic.name;
    }

    @Override
    public int rdmaDepth() {
        return nic.rdmaDepth;
    }

    /** The queue pair number to put in the connection parameters, read under the lock. */
    @Override
    public int qpNum() {
        nic.lock.lock();
        try {
            check();
            return vi.qp.qpNum();
        } finally {
            nic.lock.unlock();
        }
    }

    /** The VI's attributes as the connection message carries them, read under the lock. */
    @Override
    public VipViAttributes attributes() {
        nic.lock.lock();
        try {
            check();
            return vi.attributes;
        } finally {
            nic.lock.unlock();
        }
    }

    /** Gives the attempt its event channel, or closes the channel when the attempt was cancelled meanwhile. */
    @Override
    public void adopt(EventChannel ch) {
        nic.lock.lock();
        try {
            if (!cancelled && machine.attempt == this && !vi.destroyed) {
                channel = ch;
                return;
            }
        } finally {
            nic.lock.unlock();
        }
        ch.close();
        throw new Cancelled();
    }

    /** RDMA CM's attributes for {@code target}, as this VI's queue pair type takes them. */
    private QueuePairAttributes cmAttributes(CmId cmId, QpState target) {
        return cmId.initQueuePairAttributes(target).restrictTo(VipVi.qpType(vi.attributes));
    }

    /** RESET → INIT with RDMA CM's attributes and the VI's RDMA enables; then the receives waiting are handed over. */
    @Override
    public void toInit(CmId cmId) {
        step(() -> {
            QueuePairAttributes[] connected = new QueuePairAttributes[3];
            machine.connectedAttributes = connected;
            connected[0] = cmAttributes(cmId, QpState.INIT).accessFlags(vi.qpAccess());
            vi.qp.modify(connected[0]);
            vi.translation.submitWaitingReceives();
        });
    }

    /** INIT → RTR → RTS with RDMA CM's attributes for the connection, kept for re-arming an Unreliable VI. */
    @Override
    public void readyToSend(CmId cmId) {
        nic.lock.lock();
        try {
            check();
            QueuePairAttributes[] connected = machine.connectedAttributes;
            connected[1] = cmAttributes(cmId, QpState.RTR);
            vi.qp.modify(connected[1]);
            connected[2] = cmAttributes(cmId, QpState.RTS);
            vi.qp.modify(connected[2]);
        } finally {
            nic.lock.unlock();
        }
    }

    @Override
    public void connected(CmId cmId, EventChannel ch, VipViAttributes remote) {
        step(() -> {
            machine.attempt = null;
            channel = null;
            vi.translation.submitWaitingReceives();
            machine.id = cmId;
            machine.channel = ch;
            vi.remoteAttributes = remote;
            machine.state = VipViState.CONNECTED;
        });
    }

    /**
     * Runs {@code change} under the lock while this is still the VI's attempt, then delivers the
     * asynchronous errors it found (the receives it hands over may fail their checks).
     */
    private void step(Runnable change) {
        try {
            nic.lock.lock();
            try {
                check();
                change.run();
            } finally {
                nic.lock.unlock();
            }
        } finally {
            nic.flushReports();
        }
    }

    /**
     * Ends the attempt with {@code failure}: back to Idle (the queue pair to RESET, waiting
     * receives kept) and its channel closed; or, when it was cancelled, the code its canceller
     * chose, the VI left to the canceller.
     */
    @Override
    public VipReturn fail(VipReturn failure) {
        EventChannel ch;
        nic.lock.lock();
        try {
            if (cancelled || machine.attempt != this) {
                return code != null ? code : VipReturn.ERROR_RESOURCE;
            }
            machine.attempt = null;
            ch = channel;
            channel = null;
            if (!vi.destroyed) {
                try {
                    vi.qp.reset();
                } catch (RuntimeException ignored) {
                    // reset below by recreating on the next attempt is not needed on rxe
                }
                vi.recv.takeBackFromVerbs();
                vi.send.takeBackFromVerbs();
                machine.state = VipViState.IDLE;
            }
        } finally {
            nic.lock.unlock();
        }
        Closeables.closeLogged(LOG, ch);
        return failure;
    }

    @Override
    public boolean connectionEvent(EventChannel ch, CmEventType type) {
        return machine.connectionEvent(ch, type);
    }
}
