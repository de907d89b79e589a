package dev.verbs4j.perf.tools;

import dev.verbs4j.perf.tools.OptionSpec.Action;
import dev.verbs4j.perf.tools.OptionSpec.Argument;
import dev.verbs4j.perf.tools.OptionSpec.Tools;
import dev.verbs4j.perf.tools.PerfOptions.AtomicType;
import dev.verbs4j.perf.tools.PerfOptions.Kind;
import dev.verbs4j.perf.tools.PerfOptions.Output;
import dev.verbs4j.perf.tools.PerfOptions.RateLimitType;
import dev.verbs4j.perf.tools.PerfOptions.RateUnits;
import dev.verbs4j.perf.tools.PerfOptions.Verb;
import dev.verbs4j.tools.Getopt;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;

import static dev.verbs4j.perf.tools.OptionValues.isInteger;
import static dev.verbs4j.perf.tools.OptionValues.number;
import static dev.verbs4j.perf.tools.OptionValues.parseDouble;
import static dev.verbs4j.perf.tools.OptionValues.range;
import static dev.verbs4j.perf.tools.OptionValues.refuse;
import static dev.verbs4j.perf.tools.OptionValues.refuseQuietly;
import static dev.verbs4j.perf.tools.OptionValues.udpPort;

/**
 * perftest 4.5's options as a table of {@link OptionSpec}s, in its order of long options (which
 * getopt_long keeps when it lists the candidates of an ambiguous abbreviation), with its spellings:
 * {@code comm_rdma_cm} (its help says {@code --com_rdma_cm}) and {@code report-histogrm}, and
 * {@code source_ip} twice (the later one wins). Long-only options get codes from {@code U+0101} on.
 */
final class OptionTable {

    private static final Tools NOT_READ_OR_ATOMIC = Tools.onlyAfterValue(o -> o.verb != Verb.READ && o.verb != Verb.ATOMIC,
            " Inline feature not available on READ/Atomic verbs");
    private static final Tools NOT_WRITE = Tools.only(o -> o.verb != Verb.WRITE, " Events feature not available on WRITE verb");
    private static final Tools LAT_ONLY = Tools.only(o -> o.kind == Kind.LAT, " Available only on Latency tests");

    /** The rows, in perftest's order of long options. */
    static final List<OptionSpec> ROWS = codes(List.of(
            value('p', "port", (o, a, out, err) -> number(a, "Port", err, v -> o.tcpPort = v)),
            value('d', "ib-dev", set(o -> a -> o.deviceName = a)),
            value('i', "ib-port", (o, a, out, err) -> number(a, "IB Port", "uint8_t", err, v -> o.ibPort = v & 0xff,
                    () -> o.ibPort >= 1, "IB Port can't be less than 1")),
            value('m', "mtu", (o, a, out, err) -> number(a, "MTU", err, v -> o.mtu = v)),
            value('s', "size", OptionTable::size),
            value('n', "iters", (o, a, out, err) -> {
                o.itersGiven = true;
                return range(a, "Iteration num", PerfOptions.MIN_ITER, PerfOptions.MAX_ITER, err, v -> o.iters = v);
            }),
            value('t', "tx-depth", (o, a, out, err) -> {
                o.txDepthGiven = true;
                return range(a, "Tx depth", 1, 15000, err, v -> o.txDepth = v);
            }),
            value('u', "qp-timeout", (o, a, out, err) -> number(a, "QP Timeout", "uint8_t", err, v -> o.qpTimeout = v & 0xff)),
            value('S', "sl", (o, a, out, err) -> number(a, "Service Level", "uint8_t", err, v -> o.sl = v & 0xff,
                    () -> o.sl <= 15, " Only 15 Service levels")),
            value('x', "gid-index", (o, a, out, err) -> {
                o.gidGiven = true;
                if (!isInteger(a)) {
                    return refuse(err, " Gid index argument " + a + " should be uint8_t");
                }
                return range(a, "Gid index", 0, 64, err, v -> o.gidIndex = v);
            }),
            flag('a', "all", o -> o.all = true),
            flag('F', "CPU-freq", o -> o.cpuFreq = true),
            value('c', "connection", OptionTable::connection),
            value('q', "qp", Tools.only(o -> o.kind == Kind.BW, " Multiple QPs only available on bw tests"), (o, a, out, err) -> range(a, "num of Qps", 1, 16384, err, v -> o.numQps = v)),
            flag('e', "events", NOT_WRITE, o -> o.events = true),
            value('X', "vector", NOT_WRITE, (o, a, out, err) -> {
                o.eqNumGiven = true;
                return range(a, "EQN", 0, 2048, err, v -> o.eqNum = v);
            }),
            value('I', "inline_size", NOT_READ_OR_ATOMIC,
                    (o, a, out, err) -> range(a, "Max inline", 0, 912, err, v -> o.inlineSize = v)),
            value('o', "outs", Tools.onlyAfterValue(o -> o.verb == Verb.READ || o.verb == Verb.ATOMIC,
                    " Setting Outstanding reads only available on READ verb"),
                    (o, a, out, err) -> number(a, "Outstanding Reads", "int", err, v -> o.outReads = v)),
            flag('g', "mcg", Tools.only(o -> o.verb == Verb.SEND, " MultiCast feature only available on SEND verb"),
                    o -> o.useMcg = true),
            flag('z', "comm_rdma_cm", o -> o.comRdmaCm = true),
            flag('R', "rdma_cm", o -> o.rdmaCm = true),
            value('T', "tos", (o, a, out, err) -> range(a, "TOS", 0, 255, err, v -> o.tos = v)),
            value('L', "hop_limit", (o, a, out, err) -> range(a, "Hop Limit", 0, 255, err, v -> o.hopLimit = v)),
            new OptionSpec('h', "help", Argument.NONE, Tools.ALL, (o, a, out, err) -> {
                Usage.print(o, out);
                o.quietExit = true;
                return PerfOptions.HELP_EXIT;
            }),
            value('M', "MGID", set(o -> a -> o.mgid = a)),
            value('r', "rx-depth", Tools.onlyAfterValue(o -> o.verb == Verb.SEND || o.rxDepth <= 1,
                    " On RDMA verbs rx depth can be only 1"),
                    (o, a, out, err) -> range(a, " Rx depth", 1, 16384, err, v -> o.rxDepth = v)),
            flag('b', "bidirectional", Tools.only(o -> o.kind == Kind.BW, " Bidirectional is only available in BW test"),
                    o -> o.duplex = true),
            value('Q', "cq-mod", (o, a, out, err) -> {
                o.cqModGiven = true;
                return range(a, "CQ moderation", 1, 1024, err, v -> o.cqMod = v);
            }),
            flag('N', "noPeak", Tools.only(o -> o.kind == Kind.BW, " NoPeak only valid for BW tests"), o -> o.noPeak = true),
            new OptionSpec('V', "version", Argument.NONE, Tools.ALL, (o, a, out, err) -> {
                out.print("Version: " + PerfOptions.VERSION + "\n");
                o.quietExit = true;
                return PerfOptions.HELP_EXIT;
            }),
            flag('C', "report-cycles", LAT_ONLY, o -> o.reportCycles = true),
            flag('H', "report-histogrm", LAT_ONLY, o -> o.histogram = true),
            // perftest prints the unsorted samples; -H is a separate, sorted dump
            flag('U', "report-unsorted", Tools.only(o -> o.kind == Kind.LAT, " is Available only on Latency tests"),
                    o -> o.unsorted = true),
            value('A', "atomic_type", Tools.only(o -> o.verb == Verb.ATOMIC, " You are not running the atomic_lat/bw test!\n"
                    + " To change the atomic action type, you must run one of the atomic tests"), (o, a, out, err) -> choice(a, Map.of("CMP_AND_SWAP", AtomicType.CMP_AND_SWAP,
                    "FETCH_AND_ADD", AtomicType.FETCH_AND_ADD), v -> o.atomicType = v,
                    // perftest exits right there, without the parser's closing line
                    () -> refuseQuietly(o, err, " Invalid Atomic type! please choose from {CMP_AND_SWAP,FETCH_AND_ADD}"))),
            flag('O', "dualport", o -> {
                o.ibPort = 1;
                o.dualport = true;
            }),
            value('l', "post_list", (o, a, out, err) -> number(a, "Send Post List size", err, v -> o.postList = v)),
            value('D', "duration", (o, a, out, err) -> number(a, "Duration period", "int", err, v -> o.duration = v,
                    () -> o.duration > 0, " Duration period must be positive")),
            value('f', "margin", (o, a, out, err) -> number(a, "Margin", "int", err, v -> o.margin = v,
                    () -> o.margin >= 0, " Margin must be non-negative")),
            // the raw Ethernet options: perftest takes them in every tool and uses them in its raw_ethernet tools only
            value('B', "source_mac", OptionTable::mac),
            value('E', "dest_mac", OptionTable::mac),
            value('J', "dest_ip", RawEthernet.IGNORED),
            value('j', "source_ip", RawEthernet.IGNORED),
            value('K', "dest_port", (o, a, out, err) -> udpPort(a, "Server Port", err)),
            value('k', "source_port", (o, a, out, err) -> udpPort(a, "Client Port", err)),
            value("ethertype", RawEthernet.IGNORED),
            value('w', "limit_bw", set(o -> a -> o.limitBw = parseDouble(a))),
            value('y', "limit_msgrate", set(o -> a -> o.limitMsgRate = parseDouble(a))),
            flag('Z', "server", RawEthernet.NO_EFFECT),
            flag('P', "client", RawEthernet.NO_EFFECT),
            flag('v', "mac_fwd", RawEthernet.NO_EFFECT),
            flag("use_rss", RawEthernet.NO_EFFECT),
            value('W', "report-counters", (o, a, out, err) -> {
                if (a.isEmpty()) {
                    return refuse(err, "Failed to parse the performance counter list");
                }
                o.counters = a;
                return null;
            }),
            value("force-link", OptionTable::forceLink),
            value("remote_mac", OptionTable::mac),
            value("local_mac", OptionTable::mac),
            value("remote_ip", RawEthernet.IGNORED),
            value("local_ip", RawEthernet.IGNORED),
            value("remote_port", (o, a, out, err) -> udpPort(a, "remote port", err)),
            value("local_port", (o, a, out, err) -> udpPort(a, "local port", err)),
            flag("run_infinitely", o -> o.runInfinitely = true),
            flag("report_gbits", o -> o.reportGbits = true),
            flag("use-srq", o -> o.useSrq = true),
            flag("report-both", o -> o.reportBoth = true),
            flag("reversed", o -> o.reversed = true),
            value("pkey_index", (o, a, out, err) -> number(a, "Pkey index", err, v -> o.pkeyIndex = v)),
            value("inline_recv", (o, a, out, err) -> number(a, "Inline Receive size", err, v -> o.inlineRecv = v)),
            flag("tcp", RawEthernet.NO_EFFECT),
            value("burst_size", (o, a, out, err) -> number(a, "Burst size", "int", err, v -> o.burstSize = v,
                    () -> o.burstSize >= 0, " Burst size must be non-negative")),
            value("typical_pkt_size", (o, a, out, err) -> range(a, "Typical pkt size", 0, 0xFFFF, err,
                    v -> o.typicalPktSize = v)),
            value("rate_limit", OptionTable::rateLimit),
            value("rate_limit_type", (o, a, out, err) -> {
                o.rateLimitTypeGiven = true;
                return choice(a, Map.of("SW", RateLimitType.SW, "HW", RateLimitType.HW, "PP", RateLimitType.PP),
                        v -> o.rateLimitType = v, () -> refuse(err, " Invalid rate limit type flag. Please use HW, SW or PP."));
            }),
            value("rate_units", (o, a, out, err) -> choice(a, Map.of("M", RateUnits.MEGA_BYTE_PS, "g", RateUnits.GIGA_BIT_PS,
                    "p", RateUnits.PACKET_PS), v -> o.rateUnits = v,
                    () -> refuse(err, " Invalid rate limit units. Please use M,g or p"))),
            value("output", (o, a, out, err) -> choice(a, Map.of("bandwidth", Output.BANDWIDTH, "message_rate",
                    Output.MESSAGE_RATE, "latency", Output.LATENCY), v -> o.output = v, () -> refuse(err,
                    " Invalid verbosity level output flag. Please use bandwidth, latency, message_rate"))),
            flag("cpu_util", o -> o.cpuUtil = true),
            flag("out_json", o -> o.outJson = true),
            value("out_json_file", set(o -> a -> o.outJsonFile = a)), // only the name: --out_json turns the file on
            value("latency_gap", (o, a, out, err) -> number(a, "Latency gap time", "int", err, v -> o.latencyGap = v,
                    () -> o.latencyGap >= 0, " Latency gap time must be non-negative")),
            value("flow_label", (o, a, out, err) -> number(a, "flow label", "int", err, v -> o.flowLabel = v,
                    () -> o.flowLabel >= 0, " flow label must be non-negative")),
            value("retry_count", (o, a, out, err) -> number(a, "Retry Count", "int", err, v -> o.retryCount = v,
                    () -> o.retryCount >= 0, " Retry Count must be non-negative")),
            flag("dont_xchg_versions", o -> o.dontXchgVersions = true),
            value("mmap", set(o -> a -> o.mmapFile = a)),
            value("mmap-offset", (o, a, out, err) -> {
                if (!isInteger(a)) {
                    return refuse(err, " mmap offset argument " + a + " should be unsigned long");
                }
                o.mmapOffset = Getopt.strtoll(a);
                return null;
            }),
            flag("ipv6", o -> o.ipv6 = true),
            flag("raw_ipv6", RawEthernet.NO_EFFECT),
            flag("report-per-port", o -> o.reportPerPort = true),
            flag("odp", o -> o.odp = true),
            flag("use_hugepages", o -> o.useHugepages = true),
            flag("use_old_post_send", o -> o.useOldPostSend = true),
            flag("promiscuous", RawEthernet.NO_EFFECT),
            flag("sniffer", RawEthernet.NO_EFFECT),
            flag("raw_mcast", RawEthernet.NO_EFFECT),
            flag("mr_per_qp", o -> o.mrPerQp = true),
            value("dlid", (o, a, out, err) -> number(a, "dlid", "uint16_t", err, v -> o.dlid = v & 0xffff)),
            value("tclass", (o, a, out, err) -> number(a, "traffic class", "uint16_t", err, v -> o.trafficClass = v & 0xffff)),
            value("wait_destroy", (o, a, out, err) -> {
                if (!isInteger(a)) {
                    return refuse(err, " wait_destroy argument " + a + " should be uint32_t");
                }
                o.waitDestroy = Getopt.strtoll(a) & 0xffffffffL;
                return null;
            }),
            value("flows", (o, a, out, err) -> RawEthernet.positive(a, "flows",
                    "Invalid flows value. Please set a positive number", err)),
            value("flows_burst", (o, a, out, err) -> RawEthernet.positive(a, "flows burst",
                    "Invalid burst flow value. Please set a positive number", err)),
            value("reply_every", (o, a, out, err) -> number(a, "reply_every", "uint32_t", err, v -> { })),
            flag("perform_warm_up", o -> o.performWarmUp = true),
            flag("vlan_en", RawEthernet.NO_EFFECT),
            value("vlan_pcp", (o, a, out, err) -> {
                Integer bad = number(a, "VLAN PCP", "uint32_t", err, v -> { });
                if (bad == null && (Getopt.strtoll(a) & 0xffffffffL) > 8) {
                    return refuse(err, " VLAN PCP should be between 0 and 8");
                }
                return bad;
            }),
            value("recv_post_list", (o, a, out, err) -> number(a, "Receive Post List size", err, v -> o.recvPostList = v)),
            flag("aes_xts", o -> o.hardware.aesXts = true),
            flag("encrypt_on_tx", o -> o.hardware.encryptOnTx = true),
            flag("sig_before", o -> o.hardware.sigBefore = true),
            value("aes_block_size", (o, a, out, err) -> number(a, "aes_block_size", "uint16_t", err,
                    v -> o.hardware.aesBlockSize = v & 0xffff)),
            value("kek_path", set(o -> a -> o.hardware.kekPath = a)),
            value("credentials_path", set(o -> a -> o.hardware.credentialsPath = a)),
            value("data_enc_keys_number", (o, a, out, err) -> number(a, "data_enc_keys_number", "uint16_t", err,
                    v -> o.hardware.dataEncKeysNumber = v & 0xffff)),
            value("data_enc_key_app_path", set(o -> a -> o.hardware.dataEncKeyAppPath = a)),
            value("log_dci_streams", (o, a, out, err) -> number(a, "log_dci_streams", "uint16_t", err,
                    v -> o.hardware.logDciStreams = v & 0xffff)),
            value("log_active_dci_streams", (o, a, out, err) -> {
                o.hardware.logActiveDciStreamsGiven = true;
                return number(a, "log_active_dci_streams", "uint16_t", err, v -> o.hardware.logActiveDciStreams = v & 0xffff);
            }),
            flag("disable_pcie_relaxed", o -> o.disablePcieRelaxed = true),
            value("source_ip", set(o -> a -> o.sourceIp = a))));

    /** The rows by the code getopt returns. */
    private static final Map<Integer, OptionSpec> BY_CODE = byCode();

    /** The getopt option string: every row's code, with {@code ':'} where it takes a value. */
    static final String SHORT = String.join("", ROWS.stream().map(OptionSpec::shortOption).toList());

    /** The getopt long options ({@code name:c}), in the table's order. */
    static final String[] LONG = ROWS.stream().map(OptionSpec::longOption).toArray(String[]::new);

    private OptionTable() {
    }

    /** The row of a code getopt returned, or null (getopt's {@code '?'}). */
    static OptionSpec row(int code) {
        return BY_CODE.get(code);
    }

    private static Map<Integer, OptionSpec> byCode() {
        Map<Integer, OptionSpec> m = new HashMap<>();
        for (OptionSpec r : ROWS) {
            m.put((int) r.code(), r);
        }
        return m;
    }

    /** The rows with the long-only ones (code 0) numbered from {@code U+0101} in the table's order. */
    private static List<OptionSpec> codes(List<OptionSpec> rows) {
        List<OptionSpec> coded = new ArrayList<>();
        char next = '\u0101';
        for (OptionSpec r : rows) {
            coded.add(r.code() != 0 ? r : new OptionSpec(next++, r.longName(), r.argument(), r.tools(), r.action()));
        }
        return List.copyOf(coded);
    }

    private static OptionSpec flag(char code, String name, Consumer<PerfOptions> set) {
        return flag(code, name, Tools.ALL, set);
    }

    private static OptionSpec flag(String name, Consumer<PerfOptions> set) {
        return flag((char) 0, name, Tools.ALL, set);
    }

    private static OptionSpec flag(char code, String name, Tools tools, Consumer<PerfOptions> set) {
        return new OptionSpec(code, name, Argument.NONE, tools, (o, a, out, err) -> {
            set.accept(o);
            return null;
        });
    }

    private static OptionSpec value(char code, String name, Action action) {
        return value(code, name, Tools.ALL, action);
    }

    private static OptionSpec value(String name, Action action) {
        return value((char) 0, name, Tools.ALL, action);
    }

    private static OptionSpec value(char code, String name, Tools tools, Action action) {
        return new OptionSpec(code, name, Argument.REQUIRED, tools, action);
    }

    /** An option whose value is stored as typed. */
    private static Action set(Function<PerfOptions, Consumer<String>> field) {
        return (o, a, out, err) -> {
            field.apply(o).accept(a);
            return null;
        };
    }

    /** -s: bytes, or with a K or M suffix; strtol reads a long, so a size beyond 2^31 - 1 is refused, not cut. */
    private static Integer size(PerfOptions o, String a, PrintStream out, PrintStream err) {
        long factor = 1;
        String t = a;
        if (t.endsWith("K")) {
            factor = 1024;
            t = t.substring(0, t.length() - 1);
        } else if (t.endsWith("M")) {
            factor = 1024 * 1024;
            t = t.substring(0, t.length() - 1);
        }
        long v = Getopt.strtoll(t);
        o.size = Math.abs(v) > Long.MAX_VALUE / factor ? -1 : v * factor;
        o.sizeGiven = true;
        if (o.size < 1 || o.size > 0x7fffffffL) {
            return refuse(err, " Message Size should be between 1 and " + 0x7fffffffL);
        }
        return null;
    }

    private static Integer connection(PerfOptions o, String a, PrintStream out, PrintStream err) {
        o.connection = a;
        if (!List.of("RC", "UC", "UD", "XRC", "DC", "SRD").contains(a)) {
            return refuseQuietly(o, err, " Invalid Connection type. Please choose from {RC,UC,UD,XRC,DC,SRD}");
        }
        if (a.equals("UC") && (o.verb == Verb.READ || o.verb == Verb.ATOMIC)) {
            return refuseQuietly(o, err, " UC connection not possible in READ/ATOMIC verbs");
        }
        if (a.equals("UD") && o.verb != Verb.SEND) {
            return refuseQuietly(o, err, " UD connection only possible in SEND verb");
        }
        if (!a.equals("RC") && !a.equals("UC") && !a.equals("UD")) {
            // XRC, DC and SRD need an XRC domain, mlx5 or EFA: not in verbs4j's tools
            return refuse(err, " " + o.program + ": connection type " + a + " is not supported by verbs4j (RC, UC and UD are)");
        }
        return null;
    }

    /** A value out of {@code choices} (spelled exactly), set by {@code set}; else what {@code refusal} returns. */
    private static <T> Integer choice(String a, Map<String, T> choices, Consumer<T> set, Supplier<Integer> refusal) {
        T v = choices.get(a);
        if (v == null) {
            return refusal.get();
        }
        set.accept(v);
        return null;
    }

    private static Integer mac(PerfOptions o, String a, PrintStream out, PrintStream err) {
        return a.length() != 17 ? refuse(err, "invalid MAC length") : null;
    }

    /** perftest compares the first 2 / 8 characters, ignoring case. */
    private static Integer forceLink(PerfOptions o, String a, PrintStream out, PrintStream err) {
        if (a.regionMatches(true, 0, "IB", 0, 2)) {
            o.forceLink = "IB";
        } else if (a.regionMatches(true, 0, "Ethernet", 0, 8)) {
            o.forceLink = "Ethernet";
        } else {
            return refuse(err, "Invalid link layer value should be IB or ETHERNET.");
        }
        return null;
    }

    private static Integer rateLimit(PerfOptions o, String a, PrintStream out, PrintStream err) {
        o.rateLimitText = a;
        o.rateLimit = parseDouble(a);
        if (o.rateLimit <= 0) {
            return refuse(err, " Rate limit must be non-negative");
        }
        if (o.rateLimitType == RateLimitType.DISABLED) {
            o.rateLimitType = RateLimitType.HW;
        }
        return null;
    }

    /** The raw Ethernet options: perftest takes them in every tool and uses them in its raw_ethernet tools only. */
    private static final class RawEthernet {

        static final Action IGNORED = (o, a, out, err) -> null;
        static final Consumer<PerfOptions> NO_EFFECT = o -> { };

        /** --flows and --flows_burst: a uint16_t, and not 0. */
        static Integer positive(String a, String name, String refusal, PrintStream err) {
            Integer bad = number(a, name, "uint16_t", err, v -> { });
            if (bad != null) {
                return bad;
            }
            if ((Getopt.strtol(a) & 0xffff) == 0) {
                return refuse(err, refusal);
            }
            return null;
        }
    }
}
