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

    // Short letters for long options without a short twin (never typed by users).
    private static final char REPORT_GBITS = '\u0101';
    private static final char OUTPUT = '\u0102';
    private static final char OUT_JSON = '\u0103';
    private static final char SOURCE_IP = '\u0104';
    private static final char OUT_JSON_FILE = '\u0105';
    private static final char DONT_XCHG = '\u0106';
    private static final char RETRY_COUNT = '\u0107';

    private static final String SHORT = "w:y:p:d:i:m:s:n:t:u:S:x:c:q:I:o:r:Q:A:l:D:f:T:L:X:aFezRhbNVCHUO"
            + REPORT_GBITS + OUTPUT + ":" + OUT_JSON + SOURCE_IP + ":" + OUT_JSON_FILE + ":" + DONT_XCHG
            + RETRY_COUNT + ":";
    private static final String[] LONG = {
        "limit_bw:w", "limit_msgrate:y", "port:p", "ib-dev:d", "ib-port:i", "mtu:m", "size:s", "iters:n",
        "tx-depth:t", "qp-timeout:u", "sl:S", "gid-index:x", "connection:c", "qp:q", "inline_size:I", "outs:o",
        "rx-depth:r", "cq-mod:Q", "atomic_type:A", "post_list:l", "duration:D", "margin:f", "vector:X", "tos:T",
        "hop_limit:L", "all:a",
        "CPU-freq:F", "events:e", "com_rdma_cm:z", "rdma_cm:R", "help:h", "bidirectional:b", "noPeak:N",
        "version:V", "report-cycles:C", "report-histogram:H", "report-unsorted:U", "dualport:O",
        "report_gbits:" + REPORT_GBITS, "output:" + OUTPUT, "out_json:" + OUT_JSON, "source_ip:" + SOURCE_IP,
        "out_json_file:" + OUT_JSON_FILE, "dont_xchg_versions:" + DONT_XCHG, "retry_count:" + RETRY_COUNT,
    };

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

    boolean isClient() {
        return serverName != null;
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
                size = Getopt.strtol(t) * factor;
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
            case 'z' -> {
                return refuse(err, " " + program + ": -z (rdma_cm data exchange over regular QPs) is not supported by verbs4j");
            }
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
                unsorted = true;
                histogram = true;
            }
            case 'O' -> {
                return refuse(err, " " + program + ": dual-port mode is not supported by verbs4j");
            }
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
            case DONT_XCHG -> {
                // as perftest 4.5: the version check then fails on both sides
                return refuse(err, "Current implementation is not compatible with versions older than 5.70");
            }
            case RETRY_COUNT -> {
                return range(a, "Retry Count", 0, 7, err, v -> retryCount = v);
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

    private static double parseDouble(String a) {
        try {
            return Double.parseDouble(a.strip());
        } catch (NumberFormatException e) {
            return 0;
        }
    }
}
