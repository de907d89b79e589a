package dev.verbs4j.verbs;

import dev.verbs4j.bindings.ibv_ah_attr;
import dev.verbs4j.bindings.ibv_global_route;

import java.lang.foreign.MemorySegment;

/**
 * Where packets go ({@code struct ibv_ah_attr}): for a connected QP's RTR transition and for UD
 * address handles. On RoCE a GRH is required: {@code gid} non-null, {@code sgidIndex} the local
 * GID to send from. Immutable value; owns no native memory.
 *
 * @param port         local port number (from 1)
 * @param dlid         destination LID (0 on RoCE)
 * @param serviceLevel service level
 * @param gid          destination GID, or null for no GRH (InfiniBand within a subnet)
 * @param sgidIndex    index of the source GID
 * @param hopLimit     GRH hop limit
 * @param trafficClass GRH traffic class
 * @param flowLabel    GRH flow label
 */
public record AddressVector(int port, int dlid, int serviceLevel, Gid gid, int sgidIndex, int hopLimit,
                            int trafficClass, int flowLabel) {

    /** A RoCE / global destination: GRH to {@code gid} from local GID {@code sgidIndex}, hop limit 1. */
    public static AddressVector global(int port, Gid gid, int sgidIndex) {
        return new AddressVector(port, 0, 0, gid, sgidIndex, 1, 0, 0);
    }

    /** An InfiniBand destination in the local subnet. */
    public static AddressVector local(int port, int dlid) {
        return new AddressVector(port, dlid, 0, null, 0, 0, 0, 0);
    }

    void writeTo(MemorySegment ah) {
        ibv_ah_attr.dlid(ah, (short) dlid);
        ibv_ah_attr.sl(ah, (byte) serviceLevel);
        ibv_ah_attr.src_path_bits(ah, (byte) 0);
        ibv_ah_attr.port_num(ah, (byte) port);
        ibv_ah_attr.is_global(ah, (byte) (gid != null ? 1 : 0));
        if (gid != null) {
            MemorySegment grh = ibv_ah_attr.grh(ah);
            ibv_global_route.dgid(grh).copyFrom(MemorySegment.ofArray(gid.raw()));
            ibv_global_route.sgid_index(grh, (byte) sgidIndex);
            ibv_global_route.hop_limit(grh, (byte) hopLimit);
            ibv_global_route.traffic_class(grh, (byte) trafficClass);
            ibv_global_route.flow_label(grh, flowLabel);
        }
    }
}
