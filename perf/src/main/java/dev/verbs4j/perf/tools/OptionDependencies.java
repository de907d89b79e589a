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
        if (o.duration > 0) {
            if (o.events) {
                return fatal("Duration mode doesn't work with events.");
            }
            if (o.all) {
                return fatal("Duration mode currently doesn't support running on all sizes.");
            }
        }
        if (o.output != Output.FULL) {
            if (o.kind == Kind.BW && o.output == Output.LATENCY) {
                return fatal(" Output verbosity level for BW can be: bandwidth, message_rate");
            }
            if (o.kind == Kind.LAT && o.output != Output.LATENCY) {
                return fatal(" Output verbosity level for LAT can be: latency");
            }
        }
        if (o.mtu != 0 && o.mtu != 256 && o.mtu != 512 && o.mtu != 1024 && o.mtu != 2048 && o.mtu != 4096) {
            err.print(" Invalid MTU - " + o.mtu + " \n");
            err.print(" Please choose mtu from {256,512,1024,2048,4096}\n");
            return 1;
        }
        if (o.rdmaCm && o.isUc()) {
            out.print(PerfOutput.RESULT_LINE);
            out.print(" UC is not supported in librdmacm\n");
            o.quietExit = true;
            return 1;
        }
        if (o.tos != -1 && !o.rdmaCm) {
            out.print(" TOS only valid for rdma_cm based QP and RawEth QP \n");
            o.quietExit = true;
            return 1;
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
        if (o.isUd() && o.inlineSize > PerfOptions.MAX_INLINE_UD) {
            out.print(PerfOutput.RESULT_LINE);
            err.print("Setting inline size to " + PerfOptions.MAX_INLINE_UD + " (Max inline size in UD)\n");
            o.inlineSize = PerfOptions.MAX_INLINE_UD;
        }
        return null;
    }

    /** perftest's exit from its dependency checks: a dashed line on stdout, the message on stderr. */
    private Integer fatal(String message) {
        out.print(PerfOutput.RESULT_LINE);
        err.print(message + "\n");
        o.quietExit = true;
        return 1;
    }
}
