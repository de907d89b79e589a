package dev.verbs4j.perf.tools;

import dev.verbs4j.perf.tools.PerfOptions.Kind;
import dev.verbs4j.perf.tools.PerfOptions.Verb;
import dev.verbs4j.tools.ToolExit;
import dev.verbs4j.verbs.Device;

import java.io.PrintStream;

/**
 * The engine behind the eight perftest tools: one run of one tool on one side, as perftest 4.5 runs
 * it. It parses the options ({@link PerfOptions}), opens the control channel ({@link KeyExchange}
 * over {@link Wire}, or {@link CmRun} with {@code -R}), builds the verbs objects
 * ({@link PerftestDevice}, {@link PerftestResources}), connects them, follows the tool's exact sequence of exchanges, runs
 * the measurement on the allocation-free {@link DataPath} ({@link LatencyLoops},
 * {@link BandwidthLoops}, {@link DurationMode}) and prints what perftest prints
 * ({@link PerfReport}, {@link PerfOutput}). A run owns every native object it creates and frees
 * them before {@link #run} returns.
 */
final class Perftest {


    final PerfOptions o;
    final PrintStream out;
    final PrintStream err;
    private final PerftestDevice device;
    private final PerftestResources resources;
    private final KeyExchange keys;
    /** The data path, once the resources exist. */
    private DataPath path;
    /** The RDMA CM side of a -R run, else null. */
    CmRun cm;
    /** The counters of -W, else null. */
    private PortCounters counters;
    /** Whether the send tools' measurement started (perftest's error paths differ before and after). */
    private boolean testStarted;

    /** -W: the counters read at the start (perftest opens them with its control channel's resources). */
    private void openCounters(Device found) throws ToolExit {
        if (o.counters == null) {
            return;
        }
        counters = PortCounters.open(o.counters, found.name(), o.ibPort);
        if (counters == null) {
            err.print(" Unable to access performance counters\n");
            throw exit(" Unable to create RDMA_CM resources", 1);
        }
    }

    private Perftest(PerfOptions o, PrintStream out, PrintStream err) {
        this.o = o;
        this.out = out;
        this.err = err;
        this.device = new PerftestDevice(o, out, err);
        this.resources = new PerftestResources(o, out, err, device);
        this.keys = new KeyExchange(o, out, err, device, resources);
    }

    /** Runs the tool {@code program} with {@code args}; returns perftest's exit status. */
    static int run(String program, Verb verb, Kind kind, String[] args, PrintStream out, PrintStream err) {
        PerfOptions o = new PerfOptions(program, verb, kind);
        Integer bad = o.parse(args, out, err);
        if (bad != null) {
            if (!o.quietExit) {
                err.print(" Parser function exited with Error\n");
            }
            out.flush();
            err.flush();
            return bad;
        }
        try {
            o.checkAliveSeconds = AliveCheck.period();
        } catch (IllegalArgumentException e) {
            err.print(" " + e.getMessage() + "\n");
            err.flush();
            return 1;
        }
        Perftest t = new Perftest(o, out, err);
        try {
            return t.execute();
        } catch (ToolExit e) {
            return e.status();
        } finally {
            t.release();
            out.flush();
            err.flush();
        }
    }

    // ---- the whole run ----

    private int execute() throws ToolExit {
        Device found = device.findDevice();
        if (o.verb == Verb.READ || o.verb == Verb.ATOMIC) {
            out.print(PerfOutput.RESULT_LINE);
            err.print("Device not recognized to implement inline feature. Disabling it\n");
        }
        if (o.rdmaCm) {
            openCounters(found);
            return CmRun.run(this);
        }
        device.open(found);
        openCounters(found);
        if (o.comRdmaCm) {
            return CmRun.runControlOnly(this);
        }
        if (!o.isClient()) {
            out.print("\n************************************\n");
            out.print("* Waiting for client to connect... *\n");
            out.print("************************************\n");
        }
        keys.openTcp();
        keys.prefix();
        createResources(false);
        if (Multicast.attaches(o)) {
            resources.attachMulticast();
        }
        out.print(PerfOutput.header(o, resources.headerInfo()));
        return sequence();
    }

    /** The verbs objects (see {@link PerftestResources#create}) and the data path on them. */
    void createResources(boolean cmQps) throws ToolExit {
        resources.create(cmQps);
        path = new DataPath(o, err, resources);
    }

    /** The tool's sequence of exchanges and measurements, from the first key exchange to the end. */
    int sequence() throws ToolExit {
        boolean lat = o.kind == Kind.LAT;
        PerfReport report = new PerfReport(o, out, err, resources);
        report.counters(counters);
        RunParts run = new RunParts(o, out, err, resources, path, keys, report);
        DurationMode duration = new DurationMode(run);
        switch (o.verb) {
            case SEND -> {
                keys.keysAll();
                if (o.useMcg) {
                    joinSender();
                }
                connect(lat || o.isClient() || o.duplex);
                keys.barrier();
                keys.printAddresses();
                // from here perftest's failures leave without destroying anything, and its end detaches the group
                testStarted = true;
                return lat ? new LatencyLoops(run, duration).sendLatency()
                        : new BandwidthLoops(run, duration).sendBandwidth();
            }
            case WRITE, READ, ATOMIC -> {
                if (lat) {
                    keys.barrier();
                }
                keys.keysAll();
                connect(lat || o.isClient() || o.duplex);
                keys.printAddresses();
                if (o.verb == Verb.WRITE && !lat) {
                    keys.barrierIndented(); // ib_write_bw alone indents this failure line
                } else {
                    keys.barrier();
                }
                if (lat) {
                    LatencyLoops loops = new LatencyLoops(run, duration);
                    return o.verb == Verb.WRITE ? loops.writeLatency() : loops.readLatency();
                }
                return new BandwidthLoops(run, duration).rdmaBandwidth();
            }
            default -> throw new IllegalStateException();
        }
    }

    /**
     * Multicast, once the peer's group is known: perftest joins the sending port to it (a subnet
     * administrator request on InfiniBand only), and ib_send_bw's client then waits 50 ms for the
     * join to reach the switches.
     */
    private void joinSender() throws ToolExit {
        boolean bwSender = o.kind == Kind.BW && (o.isClient() || o.duplex);
        if (!resources.headerInfo().ethernet() && (bwSender || o.kind == Kind.LAT)) {
            // InfiniBand: perftest's join through the subnet administrator, which these tools do
            // not make, refused with the lines perftest prints when that join fails
            if (bwSender) {
                err.print("Couldn't Register the Mcast group on the SM\n");
            }
            throw exit(bwSender ? " Unable to Join Sender to Mcast gid" : " Failed to Join Mcast request", 1);
        }
        if (bwSender) {
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw exit(" Interrupted while waiting for the peer", 1);
            }
        }
    }

    /** RTR for every queue pair (and RTS when {@code send}); RDMA CM connected them already. */
    private void connect(boolean send) throws ToolExit {
        if (!o.rdmaCm) {
            resources.connect(send);
        }
    }

    // ---- what RDMA CM uses ----

    PerftestDevice device() {
        return device;
    }

    PerftestResources resources() {
        return resources;
    }

    KeyExchange keys() {
        return keys;
    }

    /** The QPN messages of UD over RDMA CM, once the resources exist. */
    CmDatagram datagrams() {
        return new CmDatagram(err, resources, path);
    }

    ToolExit exit(String message, int status) {
        return ToolExit.printed(err, message, status);
    }

    // ---- tear-down ----

    /** Frees everything that is left, quietly. */
    private void release() {
        if (o.waitDestroy > 0 && resources.created()) {
            out.print(" Waiting " + o.waitDestroy + " seconds before releasing resources...\n");
            out.flush();
            try {
                Thread.sleep(o.waitDestroy * 1000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (cm != null) {
            cm.disconnect();
        } else {
            keys.close();
        }
        if (resources.attachedMulticast() && !testStarted && o.kind == Kind.BW) {
            err.print(Multicast.busyTearDown());
        }
        resources.close();
        device.close();
        if (cm != null) {
            cm.close(); // the context belongs to librdmacm
        }
        resources.closeBuffer();
    }
}
