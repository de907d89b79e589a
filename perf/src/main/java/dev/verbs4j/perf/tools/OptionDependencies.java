package dev.verbs4j.perf.tools;

import dev.verbs4j.perf.tools.PerfOptions.Kind;
import dev.verbs4j.perf.tools.PerfOptions.Output;
import dev.verbs4j.perf.tools.PerfOptions.Verb;

import java.io.PrintStream;

/**
 * The checks perftest 4.5 does once the command line is parsed (its {@code force_dependencies}):
 * options that exclude each other end the run with perftest's messages and statuses, and the
 * values that depend on others are settled (CQ moderation, queue depths, inline size, the
 * duration margin, the size of {@code -a}).
 */
final class OptionDependencies {

    private final PerfOptions o;
    private final PrintStream out;
    private final PrintStream err;

    private OptionDependencies(PerfOptions o, PrintStream out, PrintStream err) {
        this.o = o;
        this.out = out;
        this.err = err;
    }

    /** Checks and settles {@code o}; returns null to run, else the status to exit with (after the messages). */
    static Integer check(PerfOptions o, PrintStream out, PrintStream err) {
        return new OptionDependencies(o, out, err).check();
    }

    /** The checks, in perftest's order; null to run, else the status to exit with. */
    private Integer check() {
        if (o.verb == Verb.ATOMIC && (o.sizeGiven && o.size != 8 || o.all)) {
            out.print(PerfOutput.RESULT_LINE);
            out.print("Message size cannot be changed for Atomic tests \n");
            o.quietExit = true;
            return 1;
        }
        if (o.cqModGiven && !o.all && !o.events && o.size > 8192 && o.cqMod > 1) {
            out.print(PerfOutput.RESULT_LINE);
            out.print("Warning: Large message requested and CQ moderation enabled\n");
            out.print("Warning: It can lead to inaccurate results\n");
        }
        if (o.useSrq && o.verb != Verb.SEND) {
            return fatalOut(" Using SRQ only avavilible in SEND tests.");
        }
        if (o.useSrq && o.numQps > o.rxDepth) {
            return fatalOut(" Using SRQ depth should be greater than number of QPs.");
        }
        if (o.dualport) {
            o.numQps *= 2;
            if (o.kind != Kind.BW) {
                return quiet(" Dual-port mode only supports BW tests.");
            }
            if (o.useMcg) {
                return quiet(" Dual-port mode not supported in multicast feature");
            }
        }
        if (o.postList < 1) {
            err.print(" Send Post List size must be positive\n");
            return 1;
        }
        if (o.postList > 1) {
            if (o.kind != Kind.BW) {
                return fatal("Post list is supported in BW tests only");
            }
            if (o.duration == 0 && o.iters % o.postList != 0) {
                return fatal("Number of iterations must be a multiple of post list size");
            }
            if (!o.cqModGiven) {
                o.cqMod = o.postList;
                out.print(PerfOutput.RESULT_LINE);
                out.print("Post List requested - CQ moderation will be the size of the post list\n");
            } else if (o.postList % o.cqMod != 0) {
                return fatal("Post list size must be a multiple of CQ moderation");
            }
        }
        if (o.recvPostList > 1) {
            if (o.kind != Kind.BW) {
                return fatal("Receive post list is supported in BW tests only");
            }
            if (o.duration == 0 && o.iters % o.recvPostList != 0) {
                return fatal("Number of iterations must be a multiple of receive post list size");
            }
        }
        if (o.duration > 0) {
            if (o.events) {
                return fatal("Duration mode doesn't work with events.");
            }
            if (o.all) {
                return fatal("Duration mode currently doesn't support running on all sizes.");
            }
        }
        if (o.duration == 0 && o.cpuUtil) {
            out.print(PerfOutput.RESULT_LINE);
            err.print(" CPU Utilization works only with Duration mode.\n");
        }
        if (o.output != Output.FULL) {
            if (o.kind == Kind.BW && o.output == Output.LATENCY) {
                return fatal(" Output verbosity level for BW can be: bandwidth, message_rate");
            }
            if (o.kind == Kind.LAT && o.output != Output.LATENCY) {
                return fatal(" Output verbosity level for LAT can be: latency");
            }
        }
        // an -m that is no MTU is reported once the port is known (perftest then runs with the active MTU)
        if (o.useMcg && o.gidIndex == -1 && !o.gidGiven) {
            o.gidIndex = 0;
        }
        if (o.rdmaCm) {
            if (o.isUc()) {
                return fatalOut(" UC is not supported in librdmacm");
            }
            if (o.useMcg) {
                return fatalOut(" Perftest still doesn't support Multicast with rdma_cm");
            }
            if (o.dualport) {
                return fatalOut(" Perftest still doesn't support Dual Port with rdma_cm");
            }
        } else if (o.tos != -1) {
            return quiet(" TOS only valid for rdma_cm based QP and RawEth QP ");
        }
        if (o.hopLimit != 64) {
            return quiet(" Hop limit only valid for RawEth QP ");
        }
        if (o.useMcg) {
            o.connection = "UD";
            if (o.duplex) {
                return quiet("Bidirectional mode not supported in multicast");
            }
            if (o.numQps > 1) {
                return quiet("Only 1 QP supported in multicast");
            }
        }
        if (o.verb == Verb.ATOMIC && o.odp) {
            return fatal(" ODP does not support ATOMICS for now");
        }
        if (o.isUc() && o.odp) {
            return fatal(" ODP does not support UC");
        }
        if (o.runInfinitely) {
            if (o.events) {
                return fatal(" run_infinitely does not support events feature yet.");
            }
            if (o.kind == Kind.LAT) {
                return fatal(" run_infinitely exists only in BW tests for now.");
            }
            if (o.duplex && o.verb == Verb.SEND) {
                return fatal(" run_infinitely mode is not supported in SEND Bidirectional BW test");
            }
            if (o.rateLimitType != PerfOptions.RateLimitType.DISABLED) {
                return fatal(" run_infinitely does not support rate limit feature yet");
            }
        }
        Integer hw = hardwareSpecific();
        if (hw != null) {
            return hw;
        }

        if (o.runInfinitely) {
            o.noPeak = true;
        }
        if (o.duration > 0 && o.margin == -1) {
            o.margin = o.duration / 4;
        }
        // perftest's duration defaults to 5 s even when -D is not given
        if (!((o.duration > 0 ? o.duration : 5) > 2 * o.margin)) {
            return fatal("please check that DURATION > 2*MARGIN");
        }
        if (!o.events && o.eqNumGiven) {
            err.print(" Events must be enabled to select a completion vector\n");
            o.quietExit = true;
            return 1;
        }
        if (o.all) {
            o.size = PerfOptions.MAX_SIZE;
        }
        // duration mode counts no iterations: the depths are not cut to -n
        boolean counted = o.duration == 0;
        if (o.kind == Kind.LAT) {
            o.txDepth = 1;
        } else {
            if (counted && o.txDepth > o.iters) {
                o.txDepth = o.iters;
            }
        }
        // after the send depth is cut to -n: a burst is the send depth by default
        Integer rate = rateLimiter();
        if (rate != null) {
            return rate;
        }
        if (o.verb == Verb.SEND) {
            if (counted && o.rxDepth > o.iters) {
                o.rxDepth = o.iters;
            }
            // every receive of an unreliable stream is posted before it starts: no RNR retry there
            if (counted && (o.isUc() || o.isUd()) && o.rxDepth == PerfOptions.DEFAULT_RX_SEND) {
                o.rxDepth = Math.min(o.iters, PerfOptions.UC_MAX_RX);
            }
            if (!o.all && o.rxDepth % 2 == 1) {
                o.rxDepth++;
            }
        }
        if (o.kind == Kind.BW) {
            // not with -e either: perftest keeps the moderation for events; and perftest forces 1
            // before it takes a post list's size as the moderation, so a post list wins
            boolean forceOne = !o.cqModGiven && !o.all && !o.events && o.postList <= 1 && o.size > 8192 && o.verb != Verb.ATOMIC
                    && !o.isUd();
            if (forceOne) {
                o.cqMod = 1;
            }
            if (o.cqMod > o.txDepth) {
                o.cqMod = o.txDepth;
            }
        } else {
            o.cqMod = 1;
        }
        if (o.verb == Verb.READ || o.verb == Verb.ATOMIC) {
            o.inlineSize = 0;
        } else if (o.inlineSize < 0) {
            o.inlineSize = 0; // an unknown vendor (rxe): no inline by default
        }
        if (o.latencyGap > 0 && o.kind != Kind.LAT) {
            return fatal(" Latency gap feature is only for latency tests");
        }
        if (o.reportPerPort && (o.duration == 0 || !o.dualport)) {
            return fatal("report per port feature work only with Duration and Dualport");
        }
        if (o.isUd() && o.inlineSize > PerfOptions.MAX_INLINE_UD) {
            out.print(PerfOutput.RESULT_LINE);
            err.print("Setting inline size to " + PerfOptions.MAX_INLINE_UD + " (Max inline size in UD)\n");
            o.inlineSize = PerfOptions.MAX_INLINE_UD;
        }
        return null;
    }

    /** DC streams and mlx5 crypto, refused as perftest 4.5 (built with both) refuses them for RC/UC/UD. */
    private Integer hardwareSpecific() {
        if (o.hardware.logDciStreams != 0) {
            return fatal(" log_dci_streams supported only on DC");
        }
        if (o.hardware.logActiveDciStreams > 0) {
            return fatal(" log_active_dci_streams supported only on DC");
        }
        if (o.hardware.aesXts) {
            if (!o.connection.equals("RC")) {
                return fatal(" aes_xts supported only on RC");
            }
            if (o.hardware.kekPath == null) {
                return fatal(" Please provide key encryption key file path");
            }
            if (o.hardware.dataEncKeyAppPath == null) {
                return fatal(" Please provide data encryption key app path");
            }
            if (o.hardware.credentialsPath == null) {
                return fatal(" Please provide credentials file path");
            }
            // perftest falls back to ibv_post_send on a device without the ibv_wr API (rxe)
            return fatal(" aes_xts doesn't support old post send");
        }
        if (o.hardware.encryptOnTx) {
            return fatal(" encrypt_on_tx supported only when enc/dec traffic");
        }
        if (o.hardware.sigBefore) {
            return fatal(" sig_before supported only when enc/dec traffic");
        }
        if (o.hardware.credentialsPath != null) {
            return fatal(" giving credentials path supported only with enc/dec traffic");
        }
        if (o.hardware.kekPath != null || o.hardware.dataEncKeyAppPath != null) {
            return fatal(" giving kek path supported only with enc/dec traffic");
        }
        return null;
    }

    /** The static rates perftest can ask a queue pair for, in Gb/s, as it spells them. */
    private static final java.util.List<String> HW_RATES = java.util.List.of("2.5", "5", "10", "14", "20", "25", "30",
            "40", "56", "60", "80", "100", "112", "120", "168", "200", "300", "MAX");

    /** perftest's checks of the rate limiter's options (burst, packet size, the kind of limiter). */
    private Integer rateLimiter() {
        PerfOptions.RateLimitType type = o.rateLimitType;
        if (o.burstSize > 0 && type == PerfOptions.RateLimitType.DISABLED) {
            return fatal(" Can't enable burst mode when rate limiter is off");
        }
        if (o.burstSize <= 0) {
            if (type == PerfOptions.RateLimitType.SW) {
                err.print(" Setting burst size to tx depth = " + o.txDepth + "\n");
            }
            if (type != PerfOptions.RateLimitType.PP) {
                o.burstSize = o.txDepth;
            }
        }
        if (o.typicalPktSize != 0 && type != PerfOptions.RateLimitType.PP) {
            return fatal(" Typical packet size only supports PP rate limiter");
        }
        switch (type) {
            case SW -> {
                if (o.kind != Kind.BW || o.verb == Verb.ATOMIC || (o.verb == Verb.SEND && o.duplex)) {
                    return fatal("SW Rate limiter cann't be executed on non-BW, ATOMIC or bidirectional SEND tests");
                }
            }
            case HW -> {
                if (o.rdmaCm || o.comRdmaCm) {
                    return quietErr(" HW rate limit isn't supported yet with rdma_cm scenarios");
                }
                if (o.rateUnits == PerfOptions.RateUnits.PACKET_PS) {
                    return fatal(" Failed: pps rate limit units is not supported when setting HW rate limit");
                }
                double gbps = o.rateUnits == PerfOptions.RateUnits.MEGA_BYTE_PS ? o.rateLimit * 8 * 1024 * 1024 / 1e9
                        : o.rateLimit;
                if (gbps > 0 && !HW_RATES.contains(o.rateLimitText)) {
                    out.print("\u001b[31mThe input value for hw rate limit is not supported\u001b[0m\n");
                    for (String r : HW_RATES) {
                        out.print("\t\t\t " + r + " Gbps \t\t\n");
                    }
                    return fatal(" Failed: Unknown rate limit value");
                }
            }
            case PP -> {
                return quietErr("Packet Pacing is only supported for Raw Ethernet.");
            }
            default -> {
            }
        }
        return null;
    }

    /** An exit with {@code message} as a line on stdout only. */
    private Integer quiet(String message) {
        out.print(message + "\n");
        o.quietExit = true;
        return 1;
    }

    /** An exit with {@code message} as a line on stderr only. */
    private Integer quietErr(String message) {
        err.print(message + "\n");
        o.quietExit = true;
        return 1;
    }

    /** perftest's exit with a dashed line and the message, both on stdout. */
    private Integer fatalOut(String message) {
        out.print(PerfOutput.RESULT_LINE);
        out.print(message + "\n");
        o.quietExit = true;
        return 1;
    }

    /** perftest's exit from its dependency checks: a dashed line on stdout, the message on stderr. */
    private Integer fatal(String message) {
        out.print(PerfOutput.RESULT_LINE);
        err.print(message + "\n");
        o.quietExit = true;
        return 1;
    }
}
