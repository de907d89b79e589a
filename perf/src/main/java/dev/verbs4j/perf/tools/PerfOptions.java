package dev.verbs4j.perf.tools;

import dev.verbs4j.tools.Getopt;

import java.io.PrintStream;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * The command line of one perftest tool, parsed as perftest 4.5 parses it: the same option
 * letters and long names, the same range checks and dependency rules
 * ({@link OptionDependencies}), the same messages (on stderr) and exit statuses for wrong or
 * incompatible options. Pure value holder; no native resources.
 */
final class PerfOptions {

    /** The operation a tool measures. */
    enum Verb {
        SEND("Send"), WRITE("RDMA_Write"), READ("RDMA_Read"), ATOMIC("Atomic");

        /** The name in the header's title line. */
        final String title;

        Verb(String title) {
            this.title = title;
        }
    }

    /** Latency or bandwidth. */
    enum Kind { LAT, BW }

    /** The two atomic operations, named as on the command line. */
    enum AtomicType { CMP_AND_SWAP, FETCH_AND_ADD }

    /** Which single number {@code --output} prints instead of the tables. */
    enum Output { FULL, BANDWIDTH, MESSAGE_RATE, LATENCY }

    static final int DEFAULT_PORT = 18515;
    static final int MAX_SIZE = 8388608;
    static final int MIN_ITER = 5;
    static final int MAX_ITER = 100_000_000;
    static final String VERSION = "6.06";
    static final String DEFAULT_JSON_FILE = "perftest_out.json";

    /** Status of -h and -V (perftest's mains return failure for both). */
    static final int HELP_EXIT = 1;

    // Letters for long options without a short twin (never typed by users): perftest sets a flag
    // of its own for each, so that abbreviations shared by two of them are ambiguous.
    private static final char REPORT_GBITS = '\u0101';
    private static final char OUTPUT = '\u0102';
    private static final char OUT_JSON = '\u0103';
    private static final char SOURCE_IP = '\u0104';
    private static final char OUT_JSON_FILE = '\u0105';
    private static final char DONT_XCHG = '\u0106';
    private static final char RETRY_COUNT = '\u0107';
    private static final char ETHERTYPE = '\u0108';
    private static final char USE_RSS = '\u0109';
    private static final char FORCE_LINK = '\u010a';
    private static final char REMOTE_MAC = '\u010b';
    private static final char LOCAL_MAC = '\u010c';
    private static final char REMOTE_IP = '\u010d';
    private static final char LOCAL_IP = '\u010e';
    private static final char REMOTE_PORT = '\u010f';
    private static final char LOCAL_PORT = '\u0110';
    private static final char RUN_INFINITELY = '\u0111';
    private static final char USE_SRQ = '\u0112';
    private static final char REPORT_BOTH = '\u0113';
    private static final char REVERSED = '\u0114';
    private static final char PKEY_INDEX = '\u0115';
    private static final char INLINE_RECV = '\u0116';
    private static final char TCP = '\u0117';
    private static final char BURST_SIZE = '\u0118';
    private static final char TYPICAL_PKT_SIZE = '\u0119';
    private static final char RATE_LIMIT = '\u011a';
    private static final char RATE_LIMIT_TYPE = '\u011b';
    private static final char RATE_UNITS = '\u011c';
    private static final char CPU_UTIL = '\u011d';
    private static final char LATENCY_GAP = '\u011e';
    private static final char FLOW_LABEL = '\u011f';
    private static final char MMAP = '\u0120';
    private static final char MMAP_OFFSET = '\u0121';
    private static final char IPV6 = '\u0122';
    private static final char RAW_IPV6 = '\u0123';
    private static final char REPORT_PER_PORT = '\u0124';
    private static final char ODP = '\u0125';
    private static final char USE_HUGEPAGES = '\u0126';
    private static final char USE_OLD_POST_SEND = '\u0127';
    private static final char PROMISCUOUS = '\u0128';
    private static final char SNIFFER = '\u0129';
    private static final char RAW_MCAST = '\u012a';
    private static final char MR_PER_QP = '\u012b';
    private static final char DLID = '\u012c';
    private static final char TCLASS = '\u012d';
    private static final char WAIT_DESTROY = '\u012e';
    private static final char FLOWS = '\u012f';
    private static final char FLOWS_BURST = '\u0130';
    private static final char REPLY_EVERY = '\u0131';
    private static final char PERFORM_WARM_UP = '\u0132';
    private static final char VLAN_EN = '\u0133';
    private static final char VLAN_PCP = '\u0134';
    private static final char RECV_POST_LIST = '\u0135';
    private static final char AES_XTS = '\u0136';
    private static final char ENCRYPT_ON_TX = '\u0137';
    private static final char SIG_BEFORE = '\u0138';
    private static final char AES_BLOCK_SIZE = '\u0139';
    private static final char KEK_PATH = '\u013a';
    private static final char CREDENTIALS_PATH = '\u013b';
    private static final char DATA_ENC_KEYS_NUMBER = '\u013c';
    private static final char DATA_ENC_KEY_APP_PATH = '\u013d';
    private static final char LOG_DCI_STREAMS = '\u013e';
    private static final char LOG_ACTIVE_DCI_STREAMS = '\u013f';
    private static final char DISABLE_PCIE_RELAXED = '\u0140';

    /** perftest 4.5's getopt string, then the letters of the long-only options (with ':' where they take a value). */
    private static final String SHORT = "w:y:p:d:i:m:s:n:t:u:S:x:c:q:I:o:M:r:Q:A:l:D:f:B:T:L:E:J:j:K:k:X:W:aFegzRvhbNVCHUOZP"
            + REPORT_GBITS + OUTPUT + ":" + OUT_JSON + SOURCE_IP + ":" + OUT_JSON_FILE + ":" + DONT_XCHG
            + RETRY_COUNT + ":" + ETHERTYPE + ":" + USE_RSS + FORCE_LINK + ":" + REMOTE_MAC + ":" + LOCAL_MAC + ":"
            + REMOTE_IP + ":" + LOCAL_IP + ":" + REMOTE_PORT + ":" + LOCAL_PORT + ":" + RUN_INFINITELY + USE_SRQ
            + REPORT_BOTH + REVERSED + PKEY_INDEX + ":" + INLINE_RECV + ":" + TCP + BURST_SIZE + ":" + TYPICAL_PKT_SIZE
            + ":" + RATE_LIMIT + ":" + RATE_LIMIT_TYPE + ":" + RATE_UNITS + ":" + CPU_UTIL + LATENCY_GAP + ":"
            + FLOW_LABEL + ":" + MMAP + ":" + MMAP_OFFSET + ":" + IPV6 + RAW_IPV6 + REPORT_PER_PORT + ODP + USE_HUGEPAGES
            + USE_OLD_POST_SEND + PROMISCUOUS + SNIFFER + RAW_MCAST + MR_PER_QP + DLID + ":" + TCLASS + ":"
            + WAIT_DESTROY + ":" + FLOWS + ":" + FLOWS_BURST + ":" + REPLY_EVERY + ":" + PERFORM_WARM_UP + VLAN_EN
            + VLAN_PCP + ":" + RECV_POST_LIST + ":" + AES_XTS + ENCRYPT_ON_TX + SIG_BEFORE + AES_BLOCK_SIZE + ":"
            + KEK_PATH + ":" + CREDENTIALS_PATH + ":" + DATA_ENC_KEYS_NUMBER + ":" + DATA_ENC_KEY_APP_PATH + ":"
            + LOG_DCI_STREAMS + ":" + LOG_ACTIVE_DCI_STREAMS + ":" + DISABLE_PCIE_RELAXED;

    /**
     * perftest 4.5's long options in its order (which getopt_long keeps when it lists the
     * candidates of an ambiguous abbreviation), with its spellings: {@code comm_rdma_cm} (its help
     * says {@code --com_rdma_cm}) and {@code report-histogrm}.
     */
    private static final String[] LONG = {
        "port:p", "ib-dev:d", "ib-port:i", "mtu:m", "size:s", "iters:n", "tx-depth:t", "qp-timeout:u", "sl:S",
        "gid-index:x", "all:a", "CPU-freq:F", "connection:c", "qp:q", "events:e", "vector:X", "inline_size:I",
        "outs:o", "mcg:g", "comm_rdma_cm:z", "rdma_cm:R", "tos:T", "hop_limit:L", "help:h", "MGID:M", "rx-depth:r",
        "bidirectional:b", "cq-mod:Q", "noPeak:N", "version:V", "report-cycles:C", "report-histogrm:H",
        "report-unsorted:U", "atomic_type:A", "dualport:O", "post_list:l", "duration:D", "margin:f",
        "source_mac:B", "dest_mac:E", "dest_ip:J", "source_ip:j", "dest_port:K", "source_port:k",
        "ethertype:" + ETHERTYPE, "limit_bw:w", "limit_msgrate:y", "server:Z", "client:P", "mac_fwd:v",
        "use_rss:" + USE_RSS, "report-counters:W", "force-link:" + FORCE_LINK, "remote_mac:" + REMOTE_MAC,
        "local_mac:" + LOCAL_MAC, "remote_ip:" + REMOTE_IP, "local_ip:" + LOCAL_IP, "remote_port:" + REMOTE_PORT,
        "local_port:" + LOCAL_PORT, "run_infinitely:" + RUN_INFINITELY, "report_gbits:" + REPORT_GBITS,
        "use-srq:" + USE_SRQ, "report-both:" + REPORT_BOTH, "reversed:" + REVERSED, "pkey_index:" + PKEY_INDEX,
        "inline_recv:" + INLINE_RECV, "tcp:" + TCP, "burst_size:" + BURST_SIZE,
        "typical_pkt_size:" + TYPICAL_PKT_SIZE, "rate_limit:" + RATE_LIMIT, "rate_limit_type:" + RATE_LIMIT_TYPE,
        "rate_units:" + RATE_UNITS, "output:" + OUTPUT, "cpu_util:" + CPU_UTIL, "out_json:" + OUT_JSON,
        "out_json_file:" + OUT_JSON_FILE, "latency_gap:" + LATENCY_GAP, "flow_label:" + FLOW_LABEL,
        "retry_count:" + RETRY_COUNT, "dont_xchg_versions:" + DONT_XCHG, "mmap:" + MMAP,
        "mmap-offset:" + MMAP_OFFSET, "ipv6:" + IPV6, "raw_ipv6:" + RAW_IPV6, "report-per-port:" + REPORT_PER_PORT,
        "odp:" + ODP, "use_hugepages:" + USE_HUGEPAGES, "use_old_post_send:" + USE_OLD_POST_SEND,
        "promiscuous:" + PROMISCUOUS, "sniffer:" + SNIFFER, "raw_mcast:" + RAW_MCAST, "mr_per_qp:" + MR_PER_QP,
        "dlid:" + DLID, "tclass:" + TCLASS, "wait_destroy:" + WAIT_DESTROY, "flows:" + FLOWS,
        "flows_burst:" + FLOWS_BURST, "reply_every:" + REPLY_EVERY, "perform_warm_up:" + PERFORM_WARM_UP,
        "vlan_en:" + VLAN_EN, "vlan_pcp:" + VLAN_PCP, "recv_post_list:" + RECV_POST_LIST, "aes_xts:" + AES_XTS,
        "encrypt_on_tx:" + ENCRYPT_ON_TX, "sig_before:" + SIG_BEFORE, "aes_block_size:" + AES_BLOCK_SIZE,
        "kek_path:" + KEK_PATH, "credentials_path:" + CREDENTIALS_PATH,
        "data_enc_keys_number:" + DATA_ENC_KEYS_NUMBER, "data_enc_key_app_path:" + DATA_ENC_KEY_APP_PATH,
        "log_dci_streams:" + LOG_DCI_STREAMS, "log_active_dci_streams:" + LOG_ACTIVE_DCI_STREAMS,
        "disable_pcie_relaxed:" + DISABLE_PCIE_RELAXED, "source_ip:" + SOURCE_IP,
    };

    /** The software rate limiter's units ({@code --rate_units}). */
    enum RateUnits { MEGA_BYTE_PS, GIGA_BIT_PS, PACKET_PS }

    /** Who limits the rate ({@code --rate_limit_type}). */
    enum RateLimitType { DISABLED, SW, HW, PP }

    final String program;
    final Verb verb;
    final Kind kind;

    String deviceName;
    int ibPort = 1;
    int tcpPort = DEFAULT_PORT;
    int mtu;               // 0: the port's active MTU
    long size;
    boolean sizeGiven;
    int iters;
    boolean itersGiven;
    int txDepth;
    boolean txDepthGiven;
    int rxDepth;
    int qpTimeout = 14;
    int sl;
    int gidIndex = -1;
    boolean gidGiven;
    String connection = "RC";
    int numQps = 1;
    int inlineSize = -1;
    int outReads = -1;
    int cqMod = 100;
    boolean cqModGiven;
    AtomicType atomicType = AtomicType.FETCH_AND_ADD;
    int postList = 1;
    /** Seconds of duration mode (-D); 0: iterations. */
    int duration;
    /** Seconds left out at each end of the duration (-f); -1: a quarter of the duration. */
    int margin = -1;
    /** The completion vector of the -e queues (-X). */
    int eqNum;
    boolean eqNumGiven;
    int tos = -1;
    int hopLimit = 64;
    boolean all;
    boolean cpuFreq;
    boolean events;
    boolean rdmaCm;
    boolean duplex;
    boolean noPeak;
    boolean reportCycles;
    boolean histogram;
    boolean unsorted;
    boolean reportGbits;
    Output output = Output.FULL;
    boolean outJson;
    /** Where --out_json writes (perftest's default: in the working directory). */
    String outJsonFile = DEFAULT_JSON_FILE;
    String sourceIp;
    double limitBw;
    double limitMsgRate;
    int retryCount = 7;
    String serverName;
    // the options of perftest 4.5 beyond the basic ones (their defaults are perftest's)
    boolean useSrq;
    boolean mrPerQp;
    int pkeyIndex;
    boolean performWarmUp;
    int inlineRecv;
    int trafficClass;
    int flowLabel;
    /** Microseconds between latency iterations (--latency_gap). */
    int latencyGap;
    double rateLimit;
    RateLimitType rateLimitType = RateLimitType.DISABLED;
    RateUnits rateUnits = RateUnits.GIGA_BIT_PS;
    /** --rate_limit as typed (perftest looks the HW rate up by its text). */
    String rateLimitText;
    /** Whether --rate_limit_type was given (else a HW limit the QP refuses falls back to SW). */
    boolean rateLimitTypeGiven;
    int burstSize;
    int typicalPktSize;
    boolean cpuUtil;
    boolean useOldPostSend;
    int recvPostList = 1;
    /** Seconds to wait before the resources are freed (--wait_destroy). */
    long waitDestroy;
    boolean reportBoth;
    boolean reversed;
    boolean ipv6;
    /** -z: the control messages over RDMA CM, the test queue pairs connected by hand. */
    boolean comRdmaCm;
    boolean runInfinitely;
    boolean dontXchgVersions;
    boolean useHugepages;
    String mmapFile;
    long mmapOffset;
    /** The period of ib_send_bw's receive watchdog ({@link AliveCheck}), from its system property. */
    long checkAliveSeconds = 60;
    boolean odp;
    int dlid;
    boolean useMcg;
    String mgid;
    /** -W: the counter names to report the change of, or null. */
    String counters;
    boolean reportPerPort;
    boolean dualport;
    /** --force-link: "IB" or "Ethernet" (perftest's spellings), or null. */
    String forceLink;
    boolean disablePcieRelaxed;
    // mlx5 crypto and DC streams: parsed, and refused as perftest refuses them without the hardware
    boolean aesXts;
    boolean encryptOnTx;
    boolean sigBefore;
    int aesBlockSize = 512;
    int dataEncKeysNumber = 1;
    String kekPath;
    String credentialsPath;
    String dataEncKeyAppPath;
    int logDciStreams;
    int logActiveDciStreams;
    boolean logActiveDciStreamsGiven;

    /** Set when parsing ends without the parser's error line (-h, -V, an atomic size). */
    boolean quietExit;

    /** perftest's default receive depth of the SEND tests. */
    static final int DEFAULT_RX_SEND = 512;
    /** The receive depth perftest gives UC and UD SEND tests (at most the iterations). */
    static final int UC_MAX_RX = 16000;
    /** The largest inline message perftest allows on UD. */
    static final int MAX_INLINE_UD = 884;

    PerfOptions(String program, Verb verb, Kind kind) {
        this.program = program;
        this.verb = verb;
        this.kind = kind;
        this.size = verb == Verb.ATOMIC ? 8 : kind == Kind.LAT ? 2 : 65536;
        this.iters = verb == Verb.WRITE && kind == Kind.BW ? 5000 : 1000;
        this.txDepth = kind == Kind.LAT ? 1 : 128;
        this.rxDepth = verb == Verb.SEND ? DEFAULT_RX_SEND : 1;
    }

    /** Unreliable Connection (-c UC): SEND and WRITE without acknowledgements. */
    boolean isUc() {
        return connection.equals("UC");
    }

    /** Unreliable Datagram (-c UD): SEND only, at most one MTU, through an address handle. */
    boolean isUd() {
        return connection.equals("UD");
    }

    /**
     * Whether this side runs the test's client part (perftest's "machine"): the side given a host,
     * or with --reversed the other one. The control channel's roles always follow the host.
     */
    boolean isClient() {
        return (serverName != null) != reversed;
    }

    /** Whether this side posts work (the client, both sides of a latency test, both with -b). */
    boolean printsTxDepth() {
        return isClient() || duplex;
    }

    /** The peak is not measured: -N, the send_bw server, over 20000 iterations, -D. */
    boolean peakOff() {
        return noPeak || iters > 20000 || duration > 0 || (verb == Verb.SEND && !isClient() && !duplex);
    }

    /**
     * Parses {@code args}; returns null to run, else the status to exit with (after the messages).
     */
    Integer parse(String[] args, PrintStream out, PrintStream err) {
        Getopt g = new Getopt(program, args, SHORT, LONG);
        for (int c; (c = g.next(err)) != -1; ) {
            String a = g.argument();
            Integer bad = option(c, a, out, err);
            if (bad != null) {
                return bad;
            }
        }
        List<String> ops = g.operands();
        if (ops.size() > 1) {
            return refuse(err, " Invalid Command line. Please check command rerun ");
        }
        if (!ops.isEmpty()) {
            serverName = ops.get(0);
        }
        if (!logActiveDciStreamsGiven) {
            logActiveDciStreams = logDciStreams;
        }
        return OptionDependencies.check(this, out, err);
    }

    private Integer option(int c, String a, PrintStream out, PrintStream err) {
        switch (c) {
            case 'p' -> {
                return number(a, "Port", err, v -> tcpPort = v);
            }
            case 'd' -> deviceName = a;
            case 'i' -> {
                return number(a, "IB Port", "uint8_t", err, v -> ibPort = v & 0xff,
                        () -> ibPort >= 1, "IB Port can't be less than 1");
            }
            case 'm' -> {
                return number(a, "MTU", err, v -> mtu = v);
            }
            case 's' -> {
                long factor = 1;
                String t = a;
                if (t.endsWith("K")) {
                    factor = 1024;
                    t = t.substring(0, t.length() - 1);
                } else if (t.endsWith("M")) {
                    factor = 1024 * 1024;
                    t = t.substring(0, t.length() - 1);
                }
                // strtol reads a long: a size beyond 2^31 - 1 is refused, not cut
                long v = Getopt.strtoll(t);
                size = Math.abs(v) > Long.MAX_VALUE / factor ? -1 : v * factor;
                sizeGiven = true;
                if (size < 1 || size > 0x7fffffffL) {
                    return refuse(err, " Message Size should be between 1 and " + 0x7fffffffL);
                }
            }
            case 'n' -> {
                itersGiven = true;
                return range(a, "Iteration num", MIN_ITER, MAX_ITER, err, v -> iters = v);
            }
            case 't' -> {
                txDepthGiven = true;
                return range(a, "Tx depth", 1, 15000, err, v -> txDepth = v);
            }
            case 'u' -> {
                return number(a, "QP Timeout", "uint8_t", err, v -> qpTimeout = v & 0xff);
            }
            case 'S' -> {
                return number(a, "Service Level", "uint8_t", err, v -> sl = v & 0xff,
                        () -> sl <= 15, " Only 15 Service levels");
            }
            case 'x' -> {
                gidGiven = true;
                if (!isInteger(a)) {
                    return refuse(err, " Gid index argument " + a + " should be uint8_t");
                }
                return range(a, "Gid index", 0, 64, err, v -> gidIndex = v);
            }
            case 'c' -> {
                connection = a;
                if (!List.of("RC", "UC", "UD", "XRC", "DC", "SRD").contains(a)) {
                    return refuseQuietly(err, " Invalid Connection type. Please choose from {RC,UC,UD,XRC,DC,SRD}");
                }
                if (a.equals("UC") && (verb == Verb.READ || verb == Verb.ATOMIC)) {
                    return refuseQuietly(err, " UC connection not possible in READ/ATOMIC verbs");
                }
                if (a.equals("UD") && verb != Verb.SEND) {
                    return refuseQuietly(err, " UD connection only possible in SEND verb");
                }
                if (!a.equals("RC") && !a.equals("UC") && !a.equals("UD")) {
                    // XRC, DC and SRD need an XRC domain, mlx5 or EFA: not in verbs4j's tools
                    return refuse(err, " " + program + ": connection type " + a + " is not supported by verbs4j (RC, UC and UD are)");
                }
            }
            case 'q' -> {
                if (kind != Kind.BW) {
                    return refuse(err, " Multiple QPs only available on bw tests");
                }
                return range(a, "num of Qps", 1, 16384, err, v -> numQps = v);
            }
            case 'I' -> {
                Integer bad = range(a, "Max inline", 0, 912, err, v -> inlineSize = v);
                if (bad != null) {
                    return bad;
                }
                if (verb == Verb.READ || verb == Verb.ATOMIC) {
                    return refuse(err, " Inline feature not available on READ/Atomic verbs");
                }
            }
            case 'o' -> {
                return number(a, "Outstanding Reads", "int", err, v -> outReads = v,
                        () -> verb == Verb.READ || verb == Verb.ATOMIC,
                        " Setting Outstanding reads only available on READ verb");
            }
            case 'r' -> {
                Integer bad = range(a, " Rx depth", 1, 16384, err, v -> rxDepth = v);
                if (bad != null) {
                    return bad;
                }
                if (verb != Verb.SEND && rxDepth > 1) {
                    return refuse(err, " On RDMA verbs rx depth can be only 1");
                }
            }
            case 'Q' -> {
                cqModGiven = true;
                return range(a, "CQ moderation", 1, 1024, err, v -> cqMod = v);
            }
            case 'A' -> {
                if (verb != Verb.ATOMIC) {
                    err.print(" You are not running the atomic_lat/bw test!\n");
                    return refuse(err, " To change the atomic action type, you must run one of the atomic tests");
                }
                if (a.equals("CMP_AND_SWAP")) {
                    atomicType = AtomicType.CMP_AND_SWAP;
                } else if (a.equals("FETCH_AND_ADD")) {
                    atomicType = AtomicType.FETCH_AND_ADD;
                } else {
                    // perftest exits right there, without the parser's closing line
                    return refuseQuietly(err, " Invalid Atomic type! please choose from {CMP_AND_SWAP,FETCH_AND_ADD}");
                }
            }
            case 'l' -> {
                return number(a, "Send Post List size", err, v -> postList = v);
            }
            case 'D' -> {
                return number(a, "Duration period", "int", err, v -> duration = v,
                        () -> duration > 0, " Duration period must be positive");
            }
            case 'f' -> {
                return number(a, "Margin", "int", err, v -> margin = v,
                        () -> margin >= 0, " Margin must be non-negative");
            }
            case 'X' -> {
                if (verb == Verb.WRITE) {
                    return refuse(err, " Events feature not available on WRITE verb");
                }
                eqNumGiven = true;
                return range(a, "EQN", 0, 2048, err, v -> eqNum = v);
            }
            case 'T' -> {
                return range(a, "TOS", 0, 255, err, v -> tos = v);
            }
            case 'L' -> {
                return range(a, "Hop Limit", 0, 255, err, v -> hopLimit = v);
            }
            case 'a' -> all = true;
            case 'F' -> cpuFreq = true;
            case 'e' -> {
                events = true;
                if (verb == Verb.WRITE) {
                    return refuse(err, " Events feature not available on WRITE verb");
                }
            }
            case 'z' -> comRdmaCm = true;
            case 'R' -> rdmaCm = true;
            case 'h' -> {
                Usage.print(this, out);
                quietExit = true;
                return HELP_EXIT;
            }
            case 'b' -> {
                duplex = true;
                if (kind == Kind.LAT) {
                    return refuse(err, " Bidirectional is only available in BW test");
                }
            }
            case 'N' -> {
                noPeak = true;
                if (kind == Kind.LAT) {
                    return refuse(err, " NoPeak only valid for BW tests");
                }
            }
            case 'V' -> {
                out.print("Version: " + VERSION + "\n");
                quietExit = true;
                return HELP_EXIT;
            }
            case 'C' -> {
                if (kind != Kind.LAT) {
                    return refuse(err, " Available only on Latency tests");
                }
                reportCycles = true;
            }
            case 'H' -> {
                if (kind == Kind.BW) {
                    return refuse(err, " Available only on Latency tests");
                }
                histogram = true;
            }
            case 'U' -> {
                if (kind == Kind.BW) {
                    return refuse(err, " is Available only on Latency tests");
                }
                unsorted = true; // perftest prints the unsorted samples; -H is a separate, sorted dump
            }
            case 'O' -> {
                ibPort = 1;
                dualport = true;
            }
            case 'g' -> {
                useMcg = true;
                if (verb != Verb.SEND) {
                    return refuse(err, " MultiCast feature only available on SEND verb");
                }
            }
            case 'M' -> mgid = a;
            case 'W' -> {
                if (a.isEmpty()) {
                    return refuse(err, "Failed to parse the performance counter list");
                }
                counters = a;
            }
            // the raw Ethernet options: perftest takes them in every tool and uses them in its raw_ethernet tools only
            case 'B', 'E', LOCAL_MAC, REMOTE_MAC -> {
                if (a.length() != 17) {
                    return refuse(err, "invalid MAC length");
                }
            }
            case 'J', 'j', ETHERTYPE, REMOTE_IP, LOCAL_IP, 'P', 'Z', 'v', USE_RSS, TCP, RAW_IPV6, PROMISCUOUS, SNIFFER,
                 RAW_MCAST, VLAN_EN -> {
                // no effect outside RawEth
            }
            case 'K' -> {
                return udpPort(a, "Server Port", err);
            }
            case 'k' -> {
                return udpPort(a, "Client Port", err);
            }
            case REMOTE_PORT -> {
                return udpPort(a, "remote port", err);
            }
            case LOCAL_PORT -> {
                return udpPort(a, "local port", err);
            }
            case FLOWS, FLOWS_BURST -> {
                String name = c == FLOWS ? "flows" : "flows burst";
                Integer bad = number(a, name, "uint16_t", err, v -> { });
                if (bad != null) {
                    return bad;
                }
                if ((Getopt.strtol(a) & 0xffff) == 0) {
                    return refuse(err, c == FLOWS ? "Invalid flows value. Please set a positive number"
                            : "Invalid burst flow value. Please set a positive number");
                }
            }
            case REPLY_EVERY -> {
                return number(a, "reply_every", "uint32_t", err, v -> { });
            }
            case VLAN_PCP -> {
                Integer bad = number(a, "VLAN PCP", "uint32_t", err, v -> { });
                if (bad == null && (Getopt.strtoll(a) & 0xffffffffL) > 8) {
                    return refuse(err, " VLAN PCP should be between 0 and 8");
                }
                return bad;
            }
            case FORCE_LINK -> {
                // perftest compares the first 2 / 8 characters, ignoring case
                if (a.regionMatches(true, 0, "IB", 0, 2)) {
                    forceLink = "IB";
                } else if (a.regionMatches(true, 0, "Ethernet", 0, 8)) {
                    forceLink = "Ethernet";
                } else {
                    return refuse(err, "Invalid link layer value should be IB or ETHERNET.");
                }
            }
            case RUN_INFINITELY -> runInfinitely = true;
            case USE_SRQ -> useSrq = true;
            case REPORT_BOTH -> reportBoth = true;
            case REVERSED -> reversed = true;
            case PKEY_INDEX -> {
                return number(a, "Pkey index", err, v -> pkeyIndex = v);
            }
            case INLINE_RECV -> {
                return number(a, "Inline Receive size", err, v -> inlineRecv = v);
            }
            case BURST_SIZE -> {
                return number(a, "Burst size", "int", err, v -> burstSize = v, () -> burstSize >= 0,
                        " Burst size must be non-negative");
            }
            case TYPICAL_PKT_SIZE -> {
                return range(a, "Typical pkt size", 0, 0xFFFF, err, v -> typicalPktSize = v);
            }
            case RATE_LIMIT -> {
                rateLimitText = a;
                rateLimit = parseDouble(a);
                if (rateLimit <= 0) {
                    return refuse(err, " Rate limit must be non-negative");
                }
                if (rateLimitType == RateLimitType.DISABLED) {
                    rateLimitType = RateLimitType.HW;
                }
            }
            case RATE_UNITS -> {
                switch (a) {
                    case "M" -> rateUnits = RateUnits.MEGA_BYTE_PS;
                    case "g" -> rateUnits = RateUnits.GIGA_BIT_PS;
                    case "p" -> rateUnits = RateUnits.PACKET_PS;
                    default -> {
                        return refuse(err, " Invalid rate limit units. Please use M,g or p");
                    }
                }
            }
            case RATE_LIMIT_TYPE -> {
                rateLimitTypeGiven = true;
                switch (a) {
                    case "SW" -> rateLimitType = RateLimitType.SW;
                    case "HW" -> rateLimitType = RateLimitType.HW;
                    case "PP" -> rateLimitType = RateLimitType.PP;
                    default -> {
                        return refuse(err, " Invalid rate limit type flag. Please use HW, SW or PP.");
                    }
                }
            }
            case CPU_UTIL -> cpuUtil = true;
            case LATENCY_GAP -> {
                return number(a, "Latency gap time", "int", err, v -> latencyGap = v, () -> latencyGap >= 0,
                        " Latency gap time must be non-negative");
            }
            case FLOW_LABEL -> {
                return number(a, "flow label", "int", err, v -> flowLabel = v, () -> flowLabel >= 0,
                        " flow label must be non-negative");
            }
            case MMAP -> mmapFile = a;
            case MMAP_OFFSET -> {
                if (!isInteger(a)) {
                    return refuse(err, " mmap offset argument " + a + " should be unsigned long");
                }
                mmapOffset = Getopt.strtoll(a);
            }
            case IPV6 -> ipv6 = true;
            case REPORT_PER_PORT -> reportPerPort = true;
            case ODP -> odp = true;
            case USE_HUGEPAGES -> useHugepages = true;
            case USE_OLD_POST_SEND -> useOldPostSend = true;
            case MR_PER_QP -> mrPerQp = true;
            case DLID -> {
                return number(a, "dlid", "uint16_t", err, v -> dlid = v & 0xffff);
            }
            case TCLASS -> {
                return number(a, "traffic class", "uint16_t", err, v -> trafficClass = v & 0xffff);
            }
            case WAIT_DESTROY -> {
                if (!isInteger(a)) {
                    return refuse(err, " wait_destroy argument " + a + " should be uint32_t");
                }
                waitDestroy = Getopt.strtoll(a) & 0xffffffffL;
            }
            case PERFORM_WARM_UP -> performWarmUp = true;
            case RECV_POST_LIST -> {
                return number(a, "Receive Post List size", err, v -> recvPostList = v);
            }
            case AES_XTS -> aesXts = true;
            case ENCRYPT_ON_TX -> encryptOnTx = true;
            case SIG_BEFORE -> sigBefore = true;
            case AES_BLOCK_SIZE -> {
                return number(a, "aes_block_size", "uint16_t", err, v -> aesBlockSize = v & 0xffff);
            }
            case DATA_ENC_KEYS_NUMBER -> {
                return number(a, "data_enc_keys_number", "uint16_t", err, v -> dataEncKeysNumber = v & 0xffff);
            }
            case KEK_PATH -> kekPath = a;
            case CREDENTIALS_PATH -> credentialsPath = a;
            case DATA_ENC_KEY_APP_PATH -> dataEncKeyAppPath = a;
            case LOG_DCI_STREAMS -> {
                return number(a, "log_dci_streams", "uint16_t", err, v -> logDciStreams = v & 0xffff);
            }
            case LOG_ACTIVE_DCI_STREAMS -> {
                logActiveDciStreamsGiven = true;
                return number(a, "log_active_dci_streams", "uint16_t", err, v -> logActiveDciStreams = v & 0xffff);
            }
            case DISABLE_PCIE_RELAXED -> disablePcieRelaxed = true;
            case 'w' -> limitBw = parseDouble(a);
            case 'y' -> limitMsgRate = parseDouble(a);
            case REPORT_GBITS -> reportGbits = true;
            case OUTPUT -> {
                switch (a) {
                    case "bandwidth" -> output = Output.BANDWIDTH;
                    case "message_rate" -> output = Output.MESSAGE_RATE;
                    case "latency" -> output = Output.LATENCY;
                    default -> {
                        return refuse(err, " Invalid verbosity level output flag. Please use bandwidth, latency, message_rate");
                    }
                }
            }
            case OUT_JSON -> outJson = true;
            case OUT_JSON_FILE -> outJsonFile = a; // only the name: --out_json turns the file on
            case SOURCE_IP -> sourceIp = a;
            case DONT_XCHG -> dontXchgVersions = true;
            case RETRY_COUNT -> {
                return number(a, "Retry Count", "int", err, v -> retryCount = v, () -> retryCount >= 0,
                        " Retry Count must be non-negative");
            }
            default -> {
                err.print(" Invalid Command or flag.\n");
                err.print(" Please check command line and run again.\n\n");
                Usage.print(this, out);
                return 1;
            }
        }
        return null;
    }

    @FunctionalInterface
    private interface IntSink {
        void set(int v);
    }

    private static Integer number(String a, String name, PrintStream err, IntSink sink) {
        return number(a, name, "int", err, sink);
    }

    /** perftest's CHECK_VALUE: the message names the C type of the field. */
    private static Integer number(String a, String name, String type, PrintStream err, IntSink sink) {
        if (!isInteger(a)) {
            return refuse(err, " " + name + " argument " + a + " should be " + type);
        }
        sink.set(Getopt.strtol(a));
        return null;
    }

    /** {@link #number}, then, unless {@code valid} holds for the value set, {@code refusal} as a line and status 1. */
    private static Integer number(String a, String name, String type, PrintStream err, IntSink sink, BooleanSupplier valid,
            String refusal) {
        Integer bad = number(a, name, type, err, sink);
        if (bad != null) {
            return bad;
        }
        if (!valid.getAsBoolean()) {
            return refuse(err, refusal);
        }
        return null;
    }

    /** {@link #refuse}, after which perftest skips its "Parser function exited with Error" line. */
    private Integer refuseQuietly(PrintStream err, String message) {
        quietExit = true;
        return refuse(err, message);
    }

    /** A refusal as perftest's parser makes it: {@code message} as a line on stderr, status 1. */
    private static Integer refuse(PrintStream err, String message) {
        err.print(message + "\n");
        return 1;
    }

    private static Integer range(String a, String name, int min, int max, PrintStream err, IntSink sink) {
        if (!isInteger(a)) {
            return refuse(err, " " + name + " argument " + a + " should be int");
        }
        int v = Getopt.strtol(a);
        if (v < min || v > max) {
            return refuse(err, " " + name + " should be between " + min + " and " + max);
        }
        sink.set(v);
        return null;
    }

    /** Whether {@code strtol(a, &end, 0)} consumes all of {@code a}. */
    static boolean isInteger(String a) {
        String t = a.strip();
        if (t.startsWith("-") || t.startsWith("+")) {
            t = t.substring(1);
        }
        if (t.isEmpty()) {
            return false;
        }
        if (t.length() > 2 && (t.startsWith("0x") || t.startsWith("0X"))) {
            return t.substring(2).chars().allMatch(ch -> Character.digit(ch, 16) >= 0);
        }
        int radix = t.startsWith("0") ? 8 : 10;
        return t.chars().allMatch(ch -> Character.digit(ch, radix) >= 0);
    }

    /** perftest's check of a UDP port option: an int (perftest 4.5 accepts any int as a port). */
    private static Integer udpPort(String a, String name, PrintStream err) {
        return number(a, name, "int", err, v -> { });
    }

    private static double parseDouble(String a) {
        try {
            return Double.parseDouble(a.strip());
        } catch (NumberFormatException e) {
            return 0;
        }
    }
}
