package dev.verbs4j.verbs;

import dev.verbs4j.bindings.ibv_port_attr;

import java.lang.foreign.MemorySegment;

/**
 * The attributes of a port ({@code struct ibv_port_attr}, the full structure the provider's
 * {@code query_port} fills). A snapshot on the Java heap: owns no native memory.
 */
public final class PortAttributes {

    private final int port;
    private final MemorySegment attr;

    PortAttributes(int port, MemorySegment snapshot) {
        this.port = port;
        this.attr = snapshot;
    }

    /** The port number these attributes describe (from 1). */
    public int port() {
        return port;
    }

    /** Logical port state. */
    public PortState state() {
        return PortState.of(stateCode());
    }

    /** Logical port state as the C value. */
    public int stateCode() {
        return ibv_port_attr.state(attr);
    }

    /** Largest MTU the port supports. */
    public Mtu maxMtu() {
        return Mtu.of(maxMtuCode());
    }

    /** Largest MTU as the C value. */
    public int maxMtuCode() {
        return ibv_port_attr.max_mtu(attr);
    }

    /** MTU in use. */
    public Mtu activeMtu() {
        return Mtu.of(activeMtuCode());
    }

    /** MTU in use as the C value. */
    public int activeMtuCode() {
        return ibv_port_attr.active_mtu(attr);
    }

    /** Length of the GID table. */
    public int gidTableLength() {
        return ibv_port_attr.gid_tbl_len(attr);
    }

    /** {@code IBV_PORT_*} capability bits. */
    public int portCapFlags() {
        return ibv_port_attr.port_cap_flags(attr);
    }

    /** Second set of capability bits ({@code IBV_PORT_*2}). */
    public int portCapFlags2() {
        return Short.toUnsignedInt(ibv_port_attr.port_cap_flags2(attr));
    }

    /** Largest message size. */
    public long maxMessageSize() {
        return Integer.toUnsignedLong(ibv_port_attr.max_msg_sz(attr));
    }

    /** Bad P_Key counter. */
    public int badPkeyCounter() {
        return ibv_port_attr.bad_pkey_cntr(attr);
    }

    /** Q_Key violation counter. */
    public int qkeyViolationCounter() {
        return ibv_port_attr.qkey_viol_cntr(attr);
    }

    /** Length of the partition table. */
    public int pkeyTableLength() {
        return Short.toUnsignedInt(ibv_port_attr.pkey_tbl_len(attr));
    }

    /** Base LID of the port (0 on RoCE). */
    public int lid() {
        return Short.toUnsignedInt(ibv_port_attr.lid(attr));
    }

    /** LID of the subnet manager. */
    public int smLid() {
        return Short.toUnsignedInt(ibv_port_attr.sm_lid(attr));
    }

    /** LID mask control. */
    public int lmc() {
        return Byte.toUnsignedInt(ibv_port_attr.lmc(attr));
    }

    /** Maximum number of virtual lanes (encoded as in the spec: 1, 2, 3, 4, 5). */
    public int maxVlNum() {
        return Byte.toUnsignedInt(ibv_port_attr.max_vl_num(attr));
    }

    /** Service level of the subnet manager. */
    public int smSl() {
        return Byte.toUnsignedInt(ibv_port_attr.sm_sl(attr));
    }

    /** Subnet propagation delay. */
    public int subnetTimeout() {
        return Byte.toUnsignedInt(ibv_port_attr.subnet_timeout(attr));
    }

    /** Type of initialization the subnet manager performed. */
    public int initTypeReply() {
        return Byte.toUnsignedInt(ibv_port_attr.init_type_reply(attr));
    }

    /** Active link width (encoded: 1, 2, 4, 8, 16 for 1x, 4x, 8x, 12x, 2x). */
    public int activeWidth() {
        return Byte.toUnsignedInt(ibv_port_attr.active_width(attr));
    }

    /** Active link speed (encoded as in {@code ibv_port_attr.active_speed}). */
    public int activeSpeed() {
        return Byte.toUnsignedInt(ibv_port_attr.active_speed(attr));
    }

    /** Physical port state (1 sleep … 5 link up). */
    public int physState() {
        return Byte.toUnsignedInt(ibv_port_attr.phys_state(attr));
    }

    /** Link layer under the port. */
    public LinkLayer linkLayer() {
        return LinkLayer.of(linkLayerCode());
    }

    /** Link layer as the C value. */
    public int linkLayerCode() {
        return Byte.toUnsignedInt(ibv_port_attr.link_layer(attr));
    }

    /** {@code IBV_QPF_*} flags. */
    public int flags() {
        return Byte.toUnsignedInt(ibv_port_attr.flags(attr));
    }
}
