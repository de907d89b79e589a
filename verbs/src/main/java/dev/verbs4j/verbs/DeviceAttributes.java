package dev.verbs4j.verbs;

import dev.verbs4j.bindings.ibv_cq_moderation_caps;
import dev.verbs4j.bindings.ibv_device_attr;
import dev.verbs4j.bindings.ibv_device_attr_ex;
import dev.verbs4j.bindings.ibv_odp_caps;
import dev.verbs4j.bindings.ibv_packet_pacing_caps;
import dev.verbs4j.bindings.ibv_rss_caps;
import dev.verbs4j.bindings.ibv_tm_caps;
import dev.verbs4j.bindings.ibv_tso_caps;

import java.lang.foreign.MemorySegment;

/**
 * The attributes of a device ({@code struct ibv_device_attr_ex}, from {@code
 * ibv_query_device_ex()}; the extended part is zero when the provider only answers {@code
 * ibv_query_device()}). A snapshot on the Java heap: owns no native memory.
 */
public final class DeviceAttributes {

    private final MemorySegment ex;
    private final MemorySegment attr;
    private final int numCompVectors;

    DeviceAttributes(MemorySegment snapshot, int numCompVectors) {
        this.ex = snapshot;
        this.attr = ibv_device_attr_ex.orig_attr(snapshot);
        this.numCompVectors = numCompVectors;
    }

    /** Firmware version string (may be empty). */
    public String firmwareVersion() {
        return ibv_device_attr.fw_ver(attr).getString(0);
    }

    /** Node GUID in host byte order. */
    public long nodeGuid() {
        return Long.reverseBytes(ibv_device_attr.node_guid(attr));
    }

    /** System image GUID in host byte order. */
    public long sysImageGuid() {
        return Long.reverseBytes(ibv_device_attr.sys_image_guid(attr));
    }

    /** Largest contiguous block that can be registered. */
    public long maxMrSize() {
        return ibv_device_attr.max_mr_size(attr);
    }

    /** Supported memory shift sizes. */
    public long pageSizeCap() {
        return ibv_device_attr.page_size_cap(attr);
    }

    /** Vendor ID (IEEE OUI). */
    public int vendorId() {
        return ibv_device_attr.vendor_id(attr);
    }

    /** Vendor supplied part ID. */
    public int vendorPartId() {
        return ibv_device_attr.vendor_part_id(attr);
    }

    /** Hardware version. */
    public int hardwareVersion() {
        return ibv_device_attr.hw_ver(attr);
    }

    /** Maximum number of QPs. */
    public int maxQp() {
        return ibv_device_attr.max_qp(attr);
    }

    /** Maximum outstanding work requests on any queue. */
    public int maxQpWr() {
        return ibv_device_attr.max_qp_wr(attr);
    }

    /** {@code IBV_DEVICE_*} capability bits. */
    public int deviceCapFlags() {
        return ibv_device_attr.device_cap_flags(attr);
    }

    /** Maximum scatter/gather entries per work request for non-RD QPs. */
    public int maxSge() {
        return ibv_device_attr.max_sge(attr);
    }

    /** Maximum scatter/gather entries per work request for RD QPs. */
    public int maxSgeRd() {
        return ibv_device_attr.max_sge_rd(attr);
    }

    /** Maximum number of CQs. */
    public int maxCq() {
        return ibv_device_attr.max_cq(attr);
    }

    /** Maximum entries per CQ. */
    public int maxCqe() {
        return ibv_device_attr.max_cqe(attr);
    }

    /** Maximum number of memory regions. */
    public int maxMr() {
        return ibv_device_attr.max_mr(attr);
    }

    /** Maximum number of protection domains. */
    public int maxPd() {
        return ibv_device_attr.max_pd(attr);
    }

    /** Maximum outstanding RDMA read and atomic operations a QP can be the target of. */
    public int maxQpRdAtom() {
        return ibv_device_attr.max_qp_rd_atom(attr);
    }

    /** Maximum outstanding RDMA read and atomic operations an EE context can be the target of. */
    public int maxEeRdAtom() {
        return ibv_device_attr.max_ee_rd_atom(attr);
    }

    /** Maximum resources for incoming RDMA reads and atomics. */
    public int maxResRdAtom() {
        return ibv_device_attr.max_res_rd_atom(attr);
    }

    /** Maximum outstanding RDMA read and atomic operations a QP can initiate. */
    public int maxQpInitRdAtom() {
        return ibv_device_attr.max_qp_init_rd_atom(attr);
    }

    /** Maximum outstanding RDMA read and atomic operations an EE context can initiate. */
    public int maxEeInitRdAtom() {
        return ibv_device_attr.max_ee_init_rd_atom(attr);
    }

    /** Atomicity guarantee of atomic operations. */
    public AtomicCapability atomicCapability() {
        return AtomicCapability.of(atomicCapabilityCode());
    }

    /** Atomicity guarantee as the C value. */
    public int atomicCapabilityCode() {
        return ibv_device_attr.atomic_cap(attr);
    }

    /** Maximum number of EE contexts. */
    public int maxEe() {
        return ibv_device_attr.max_ee(attr);
    }

    /** Maximum number of reliable datagram domains. */
    public int maxRdd() {
        return ibv_device_attr.max_rdd(attr);
    }

    /** Maximum number of memory windows. */
    public int maxMw() {
        return ibv_device_attr.max_mw(attr);
    }

    /** Maximum raw IPv6 datagram QPs. */
    public int maxRawIpv6Qp() {
        return ibv_device_attr.max_raw_ipv6_qp(attr);
    }

    /** Maximum raw Ethertype datagram QPs. */
    public int maxRawEthyQp() {
        return ibv_device_attr.max_raw_ethy_qp(attr);
    }

    /** Maximum multicast groups. */
    public int maxMcastGrp() {
        return ibv_device_attr.max_mcast_grp(attr);
    }

    /** Maximum QPs per multicast group. */
    public int maxMcastQpAttach() {
        return ibv_device_attr.max_mcast_qp_attach(attr);
    }

    /** Maximum QPs attached to multicast groups in total. */
    public int maxTotalMcastQpAttach() {
        return ibv_device_attr.max_total_mcast_qp_attach(attr);
    }

    /** Maximum number of address handles. */
    public int maxAh() {
        return ibv_device_attr.max_ah(attr);
    }

    /** Maximum number of fast memory regions. */
    public int maxFmr() {
        return ibv_device_attr.max_fmr(attr);
    }

    /** Maximum remaps per FMR before an unmap. */
    public int maxMapPerFmr() {
        return ibv_device_attr.max_map_per_fmr(attr);
    }

    /** Maximum number of shared receive queues. */
    public int maxSrq() {
        return ibv_device_attr.max_srq(attr);
    }

    /** Maximum work requests per SRQ. */
    public int maxSrqWr() {
        return ibv_device_attr.max_srq_wr(attr);
    }

    /** Maximum scatter entries per SRQ work request. */
    public int maxSrqSge() {
        return ibv_device_attr.max_srq_sge(attr);
    }

    /** Maximum number of partitions. */
    public int maxPkeys() {
        return Short.toUnsignedInt(ibv_device_attr.max_pkeys(attr));
    }

    /** Local CA ack delay. */
    public int localCaAckDelay() {
        return Byte.toUnsignedInt(ibv_device_attr.local_ca_ack_delay(attr));
    }

    /** Number of physical ports. */
    public int physPortCount() {
        return Byte.toUnsignedInt(ibv_device_attr.phys_port_cnt(attr));
    }

    /** Completion vectors of the context the attributes were read from. */
    public int numCompVectors() {
        return numCompVectors;
    }

    /** On-demand paging: {@code IBV_ODP_SUPPORT*} general capability bits. */
    public long odpGeneralCaps() {
        return ibv_odp_caps.general_caps(ibv_device_attr_ex.odp_caps(ex));
    }

    /** On-demand paging: {@code IBV_ODP_SUPPORT_*} bits for RC. */
    public int odpRcCaps() {
        return ibv_odp_caps.per_transport_caps.rc_odp_caps(odpPerTransport());
    }

    /** On-demand paging: {@code IBV_ODP_SUPPORT_*} bits for UC. */
    public int odpUcCaps() {
        return ibv_odp_caps.per_transport_caps.uc_odp_caps(odpPerTransport());
    }

    /** On-demand paging: {@code IBV_ODP_SUPPORT_*} bits for UD. */
    public int odpUdCaps() {
        return ibv_odp_caps.per_transport_caps.ud_odp_caps(odpPerTransport());
    }

    /** On-demand paging: {@code IBV_ODP_SUPPORT_*} bits for XRC. */
    public int odpXrcCaps() {
        return ibv_device_attr_ex.xrc_odp_caps(ex);
    }

    private MemorySegment odpPerTransport() {
        return ibv_odp_caps.per_transport_caps(ibv_device_attr_ex.odp_caps(ex));
    }

    /** Mask of the valid bits of completion timestamps (0: not supported). */
    public long completionTimestampMask() {
        return ibv_device_attr_ex.completion_timestamp_mask(ex);
    }

    /** Frequency of the HCA core clock in kHz (0: not supported). */
    public long hcaCoreClock() {
        return ibv_device_attr_ex.hca_core_clock(ex);
    }

    /** Extended {@code IBV_DEVICE_*} capability bits. */
    public long deviceCapFlagsEx() {
        return ibv_device_attr_ex.device_cap_flags_ex(ex);
    }

    /** TCP segmentation offload: maximum size (0: none). */
    public int maxTso() {
        return ibv_tso_caps.max_tso(ibv_device_attr_ex.tso_caps(ex));
    }

    /** TCP segmentation offload: bit set of supported QP types. */
    public int tsoSupportedQpTypes() {
        return ibv_tso_caps.supported_qpts(ibv_device_attr_ex.tso_caps(ex));
    }

    /** Receive side scaling: maximum indirection tables. */
    public int rssMaxIndirectionTables() {
        return ibv_rss_caps.max_rwq_indirection_tables(ibv_device_attr_ex.rss_caps(ex));
    }

    /** Receive side scaling: maximum indirection table size. */
    public int rssMaxIndirectionTableSize() {
        return ibv_rss_caps.max_rwq_indirection_table_size(ibv_device_attr_ex.rss_caps(ex));
    }

    /** Receive side scaling: supported hash functions. */
    public int rssHashFunctions() {
        return Byte.toUnsignedInt(ibv_rss_caps.rx_hash_function(ibv_device_attr_ex.rss_caps(ex)));
    }

    /** Receive side scaling: supported hash fields. */
    public long rssHashFieldsMask() {
        return ibv_rss_caps.rx_hash_fields_mask(ibv_device_attr_ex.rss_caps(ex));
    }

    /** Receive side scaling: bit set of supported QP types. */
    public int rssSupportedQpTypes() {
        return ibv_rss_caps.supported_qpts(ibv_device_attr_ex.rss_caps(ex));
    }

    /** Maximum work queues of type RQ. */
    public int maxWqTypeRq() {
        return ibv_device_attr_ex.max_wq_type_rq(ex);
    }

    /** Packet pacing: minimum rate limit in kbps. */
    public int qpRateLimitMin() {
        return ibv_packet_pacing_caps.qp_rate_limit_min(ibv_device_attr_ex.packet_pacing_caps(ex));
    }

    /** Packet pacing: maximum rate limit in kbps. */
    public int qpRateLimitMax() {
        return ibv_packet_pacing_caps.qp_rate_limit_max(ibv_device_attr_ex.packet_pacing_caps(ex));
    }

    /** Packet pacing: bit set of supported QP types. */
    public int packetPacingSupportedQpTypes() {
        return ibv_packet_pacing_caps.supported_qpts(ibv_device_attr_ex.packet_pacing_caps(ex));
    }

    /** {@code IBV_RAW_PACKET_CAP_*} bits. */
    public int rawPacketCaps() {
        return ibv_device_attr_ex.raw_packet_caps(ex);
    }

    /** Tag matching: maximum rendezvous header size. */
    public int tmMaxRndvHdrSize() {
        return ibv_tm_caps.max_rndv_hdr_size(ibv_device_attr_ex.tm_caps(ex));
    }

    /** Tag matching: maximum number of tags (0: not supported). */
    public int tmMaxNumTags() {
        return ibv_tm_caps.max_num_tags(ibv_device_attr_ex.tm_caps(ex));
    }

    /** Tag matching: {@code IBV_TM_CAP_*} bits. */
    public int tmFlags() {
        return ibv_tm_caps.flags(ibv_device_attr_ex.tm_caps(ex));
    }

    /** Tag matching: maximum outstanding list operations. */
    public int tmMaxOps() {
        return ibv_tm_caps.max_ops(ibv_device_attr_ex.tm_caps(ex));
    }

    /** Tag matching: maximum scatter entries of a tagged buffer. */
    public int tmMaxSge() {
        return ibv_tm_caps.max_sge(ibv_device_attr_ex.tm_caps(ex));
    }

    /** CQ moderation: maximum completion count. */
    public int cqModerationMaxCount() {
        return Short.toUnsignedInt(ibv_cq_moderation_caps.max_cq_count(ibv_device_attr_ex.cq_mod_caps(ex)));
    }

    /** CQ moderation: maximum period in microseconds. */
    public int cqModerationMaxPeriod() {
        return Short.toUnsignedInt(ibv_cq_moderation_caps.max_cq_period(ibv_device_attr_ex.cq_mod_caps(ex)));
    }

    /** Device memory available for allocation, in bytes. */
    public long maxDmSize() {
        return ibv_device_attr_ex.max_dm_size(ex);
    }

    /** Number of physical ports as the extended query reports it (above 255). */
    public int physPortCountEx() {
        return ibv_device_attr_ex.phys_port_cnt_ex(ex);
    }
}
