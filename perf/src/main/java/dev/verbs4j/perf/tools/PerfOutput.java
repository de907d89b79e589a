package dev.verbs4j.perf.tools;

import java.io.PrintStream;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.Arrays;
import java.util.Locale;

/**
 * What the perftest tools print, laid out as perftest 4.5 prints it: the header block, the
 * address lines, the latency and bandwidth tables, and the arithmetic behind their columns (time
 * in nanoseconds from {@link System#nanoTime()}, so there is no clock calibration to fail).
 */
final class PerfOutput {

    /** perftest's separator: 87 dashes and a newline. */
    static final String RESULT_LINE = "-".repeat(87) + "\n";

    static final String LAT_HEADER = " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]"
            + "    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] \n";
    static final String LAT_DURATION_HEADER = " #bytes        #iterations       t_avg[usec]    tps average\n";
    static final String BW_HEADER_MB = " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n";
    static final String BW_HEADER_GB = " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n";

    /** Latency samples dropped from the top (perftest's LAT_MEASURE_TAIL). */
    static final int TAIL = 2;

    private PerfOutput() {
    }

    /** What the header shows about the run, beyond the options. */
    record HeaderInfo(String device, int mtuBytes, boolean ethernet, int gidIndex, int outReads, boolean relaxedOrdering) {
    }

    /** The header block ({@code ctx_print_test_info}), with its leading and trailing dashed lines. */
    static String header(PerfOptions o, HeaderInfo h) {
        StringBuilder s = new StringBuilder(RESULT_LINE);
        s.append(" ".repeat(20)).append(o.verb.title).append(' ');
        if (o.verb == PerfOptions.Verb.ATOMIC) {
            s.append(o.atomicType.name()).append(' ');
        }
        if (o.duplex) {
            s.append("Bidirectional ");
        }
        if (o.postList > 1) {
            s.append("Post List ");
        }
        s.append(o.kind == PerfOptions.Kind.BW ? "BW " : "Latency ").append(o.useMcg ? "Multicast " : "").append("Test\n");
        if (o.events) {
            s.append(" Test with events. Using ").append(h.device()).append("_comp").append(o.eqNum).append('\n');
        }
        if (o.useMcg) {
            s.append(" MultiCast runs on UD!\n");
        }
        s.append(" Dual-port       : ").append(o.dualport ? "ON" : "OFF").append("\t\tDevice         : ").append(h.device()).append('\n');
        s.append(" Number of qps   : ").append(o.numQps).append("\t\tTransport type : IB\n");
        s.append(" Connection type : ").append(o.connection).append("\t\tUsing SRQ      : ").append(o.useSrq ? "ON" : "OFF").append('\n');
        s.append(" PCIe relax order: ").append(h.relaxedOrdering() ? "ON" : "OFF").append('\n');
        s.append(" ibv_wr* API     : OFF\n");
        if (o.printsTxDepth()) {
            s.append(" TX depth        : ").append(o.txDepth).append('\n');
        }
        if (o.postList > 1) {
            s.append(" Post List       : ").append(o.postList).append('\n');
        }
        if (o.recvPostList > 1) {
            s.append(" Recv Post List  : ").append(o.recvPostList).append('\n');
        }
        if (o.verb == PerfOptions.Verb.SEND && (!o.isClient() || o.duplex)) {
            s.append(" RX depth        : ").append(o.rxDepth).append('\n');
        }
        if (o.kind == PerfOptions.Kind.BW) {
            s.append(" CQ Moderation   : ").append(o.cqMod).append('\n');
        }
        s.append(" Mtu             : ").append(h.mtuBytes()).append("[B]\n");
        s.append(" Link type       : ").append(h.ethernet() ? "Ethernet" : "IB").append('\n');
        if (h.gidIndex() >= 0) {
            s.append(" GID index       : ").append(h.gidIndex()).append('\n');
        }
        if (o.verb == PerfOptions.Verb.READ || o.verb == PerfOptions.Verb.ATOMIC) {
            s.append(" Outstand reads  : ").append(h.outReads()).append('\n');
        } else {
            s.append(" Max inline data : ").append(o.inlineSize).append("[B]\n");
        }
        s.append(" rdma_cm QPs\t : ").append(o.rdmaCm ? "ON" : "OFF").append('\n');
        s.append(" Data ex. method : ").append(o.rdmaCm || o.comRdmaCm ? "rdma_cm" : "Ethernet");
        if (o.rdmaCm) {
            if (o.tos != -1) {
                s.append(" \tTOS    : ").append(o.tos);
            }
            if (!o.isClient()) {
                s.append('\n').append(RESULT_LINE);
                s.append(" Waiting for client rdma_cm QP to connect\n");
                s.append(" Please run the same command with the IB/RoCE interface IP");
            }
        }
        s.append('\n').append(RESULT_LINE);
        return s.toString();
    }

    /** One side's address lines ({@code ctx_print_pingpong_data}). */
    static String address(PerfOptions o, String side, Wire.Dest d) {
        StringBuilder s = new StringBuilder();
        // --dlid: the remote line shows the LID given instead of the peer's
        int lid = side.equals("remote") && o.dlid != 0 ? o.dlid : d.lid();
        s.append(' ').append(side).append(" address: LID ").append(alt(lid, 4)).append(" QPN ").append(alt(d.qpn(), 6))
                .append(" PSN ").append(alt(d.psn(), 6));
        // with -R or -z perftest prints from the control connection's parameters, which know no verb
        if (o.verb == PerfOptions.Verb.READ && !o.rdmaCm && !o.comRdmaCm) {
            s.append(" OUT ").append(alt(d.outReads(), 4));
        }
        if ((o.verb == PerfOptions.Verb.READ || o.verb == PerfOptions.Verb.WRITE) && !o.rdmaCm && !o.comRdmaCm) {
            s.append(" RKey ").append(alt(d.rkey() & 0xffffffffL, 8)).append(" VAddr ").append(alt(d.vaddr(), 16));
        }
        s.append('\n');
        // multicast: the server's own line and the client's line of the server name the group (perftest's "MGID")
        boolean local = side.equals("local");
        boolean group = o.useMcg && (o.duplex || (local && !o.isClient()) || (!local && o.isClient()));
        s.append(group ? " MGID: " : " GID: ");
        byte[] g = d.gid();
        for (int i = 0; i < g.length; i++) {
            if (i > 0) {
                s.append(':');
            }
            s.append(String.format(Locale.ROOT, "%02d", g[i] & 0xff));
        }
        s.append('\n');
        return s.toString();
    }

    /**
     * glibc's {@code %.<digits>f}: the exact binary value rounded half to even (Java's formatter
     * rounds the shortest decimal form half up, so 0.125 would print 0.13 where C prints 0.12).
     */
    static String fixed(double v, int digits) {
        if (Double.isNaN(v)) {
            return "-nan";
        }
        if (Double.isInfinite(v)) {
            return v > 0 ? "inf" : "-inf";
        }
        String t = new BigDecimal(v).setScale(digits, RoundingMode.HALF_EVEN).toPlainString();
        return v < 0 || (v == 0 && 1 / v < 0) ? (t.startsWith("-") ? t : "-" + t) : t;
    }

    /** C's {@code %-<width>.<digits>f}: {@link #fixed}, padded on the right to {@code width}. */
    static String fixedLeft(double v, int digits, int width) {
        String t = fixed(v, digits);
        return t.length() >= width ? t : t + " ".repeat(width - t.length());
    }

    /** C's {@code %#0<width>x}: "0x" and zero padding up to {@code width} characters; all zeros for 0. */
    static String alt(long value, int width) {
        if (value == 0) {
            return "0".repeat(width);
        }
        String hex = Long.toHexString(value);
        int pad = Math.max(0, width - 2 - hex.length());
        return "0x" + "0".repeat(pad) + hex;
    }

    // ---- latency ----

    /** The columns of one latency row, in microseconds. */
    record Latency(double min, double max, double typical, double avg, double stdev, double p99, double p999) {
    }

    /**
     * The latency columns from the post times {@code tposted[0..iters-1]} (ns): the gaps between
     * consecutive posts, divided by {@code rttFactor}, sorted, the two largest dropped.
     */
    static Latency latency(long[] tposted, int iters, int rttFactor, boolean cycles) {
        int samples = iters - 1;
        double[] d = new double[samples];
        double unit = cycles ? 1.0 : 1000.0;
        for (int i = 0; i < samples; i++) {
            d[i] = (tposted[i + 1] - tposted[i]) / unit / rttFactor;
        }
        Arrays.sort(d);
        int n = samples - TAIL;
        double median = n % 2 == 1 ? d[n / 2] : (d[n / 2 - 1] + d[n / 2]) / 2;
        double sum = 0;
        for (int i = 0; i < n; i++) {
            sum += d[i];
        }
        double avg = sum / n;
        double var = 0;
        for (int i = 0; i < n; i++) {
            double dev = avg - d[i];
            var += dev * dev;
        }
        double stdev = Math.sqrt(var / n);
        int i99 = (int) Math.ceil(n * 0.99);
        int i999 = (int) Math.ceil(n * 0.999);
        return new Latency(d[0], d[n], median, avg, stdev, d[Math.min(i99, samples - 1)], d[Math.min(i999, samples - 1)]);
    }

    /** One latency row ({@code %-7lu %lu ...}). */
    static String latencyRow(long size, int iters, Latency l) {
        return String.format(Locale.ROOT, " %-7d %d          %-7s        %-7s      %-7s  \t       %-7s     \t%-7s\t\t%-7s \t\t%-7s\n",
                size, iters, fixed(l.min(), 2), fixed(l.max(), 2), fixed(l.typical(), 2), fixed(l.avg(), 2),
                fixed(l.stdev(), 2), fixed(l.p99(), 2), fixed(l.p999(), 2));
    }

    /** The latency row of duration mode ({@code %-7lu       %lu            %-7.2f        %-7.2f}). */
    static String latencyDurationRow(long size, long iters, double avgUsec, double tps) {
        return String.format(Locale.ROOT, " %-7d       %d            %-7s        %-7s\n", size, iters, fixed(avgUsec, 2),
                fixed(tps, 2));
    }

    /**
     * Duration mode's latency: the sample window of {@code ns} nanoseconds over {@code iters}
     * round trips (one-way for send and write), and the round trips per second.
     */
    static double[] latencyDuration(long ns, long iters, int rttFactor) {
        double usec = ns / 1000.0;
        return new double[]{usec / rttFactor / iters, iters / (usec / 1e6)};
    }

    /**
     * The per-sample lines of -U ({@code sorted} false: all {@code iters - 1} samples as measured)
     * and -H ({@code sorted}: ascending, without the two largest), titled in cycles with -C (these
     * tools' clock counts nanoseconds) or in microseconds.
     */
    static void histogram(PrintStream out, long[] tposted, int iters, int rttFactor, boolean cycles, boolean sorted) {
        int samples = iters - 1;
        double unit = cycles ? 1.0 : 1000.0;
        double[] d = new double[samples];
        for (int i = 0; i < samples; i++) {
            d[i] = (tposted[i + 1] - tposted[i]) / unit / rttFactor;
        }
        int rows = samples;
        if (sorted) {
            Arrays.sort(d);
            rows = samples - TAIL;
        }
        StringBuilder s = new StringBuilder(cycles ? "#, cycles\n" : "#, usec\n");
        for (int i = 0; i < rows; i++) {
            s.append(i + 1).append(", ").append(g(d[i])).append('\n');
        }
        out.print(s);
    }

    /** C's {@code %g}: six significant digits, fixed or exponent form, trailing zeros dropped. */
    static String g(double v) {
        if (Double.isNaN(v)) {
            return "-nan";
        }
        if (Double.isInfinite(v)) {
            return v > 0 ? "inf" : "-inf";
        }
        if (v == 0) {
            return 1 / v < 0 ? "-0" : "0";
        }
        BigDecimal r = new BigDecimal(v).round(new java.math.MathContext(6, RoundingMode.HALF_EVEN));
        int exp = r.precision() - r.scale() - 1;
        String t;
        if (exp < -4 || exp >= 6) {
            BigDecimal mant = r.movePointLeft(exp);
            t = strip(mant.setScale(5, RoundingMode.HALF_EVEN).toPlainString());
            t += (exp < 0 ? "e-" : "e+") + (Math.abs(exp) < 10 ? "0" : "") + Math.abs(exp);
        } else {
            t = strip(r.setScale(Math.max(0, 5 - exp), RoundingMode.HALF_EVEN).toPlainString());
        }
        return t;
    }

    private static String strip(String t) {
        if (t.indexOf('.') < 0) {
            return t;
        }
        t = t.replaceAll("0+$", "");
        return t.endsWith(".") ? t.substring(0, t.length() - 1) : t;
    }

    // ---- bandwidth ----

    /** One side's bandwidth result (the five values perftest exchanges). */
    record Bw(long size, long iters, double peak, double avg, double msgRate) {

        Bw plus(Bw other) {
            return new Bw(size, iters, peak + other.peak, avg + other.avg, msgRate + other.msgRate);
        }
    }

    /**
     * The bandwidth result of {@code n} operations of {@code size} bytes from the post times and
     * completion times (ns); {@code cqMod}/{@code postList} give the windows of the peak.
     */
    static Bw bandwidth(PerfOptions o, long size, int n, long[] tposted, long[] tcompleted, boolean peakOff) {
        double factor = o.reportGbits ? 125_000_000.0 : 1_048_576.0;
        long t0 = tposted[0];
        long t1 = tcompleted[n - 1];
        double ns = Math.max(1, t1 - t0);
        double avg = size * (double) n * 1e9 / (ns * factor);
        double rate = n * 1e9 / ns / 1e6;
        double peak = 0;
        if (!peakOff) {
            long best = t1 - t0;
            int step = Math.max(1, o.postList);
            int mod = Math.max(1, o.cqMod);
            for (int i = 0; i < n; i += step) {
                for (int j = roundUp(i + 1, mod) - 1; j < n; j += mod) {
                    long t = (tcompleted[j] - tposted[i]) / (j - i + 1);
                    if (t < best) {
                        best = t;
                    }
                }
                if (n % mod != 0) {
                    int j = n - 1;
                    long t = (tcompleted[j] - tposted[i]) / (j - i + 1);
                    if (t < best) {
                        best = t;
                    }
                }
            }
            peak = size * 1e9 / (Math.max(1, best) * factor);
        }
        return new Bw(size, n, peak, avg, rate);
    }

    private static int roundUp(int v, int to) {
        return (v + to - 1) / to * to;
    }

    static String bwHeader(PerfOptions o) {
        return o.reportGbits ? BW_HEADER_GB : BW_HEADER_MB;
    }

    /** One bandwidth row ({@code %-7lu    %-10lu ...}). */
    static String bwRow(PerfOptions o, Bw b) {
        if (o.reportGbits && b.avg() < 0.1) {
            return String.format(Locale.ROOT, " %-7d    %d           %-7s            %-7s            %-7s\n",
                    b.size(), b.iters(), fixed(b.peak(), 6), fixed(b.avg(), 6), fixed(b.msgRate(), 6));
        }
        return String.format(Locale.ROOT, " %-7d    %-10d       %-7s            %-7s\t\t   %-7s\n",
                b.size(), b.iters(), fixed(b.peak(), 2), fixed(b.avg(), 2), fixed(b.msgRate(), 6));
    }

    /**
     * Duration mode's bandwidth: {@code iters} operations of {@code size} bytes counted in a
     * sample window of {@code ns} nanoseconds; no peak.
     */
    static Bw bandwidthDuration(PerfOptions o, long size, long iters, long ns) {
        double factor = o.reportGbits ? 125_000_000.0 : 1_048_576.0;
        double t = Math.max(1, ns);
        return new Bw(size, iters, 0, size * (double) iters * 1e9 / (t * factor), iters * 1e9 / t / 1e6);
    }

    // ---- --out_json ----

    /**
     * The text perftest writes with {@code --out_json}, as perftest 4.5-0.17 (the version these
     * tools follow, which has the option already) writes it: "key: value," lines in braces, not
     * strict JSON; the test's description and then {@code results}.
     */
    static String json(PerfOptions o, HeaderInfo h, String results) {
        StringBuilder s = new StringBuilder("{\n");
        s.append("test_info: {\n");
        s.append("test: ").append(o.verb.title).append('_');
        if (o.verb == PerfOptions.Verb.ATOMIC) {
            s.append(o.atomicType.name()).append('_');
        }
        if (o.kind == PerfOptions.Kind.BW) {
            if (o.duplex) {
                s.append("Bidirectional_");
            }
            if (o.postList > 1) {
                s.append("Post_List_");
            }
            s.append("BW_");
        } else {
            s.append("Latency_");
        }
        s.append(o.useMcg ? "Multicast_" : "").append("Test,\n");
        if (o.events) {
            s.append("Test with events: Using_").append(h.device()).append("_comp").append(o.eqNum).append(",\n");
        }
        if (o.useMcg) {
            s.append(" MultiCast_runs: on_UD,\n");
        }
        s.append("Dual_port: OFF,\nDevice: \"").append(h.device()).append("\",\n");
        s.append("Number_of_qps: ").append(o.numQps).append(",\nTransport_type: IB,\n");
        s.append("Connection_type: ").append(o.connection).append(",\nUsing_SRQ: OFF,\n");
        s.append("PCIe_relax_order: ").append(h.relaxedOrdering() ? "ON" : "OFF").append(",\n");
        s.append("ibv_wr_API: OFF,\n");
        if (o.printsTxDepth()) {
            s.append("TX_depth : ").append(o.txDepth).append(",\n");
        }
        if (o.postList > 1) {
            s.append("Post_List: ").append(o.postList).append(",\n");
        }
        if (o.verb == PerfOptions.Verb.SEND && (!o.isClient() || o.duplex)) {
            s.append("RX_depth: ").append(o.rxDepth).append(",\n");
        }
        if (o.kind == PerfOptions.Kind.BW) {
            s.append("CQ_Moderation: ").append(o.cqMod).append(",\n");
        }
        s.append("Mtu: ").append(h.mtuBytes()).append(",\n");
        s.append("Link_type: ").append(h.ethernet() ? "Ethernet" : "IB").append(",\n");
        if (h.gidIndex() >= 0) {
            s.append("GID_index: ").append(h.gidIndex()).append(",\n");
        }
        if (o.verb == PerfOptions.Verb.READ || o.verb == PerfOptions.Verb.ATOMIC) {
            s.append("Outstand_reads: ").append(h.outReads()).append(",\n");
        } else {
            s.append("Max_inline_data: ").append(o.inlineSize).append(",\n");
        }
        s.append("rdma_cm_QPs: ").append(o.rdmaCm ? "ON" : "OFF").append(",\n");
        s.append("Data_ex_method: ").append(o.rdmaCm || o.comRdmaCm ? "rdma_cm" : "Ethernet").append(",\n");
        if (o.rdmaCm && o.tos != -1) {
            s.append("TOS: ").append(o.tos).append(",\n");
        }
        s.append("},\n");
        s.append("results: {\n").append(results).append("},\n");
        s.append("}\n");
        return s.toString();
    }

    /** The results of a bandwidth row (the sums of both sides with -b). */
    static String jsonBw(PerfOptions o, Bw b) {
        return switch (o.output) {
            case BANDWIDTH -> "bw_avg: " + fixed(b.avg(), 6) + ",\n";
            case MESSAGE_RATE -> "msgRate_avg: " + fixed(b.msgRate(), 6) + ",\n";
            default -> {
                int digits = o.reportGbits && b.avg() < 0.1 ? 6 : 2;
                yield "MsgSize: " + b.size() + ",\nn_iterations: " + b.iters() + ",\nBW_peak: " + fixed(b.peak(), digits)
                        + ",\nBW_average: " + fixed(b.avg(), digits) + ",\nMsgRate: " + fixed(b.msgRate(), 6) + ",\n";
            }
        };
    }

    /** The results of a latency row. */
    static String jsonLatency(PerfOptions o, long size, int iters, Latency l) {
        if (o.output == PerfOptions.Output.LATENCY) {
            return "avg_lat: " + fixed(l.avg(), 6) + ",\n";
        }
        return "MsgSize: " + size + ",\nn_iterations: " + iters + ",\nt_min: " + fixed(l.min(), 2) + ",\nt_max: "
                + fixed(l.max(), 2) + ",\nt_typical: " + fixed(l.typical(), 2) + ",\nt_avg: " + fixed(l.avg(), 2)
                + ",\nt_stdev: " + fixed(l.stdev(), 2) + ",\npercentile_99: " + fixed(l.p99(), 2) + ",\npercentile_99.9: "
                + fixed(l.p999(), 2) + ",\n";
    }

    /** The results of a duration-mode latency row (perftest omits the comma after the lone t_avg). */
    static String jsonLatencyDuration(PerfOptions o, long size, long iters, double avgUsec, double tps) {
        if (o.output == PerfOptions.Output.LATENCY) {
            return "t_avg: " + fixed(avgUsec, 6) + "\n";
        }
        return "MsgSize: " + size + ",\nn_iterations: " + iters + ",\nt_avg: " + fixed(avgUsec, 2) + ",\ntps_average: "
                + fixed(tps, 2) + ",\n";
    }

    /** The single value {@code --output} asks for, or null for the full table. */
    static String single(PerfOptions o, Bw b, Latency l) {
        return switch (o.output) {
            case FULL -> null;
            case BANDWIDTH -> b == null ? null : fixed(b.avg(), 6) + "\n";
            case MESSAGE_RATE -> b == null ? null : fixed(b.msgRate(), 6) + "\n";
            case LATENCY -> l == null ? null : fixed(l.avg(), 6) + "\n";
        };
    }
}
