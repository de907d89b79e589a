package dev.verbs4j.tools.verbs;

import dev.verbs4j.tools.Getopt;
import dev.verbs4j.verbs.Context;
import dev.verbs4j.verbs.Device;
import dev.verbs4j.verbs.DeviceAttributes;
import dev.verbs4j.verbs.Errno;
import dev.verbs4j.verbs.Gid;
import dev.verbs4j.verbs.GidEntry;
import dev.verbs4j.verbs.GidType;
import dev.verbs4j.verbs.LinkLayer;
import dev.verbs4j.verbs.PortAttributes;
import dev.verbs4j.verbs.TransportType;
import dev.verbs4j.verbs.VerbsException;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * {@code devinfo}: the Java twin of rdma-core's {@code ibv_devinfo}, with the same options, fields,
 * layout and exit codes. Opens each device it prints and closes it again.
 */
public final class DevInfo {

    // values of rdma-core's <infiniband/verbs.h> (part of the verbs ABI)
    private static final int IBV_QPT_RAW_PACKET = 8;
    private static final int IBV_QPT_UD = 4;
    private static final int IBV_TM_CAP_RC = 1;

    private final PrintStream out;
    private final PrintStream err;
    private boolean verbose;

    private DevInfo(PrintStream out, PrintStream err) {
        this.out = out;
        this.err = err;
    }

    /** Runs the tool, writing to {@code out} and {@code err}; returns what {@code ibv_devinfo} returns. */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        return new DevInfo(out, err).execute(args);
    }

    private int execute(String[] args) {
        String devName = null;
        int ibPort = 0;
        Getopt opts = new Getopt("devinfo", args, "d:i:lv", "ib-dev:d", "ib-port:i", "list:l", "verbose:v");
        for (int c; (c = opts.next(err)) != -1; ) {
            switch (c) {
                case 'd' -> devName = opts.argument();
                case 'i' -> {
                    ibPort = Getopt.strtol(opts.argument());
                    if (ibPort <= 0) {
                        usage();
                        return 1;
                    }
                }
                case 'v' -> verbose = true;
                case 'l' -> {
                    return list();
                }
                default -> {
                    usage();
                    return -1;
                }
            }
        }
        List<Device> devices = devices();
        if (devices == null) {
            return -1;
        }
        int ret = 0;
        if (devName != null) {
            String wanted = devName;
            Optional<Device> device = devices.stream().filter(d -> d.name().equals(wanted)).findFirst();
            if (device.isEmpty()) {
                err.print("IB device '" + devName + "' wasn't found\n");
                return -1;
            }
            ret |= printHcaCap(device.get(), ibPort);
        } else {
            if (devices.isEmpty()) {
                err.print("No IB devices found\n");
                return -1;
            }
            for (Device d : devices) {
                ret |= printHcaCap(d, ibPort);
            }
        }
        return ret;
    }

    private int list() {
        List<Device> devices = devices();
        if (devices == null) {
            return -1;
        }
        out.print(devices.size() + " HCA" + (devices.size() != 1 ? "s" : "") + " found:\n");
        for (Device d : devices) {
            out.print("\t" + d.name() + "\n");
        }
        out.print("\n");
        return 0;
    }

    /** The devices, or null when the list failed (as printed to the error stream). */
    private List<Device> devices() {
        try {
            return Device.list();
        } catch (VerbsException e) {
            err.print("Failed to get IB devices list: " + Errno.message(e.errno()) + "\n");
            return null;
        }
    }

    private void usage() {
        out.print("Usage: devinfo             print the ca attributes\n\n"
                + "Options:\n"
                + "  -d, --ib-dev=<dev>     use IB device <dev> (default first device found)\n"
                + "  -i, --ib-port=<port>   use port <port> of IB device (default all ports)\n"
                + "  -l, --list             print only the IB devices names\n"
                + "  -v, --verbose          print all the attributes of the IB device(s)\n");
    }

    private int printHcaCap(Device device, int ibPort) {
        Context ctx;
        try {
            ctx = device.open();
        } catch (VerbsException e) {
            err.print("Failed to open device\n");
            return 1;
        }
        try (ctx) {
            DeviceAttributes a;
            try {
                a = ctx.queryDevice();
            } catch (VerbsException e) {
                err.print("Failed to query device props\n");
                return 2;
            }
            if (ibPort != 0 && ibPort > a.physPortCount()) {
                err.print("Invalid port requested for device\n");
                return 4;
            }
            printDevice(device, ctx, a);
            for (int port = 1; port <= a.physPortCount(); port++) {
                if (ibPort != 0 && port != ibPort) {
                    continue;
                }
                PortAttributes p;
                try {
                    p = ctx.queryPort(port);
                } catch (VerbsException e) {
                    err.print("Failed to query port " + port + " props\n");
                    return e.errno();
                }
                int rc = printPort(device, ctx, p);
                if (rc != 0) {
                    return rc;
                }
            }
            return 0;
        } catch (VerbsException e) {
            err.print("Failed to close device");
            return 3;
        }
    }

    private void printDevice(Device device, Context ctx, DeviceAttributes a) {
        out.print("hca_id:\t" + device.name() + "\n");
        out.printf("\ttransport:\t\t\t%s (%d)\n", transportLabel(device.transportType()), device.transportType().code());
        if (!a.firmwareVersion().isEmpty()) {
            out.print("\tfw_ver:\t\t\t\t" + a.firmwareVersion() + "\n");
        }
        out.print("\tnode_guid:\t\t\t" + guid(a.nodeGuid()) + "\n");
        out.print("\tsys_image_guid:\t\t\t" + guid(a.sysImageGuid()) + "\n");
        out.printf("\tvendor_id:\t\t\t0x%04x\n", a.vendorId());
        out.printf("\tvendor_part_id:\t\t\t%d\n", a.vendorPartId());
        out.printf("\thw_ver:\t\t\t\t0x%X\n", a.hardwareVersion());
        String boardId = device.boardId();
        if (!boardId.isEmpty()) {
            out.print("\tboard_id:\t\t\t" + boardId + "\n");
        }
        out.printf("\tphys_port_cnt:\t\t\t%d\n", a.physPortCount());
        if (!verbose) {
            return;
        }
        out.printf("\tmax_mr_size:\t\t\t0x%x\n", a.maxMrSize());
        out.printf("\tpage_size_cap:\t\t\t0x%x\n", a.pageSizeCap());
        out.printf("\tmax_qp:\t\t\t\t%d\n", a.maxQp());
        out.printf("\tmax_qp_wr:\t\t\t%d\n", a.maxQpWr());
        out.printf("\tdevice_cap_flags:\t\t0x%08x\n", a.deviceCapFlags());
        printFlags(Integer.toUnsignedLong(a.deviceCapFlags()), 0xffffffffL, Flags.DEVICE_CAP_FLAGS, "%X");
        out.printf("\tmax_sge:\t\t\t%d\n", a.maxSge());
        out.printf("\tmax_sge_rd:\t\t\t%d\n", a.maxSgeRd());
        out.printf("\tmax_cq:\t\t\t\t%d\n", a.maxCq());
        out.printf("\tmax_cqe:\t\t\t%d\n", a.maxCqe());
        out.printf("\tmax_mr:\t\t\t\t%d\n", a.maxMr());
        out.printf("\tmax_pd:\t\t\t\t%d\n", a.maxPd());
        out.printf("\tmax_qp_rd_atom:\t\t\t%d\n", a.maxQpRdAtom());
        out.printf("\tmax_ee_rd_atom:\t\t\t%d\n", a.maxEeRdAtom());
        out.printf("\tmax_res_rd_atom:\t\t%d\n", a.maxResRdAtom());
        out.printf("\tmax_qp_init_rd_atom:\t\t%d\n", a.maxQpInitRdAtom());
        out.printf("\tmax_ee_init_rd_atom:\t\t%d\n", a.maxEeInitRdAtom());
        String atomic = a.atomicCapability() == dev.verbs4j.verbs.AtomicCapability.UNKNOWN
                ? "invalid atomic capability" : a.atomicCapability().label();
        out.printf("\tatomic_cap:\t\t\t%s (%d)\n", atomic, a.atomicCapabilityCode());
        out.printf("\tmax_ee:\t\t\t\t%d\n", a.maxEe());
        out.printf("\tmax_rdd:\t\t\t%d\n", a.maxRdd());
        out.printf("\tmax_mw:\t\t\t\t%d\n", a.maxMw());
        out.printf("\tmax_raw_ipv6_qp:\t\t%d\n", a.maxRawIpv6Qp());
        out.printf("\tmax_raw_ethy_qp:\t\t%d\n", a.maxRawEthyQp());
        out.printf("\tmax_mcast_grp:\t\t\t%d\n", a.maxMcastGrp());
        out.printf("\tmax_mcast_qp_attach:\t\t%d\n", a.maxMcastQpAttach());
        out.printf("\tmax_total_mcast_qp_attach:\t%d\n", a.maxTotalMcastQpAttach());
        out.printf("\tmax_ah:\t\t\t\t%d\n", a.maxAh());
        out.printf("\tmax_fmr:\t\t\t%d\n", a.maxFmr());
        if (a.maxFmr() != 0) {
            out.printf("\tmax_map_per_fmr:\t\t%d\n", a.maxMapPerFmr());
        }
        out.printf("\tmax_srq:\t\t\t%d\n", a.maxSrq());
        if (a.maxSrq() != 0) {
            out.printf("\tmax_srq_wr:\t\t\t%d\n", a.maxSrqWr());
            out.printf("\tmax_srq_sge:\t\t\t%d\n", a.maxSrqSge());
        }
        out.printf("\tmax_pkeys:\t\t\t%d\n", a.maxPkeys());
        out.printf("\tlocal_ca_ack_delay:\t\t%d\n", a.localCaAckDelay());

        out.print("\tgeneral_odp_caps:\n");
        printFlags(a.odpGeneralCaps(), -1L, Flags.ODP_GENERAL, "%X");
        out.print("\trc_odp_caps:\n");
        printOdpTransport(a.odpRcCaps());
        out.print("\tuc_odp_caps:\n");
        printOdpTransport(a.odpUcCaps());
        out.print("\tud_odp_caps:\n");
        printOdpTransport(a.odpUdCaps());
        out.print("\txrc_odp_caps:\n");
        printOdpTransport(a.odpXrcCaps());
        if (a.completionTimestampMask() != 0) {
            out.printf("\tcompletion timestamp_mask:\t\t\t0x%016x\n", a.completionTimestampMask());
        } else {
            out.print("\tcompletion_timestamp_mask not supported\n");
        }
        if (a.hcaCoreClock() != 0) {
            out.print("\thca_core_clock:\t\t\t" + Long.toUnsignedString(a.hcaCoreClock()) + "kHZ\n");
        } else {
            out.print("\tcore clock not supported\n");
        }
        if (a.rawPacketCaps() != 0) {
            out.print("\traw packet caps:\n");
            for (Flag f : Flags.RAW_PACKET_CAPS) {
                if ((a.rawPacketCaps() & f.bit) != 0) {
                    out.print("\t\t\t\t\t" + f.name + "\n");
                }
            }
        }
        out.printf("\tdevice_cap_flags_ex:\t\t0x%X\n", a.deviceCapFlagsEx());
        printFlags(a.deviceCapFlagsEx() & 0xffffffff00000000L, -1L, Flags.DEVICE_CAP_FLAGS_EX, "%X");
        out.print("\ttso_caps:\n");
        out.printf("\t\tmax_tso:\t\t\t%d\n", a.maxTso());
        if (a.maxTso() != 0) {
            printSupportedQp(a.tsoSupportedQpTypes());
        }
        out.print("\trss_caps:\n");
        out.print("\t\tmax_rwq_indirection_tables:\t\t\t" + Integer.toUnsignedString(a.rssMaxIndirectionTables()) + "\n");
        out.print("\t\tmax_rwq_indirection_table_size:\t\t\t"
                + Integer.toUnsignedString(a.rssMaxIndirectionTableSize()) + "\n");
        out.printf("\t\trx_hash_function:\t\t\t\t0x%x\n", a.rssHashFunctions());
        out.printf("\t\trx_hash_fields_mask:\t\t\t\t0x%X\n", a.rssHashFieldsMask());
        if (a.rssSupportedQpTypes() != 0) {
            printSupportedQp(a.rssSupportedQpTypes());
        }
        out.print("\tmax_wq_type_rq:\t\t\t" + Integer.toUnsignedString(a.maxWqTypeRq()) + "\n");
        out.print("\tpacket_pacing_caps:\n");
        out.print("\t\tqp_rate_limit_min:\t" + Integer.toUnsignedString(a.qpRateLimitMin()) + "kbps\n");
        out.print("\t\tqp_rate_limit_max:\t" + Integer.toUnsignedString(a.qpRateLimitMax()) + "kbps\n");
        if (a.qpRateLimitMax() != 0) {
            printSupportedQp(a.packetPacingSupportedQpTypes());
        }
        if (a.tmMaxNumTags() != 0) {
            out.print("\tmax_rndv_hdr_size:\t\t" + Integer.toUnsignedString(a.tmMaxRndvHdrSize()) + "\n");
            out.print("\tmax_num_tags:\t\t\t" + Integer.toUnsignedString(a.tmMaxNumTags()) + "\n");
            out.print("\tmax_ops:\t\t\t" + Integer.toUnsignedString(a.tmMaxOps()) + "\n");
            out.print("\tmax_sge:\t\t\t" + Integer.toUnsignedString(a.tmMaxSge()) + "\n");
            out.print("\tflags:\n");
            if ((a.tmFlags() & IBV_TM_CAP_RC) != 0) {
                out.print("\t\t\t\t\tIBV_TM_CAP_RC\n");
            }
        } else {
            out.print("\ttag matching not supported\n");
        }
        if (a.cqModerationMaxCount() != 0 && a.cqModerationMaxPeriod() != 0) {
            out.print("\n\tcq moderation caps:\n");
            out.print("\t\tmax_cq_count:\t" + a.cqModerationMaxCount() + "\n");
            out.print("\t\tmax_cq_period:\t" + a.cqModerationMaxPeriod() + " us\n\n");
        }
        if (a.maxDmSize() != 0) {
            out.print("\tmaximum available device memory:\t" + Long.toUnsignedString(a.maxDmSize()) + "Bytes\n\n");
        }
        out.printf("\tnum_comp_vectors:\t\t%d\n", ctx.numCompVectors());
    }

    private int printPort(Device device, Context ctx, PortAttributes p) {
        out.printf("\t\tport:\t%d\n", p.port());
        out.printf("\t\t\tstate:\t\t\t%s (%d)\n", portState(p.stateCode()), p.stateCode());
        out.printf("\t\t\tmax_mtu:\t\t%s (%d)\n", mtu(p.maxMtuCode()), p.maxMtuCode());
        out.printf("\t\t\tactive_mtu:\t\t%s (%d)\n", mtu(p.activeMtuCode()), p.activeMtuCode());
        out.printf("\t\t\tsm_lid:\t\t\t%d\n", p.smLid());
        out.printf("\t\t\tport_lid:\t\t%d\n", p.lid());
        out.printf("\t\t\tport_lmc:\t\t0x%02x\n", p.lmc());
        out.printf("\t\t\tlink_layer:\t\t%s\n", p.linkLayer() == LinkLayer.UNKNOWN ? "Unknown" : p.linkLayer().label());
        if (verbose) {
            out.printf("\t\t\tmax_msg_sz:\t\t0x%x\n", p.maxMessageSize());
            out.printf("\t\t\tport_cap_flags:\t\t0x%08x\n", p.portCapFlags());
            out.printf("\t\t\tport_cap_flags2:\t0x%04x\n", p.portCapFlags2());
            out.printf("\t\t\tmax_vl_num:\t\t%s (%d)\n", vl(p.maxVlNum()), p.maxVlNum());
            out.printf("\t\t\tbad_pkey_cntr:\t\t0x%x\n", p.badPkeyCounter());
            out.printf("\t\t\tqkey_viol_cntr:\t\t0x%x\n", p.qkeyViolationCounter());
            out.printf("\t\t\tsm_sl:\t\t\t%d\n", p.smSl());
            out.printf("\t\t\tpkey_tbl_len:\t\t%d\n", p.pkeyTableLength());
            out.printf("\t\t\tgid_tbl_len:\t\t%d\n", p.gidTableLength());
            out.printf("\t\t\tsubnet_timeout:\t\t%d\n", p.subnetTimeout());
            out.printf("\t\t\tinit_type_reply:\t%d\n", p.initTypeReply());
            out.printf("\t\t\tactive_width:\t\t%sX (%d)\n", width(p.activeWidth()), p.activeWidth());
            out.printf("\t\t\tactive_speed:\t\t%s (%d)\n", speed(p.activeSpeed()), p.activeSpeed());
            if (device.transportType() == TransportType.IB) {
                out.printf("\t\t\tphys_state:\t\t%s (%d)\n", physState(p.physState()), p.physState());
            }
            int rc = printGids(ctx, p);
            if (rc != 0) {
                return rc;
            }
        }
        out.print("\n");
        return 0;
    }

    private int printGids(Context ctx, PortAttributes p) {
        for (int i = 0; i < p.gidTableLength(); i++) {
            Gid gid;
            try {
                gid = ctx.queryGid(p.port(), i);
            } catch (VerbsException e) {
                err.printf("Failed to query gid to port %d, index %d\n", p.port(), i);
                return e.errno();
            }
            if (gid.interfaceId() == 0) {
                continue;   // ibv_devinfo skips entries whose interface id is zero
            }
            GidType type;
            try {
                type = ctx.queryGidEntry(p.port(), i).map(GidEntry::type).orElse(GidType.UNKNOWN);
            } catch (VerbsException e) {
                type = GidType.UNKNOWN;
            }
            String suffix = p.linkLayer() == LinkLayer.ETHERNET ? ", " + gidTypeLabel(type) : "";
            if (type == GidType.IB || type == GidType.ROCE_V1) {
                out.printf("\t\t\tGID[%3d]:\t\t%s%s\n", i, gid.toHexString(), suffix);
            } else if (type == GidType.ROCE_V2) {
                out.printf("\t\t\tGID[%3d]:\t\t%s%s\n", i, gid, suffix);
            }
        }
        return 0;
    }

    private void printOdpTransport(int caps) {
        if (caps == 0) {
            out.print("\t\t\t\t\tNO SUPPORT\n");
        } else {
            printFlags(Integer.toUnsignedLong(caps), 0xffffffffL, Flags.ODP_TRANSPORT, "%X");
        }
    }

    private void printSupportedQp(int qpts) {
        out.print("\t\tsupported_qp:\n");
        int known = (1 << IBV_QPT_RAW_PACKET) | (1 << IBV_QPT_UD);
        if ((qpts & (1 << IBV_QPT_RAW_PACKET)) != 0) {
            out.print("\t\t\t\t\tSUPPORT_RAW_PACKET\n");
        }
        if ((qpts & (1 << IBV_QPT_UD)) != 0) {
            out.print("\t\t\t\t\tSUPPORT_UD\n");
        }
        if ((qpts & ~known) != 0) {
            out.printf("\t\t\t\t\tUnknown flags: 0x%X\n", qpts & ~known);
        }
    }

    private void printFlags(long value, long width, Flag[] flags, String hexFormat) {
        long known = 0;
        for (Flag f : flags) {
            known |= f.bit;
            if ((value & f.bit) != 0) {
                out.print("\t\t\t\t\t" + f.name + "\n");
            }
        }
        long unknown = value & ~known & width;
        if (unknown != 0) {
            out.print("\t\t\t\t\tUnknown flags: 0x" + String.format(hexFormat, unknown) + "\n");
        }
    }

    private static String transportLabel(TransportType t) {
        return t == TransportType.UNKNOWN ? "invalid transport" : t.label();
    }

    private static String gidTypeLabel(GidType t) {
        return switch (t) {
            case IB, ROCE_V1 -> "RoCE v1";
            case ROCE_V2 -> "RoCE v2";
            default -> "Invalid gid type";
        };
    }

    private static String guid(long g) {
        return String.format("%04x:%04x:%04x:%04x", (g >>> 48) & 0xffff, (g >>> 32) & 0xffff, (g >>> 16) & 0xffff, g & 0xffff);
    }

    private static String mtu(int code) {
        return label(code, "invalid MTU", 1, "256", 2, "512", 3, "1024", 4, "2048", 5, "4096");
    }

    private static String width(int w) {
        return label(w, "invalid width", 1, "1", 2, "4", 4, "8", 8, "12", 16, "2");
    }

    private static String speed(int s) {
        return label(s, "invalid speed", 1, "2.5 Gbps", 2, "5.0 Gbps", 4, "10.0 Gbps", 8, "10.0 Gbps",
                16, "14.0 Gbps", 32, "25.0 Gbps", 64, "50.0 Gbps", 128, "100.0 Gbps");
    }

    private static String vl(int v) {
        return label(v, "invalid value", 1, "1", 2, "2", 3, "4", 4, "8", 5, "15");
    }

    private static String physState(int s) {
        return label(s, "invalid physical state", 1, "SLEEP", 2, "POLLING", 3, "DISABLED",
                4, "PORT_CONFIGURATION TRAINNING", 5, "LINK_UP", 6, "LINK_ERROR_RECOVERY", 7, "PHY TEST");
    }

    private static String portState(int s) {
        return label(s, "invalid state", 1, "PORT_DOWN", 2, "PORT_INIT", 3, "PORT_ARMED", 4, "PORT_ACTIVE");
    }

    /** The text ibv_devinfo prints for {@code code}, from pairs of (value, text). */
    private static String label(int code, String invalid, Object... pairs) {
        for (int i = 0; i < pairs.length; i += 2) {
            if ((Integer) pairs[i] == code) {
                return (String) pairs[i + 1];
            }
        }
        return invalid;
    }

    private record Flag(long bit, String name) {
    }

    /** Flag names, loaded only when verbose output needs them (after the library check). */
    private static final class Flags {
        // the names of the bits of rdma-core's <infiniband/verbs.h> this tool prints, by bit number
        private static final Flag[] DEVICE_CAP_FLAGS = byBit(0,
                "RESIZE_MAX_WR", "BAD_PKEY_CNTR", "BAD_QKEY_CNTR", "RAW_MULTI", "AUTO_PATH_MIG", "CHANGE_PHY_PORT",
                "UD_AV_PORT_ENFORCE", "CURR_QP_STATE_MOD", "SHUTDOWN_PORT", "INIT_TYPE", "PORT_ACTIVE_EVENT",
                "SYS_IMAGE_GUID", "RC_RNR_NAK_GEN", "SRQ_RESIZE", "N_NOTIFY_CQ", null, null, "MEM_WINDOW", "UD_IP_CSUM",
                null, "XRC", "MEM_MGT_EXTENSIONS", null, "MEM_WINDOW_TYPE_2A", "MEM_WINDOW_TYPE_2B", "RC_IP_CSUM",
                "RAW_IP_CSUM", null, null, "MANAGED_FLOW_STEERING");
        private static final Flag[] DEVICE_CAP_FLAGS_EX = byBit(34, "RAW_SCATTER_FCS", null, "PCI_WRITE_END_PADDING");
        private static final Flag[] ODP_GENERAL = byBit(0, "ODP_SUPPORT", "ODP_SUPPORT_IMPLICIT");
        private static final Flag[] ODP_TRANSPORT = byBit(0,
                "SUPPORT_SEND", "SUPPORT_RECV", "SUPPORT_WRITE", "SUPPORT_READ", "SUPPORT_ATOMIC", "SUPPORT_SRQ");
        private static final Flag[] RAW_PACKET_CAPS = byBit(0,
                "C-VLAN stripping offload", "Scatter FCS offload", "IP csum offload", "Delay drop");

        /** The flags named {@code names} for bits {@code firstBit} up, one bit each (a null name: no flag). */
        private static Flag[] byBit(int firstBit, String... names) {
            List<Flag> flags = new ArrayList<>();
            for (int i = 0; i < names.length; i++) {
                if (names[i] != null) {
                    flags.add(new Flag(1L << (firstBit + i), names[i]));
                }
            }
            return flags.toArray(Flag[]::new);
        }
    }
}
