package dev.verbs4j.vipl;

import dev.verbs4j.rdmacm.CmEventType;
import dev.verbs4j.rdmacm.CmId;
import dev.verbs4j.rdmacm.EventChannel;

/**
 * What the connector asks of a VI while it connects it: one VipConnectRequest or VipConnectAccept
 * attempt. Each step takes the NIC lock and changes the VI only while the attempt is still the
 * VI's own; once a VipDisconnect or VipCloseNic cancelled it, a step throws, the connector ends
 * the attempt with {@link #fail}, and that returns the code the canceller chose.
 */
interface ConnectSteps {

    /** The name of the VI's NIC: the device the connection must go through. */
    String nicName();

    /** The RDMA Read depth to offer (initiator depth and responder resources). */
    int rdmaDepth();

    /** The VI's queue pair number, for the connection parameters. */
    int qpNum();

    /** The VI's attributes, as the connection message carries them. */
    VipViAttributes attributes();

    /** The attempt's event channel: closing it is how a canceller ends the attempt's waits. */
    void adopt(EventChannel channel);

    /** The queue pair RESET to INIT with RDMA CM's attributes; the receives waiting are handed over. */
    void toInit(CmId id);

    /** The queue pair INIT to RTR to RTS with RDMA CM's attributes. */
    void readyToSend(CmId id);

    /** The VI is Connected over {@code id}, whose events arrive on {@code channel}. */
    void connected(CmId id, EventChannel channel, VipViAttributes remote);

    /** Ends the attempt with {@code code}: the VI Idle again, or the canceller's code. */
    VipReturn fail(VipReturn code);

    /**
     * An event on the channel of an established connection ({@code type} null when none came in
     * a while); false once the watch should end (the VI disconnected, destroyed or in Error).
     */
    boolean connectionEvent(EventChannel channel, CmEventType type);
}
