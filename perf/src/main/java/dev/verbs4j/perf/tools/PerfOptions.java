package dev.verbs4j.perf.tools;

import dev.verbs4j.tools.Getopt;

import java.io.PrintStream;
import java.util.List;

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
    /** mlx5 crypto and DC streams: parsed, and refused as perftest refuses them without the hardware. */
    final HardwareSpecificOptions hardware = new HardwareSpecificOptions();

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
        Getopt g = new Getopt(program, args, OptionTable.SHORT, OptionTable.LONG);
        for (int c; (c = g.next(err)) != -1; ) {
            OptionSpec row = OptionTable.row(c);
            if (row == null) {
                err.print(" Invalid Command or flag.\n");
                err.print(" Please check command line and run again.\n\n");
                Usage.print(this, out);
                return 1;
            }
            Integer bad = row.apply(this, g.argument(), out, err);
            if (bad != null) {
                return bad;
            }
        }
        List<String> ops = g.operands();
        if (ops.size() > 1) {
            return OptionValues.refuse(err, " Invalid Command line. Please check command rerun ");
        }
        if (!ops.isEmpty()) {
            serverName = ops.get(0);
        }
        if (!hardware.logActiveDciStreamsGiven) {
            hardware.logActiveDciStreams = hardware.logDciStreams;
        }
        return OptionDependencies.check(this, out, err);
    }
}
