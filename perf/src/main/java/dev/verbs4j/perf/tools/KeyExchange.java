package dev.verbs4j.perf.tools;


import dev.verbs4j.tools.ToolExit;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.PrintStream;

/**
 * The out-of-band side of a perftest run on its {@link Wire.Channel} (TCP, or the RDMA CM control
 * connection of {@code -R}): the opening exchanges (version, cycle buffer, cache line, MTU), the
 * K exchanges carrying the queue-pair descriptions (which also serve as barriers), the reports
 * of the bandwidth tests, and the final K with its "done". Owns the channel until it is finished.
 */
final class KeyExchange {

    private final PerfOptions o;
    private final PrintStream out;
    private final PrintStream err;
    private final PerftestDevice device;
    private final PerftestResources res;
    private Wire.Channel channel;

    KeyExchange(PerfOptions o, PrintStream out, PrintStream err, PerftestDevice device, PerftestResources res) {
        this.o = o;
        this.out = out;
        this.err = err;
        this.device = device;
        this.res = res;
    }

    private ToolExit exit(String message, int status) {
        return ToolExit.printed(err, message, status);
    }

    /** Connects to the server (client) or waits for the client (server) over TCP. */
    void openTcp() throws ToolExit {
        try {
            if (o.serverName != null) {
                channel = Wire.Tcp.connect(o.serverName, o.tcpPort, o.sourceIp);
            } else {
                channel = Wire.Tcp.accept(o.tcpPort, o.sourceIp);
            }
        } catch (InterruptedIOException e) {
            throw exit(" Interrupted while waiting for the peer", 1);
        } catch (java.net.UnknownHostException e) {
            // getaddrinfo's failure, in glibc's words, and perftest's lines after it
            err.print(nameResolutionError(e, o.serverName) + " for " + o.serverName + ":" + o.tcpPort + "\n");
            err.print("Problem in resolving basic address and port\n");
            err.print("Unable to open file descriptor for socket connection");
            throw exit(" Unable to init the socket connection", 1);
        } catch (IOException | RuntimeException e) {
            if (o.serverName != null) {
                err.print("Couldn't connect to " + o.serverName + ":" + o.tcpPort + "\n");
                err.print("Unable to open file descriptor for socket connection");
            } else {
                err.print("Couldn't listen to port " + o.tcpPort + "\n");
            }
            throw exit(" Unable to init the socket connection", 1);
        }
    }

    /**
     * getaddrinfo's words for each name that failed to resolve in this JVM: the JDK keeps a failed
     * lookup for a while (networkaddress.cache.negative.ttl) and then throws without them.
     */
    private static final java.util.Map<String, String> FAILED_LOOKUPS = new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * glibc's text for a name that did not resolve: the JDK puts getaddrinfo's gai_strerror after
     * the name in its message; a lookup the JDK answers from its cache of failures has the text of
     * the lookup that failed before. Without either, EAI_AGAIN's text when no name server is
     * configured, else EAI_NONAME's.
     */
    static String nameResolutionError(java.net.UnknownHostException e, String host) {
        String m = e.getMessage();
        if (m != null && m.startsWith(host + ": ")) {
            String text = m.substring(host.length() + 2);
            FAILED_LOOKUPS.put(host, text);
            return text;
        }
        String before = FAILED_LOOKUPS.get(host);
        if (before != null) {
            return before;
        }
        try {
            for (String line : java.nio.file.Files.readAllLines(java.nio.file.Path.of("/etc/resolv.conf"))) {
                if (line.strip().startsWith("nameserver")) {
                    return "Name or service not known";
                }
            }
        } catch (IOException ex) {
            // no resolver configuration: no name server
        }
        return "Temporary failure in name resolution";
    }

    /** Exchanges over {@code c} from now on (RDMA CM's control connection, which RDMA CM closes). */
    void use(Wire.Channel c) {
        channel = c;
    }

    /** The exchanges every tool starts with: version, page size and cache line, MTU. */
    void prefix() throws ToolExit {
        if (o.dontXchgVersions) {
            // as perftest 4.5: nothing is exchanged, and the empty peer version then fails the check
            throw exit("Current implementation is not compatible with versions older than 5.70", 1);
        }
        try {
            double remote = Wire.parseVersion(channel.exchange(Wire.version()));
            if (remote < 5.70) {
                throw exit("Current implementation is not compatible with versions older than 5.70", 1);
            }
            int cycle = Math.max(device.cycleBuffer(), Wire.int32(channel.exchange(Wire.int32(device.cycleBuffer()))));
            int ownLine = PerftestDevice.systemCacheLine();
            int line = Math.max(ownLine, Wire.int32(channel.exchange(Wire.int32(ownLine))));
            int theirs = Wire.mtu(channel.exchange(Wire.mtu(device.mtuCode())));
            device.agree(cycle, line, theirs);
        } catch (IOException e) {
            throw exchangeFailed();
        }
        device.fitDatagram();
    }

    // ---- the K exchanges ----

    private boolean withGid() {
        return device.gidIndex() >= 0;
    }

    private byte[] keyMessage(Wire.Dest d) {
        return o.rdmaCm || o.comRdmaCm ? Wire.binary(d, device.gidIndex()) : Wire.text(d, withGid());
    }

    private Wire.Dest parseKey(byte[] b) throws Wire.ProtocolException {
        return o.rdmaCm || o.comRdmaCm ? Wire.parseBinary(b) : Wire.parseText(b, withGid());
    }

    /**
     * One K exchange carrying QP {@code i}'s description; returns the peer's. {@code indented}: the
     * failure line is perftest's " Failed to exchange…" of that call site, else "Failed to exchange…"
     * (perftest's tools indent it at some sites and not at others).
     */
    private Wire.Dest key(int i, boolean indented) throws ToolExit {
        return key(i, false, (indented ? " " : "") + "Failed to exchange data between server and clients");
    }

    /**
     * One K exchange, with {@code last} the channel's last one (see {@link Wire.Channel#lastExchange});
     * {@code failure} is the line perftest prints at that call site when the exchange fails.
     */
    private Wire.Dest key(int i, boolean last, String failure) throws ToolExit {
        try {
            byte[] mine = keyMessage(res.local(i));
            return parseKey(last ? channel.lastExchange(mine) : channel.exchange(mine));
        } catch (InterruptedIOException e) {
            throw exit(" Interrupted while waiting for the peer", 1);
        } catch (IOException e) {
            err.print("ethernet_read_keys: Couldn't read remote address\n");
            err.print(unableToRead());
            throw exit(failure, 1);
        }
    }

    /**
     * perftest's words for a failed read of the peer's keys, which differ by role: the client
     * reads "from" the socket, the server "to" it (ctx_hand_shake).
     */
    private String unableToRead() {
        return o.serverName != null ? " Unable to read from socket/rdma_cm\n" : " Unable to read to socket/rdma_cm\n";
    }

    /** K for every queue pair, in order, keeping the peer's descriptions. */
    void keysAll() throws ToolExit {
        // perftest indents this failure in ib_write_bw only
        boolean indented = o.verb == PerfOptions.Verb.WRITE && o.kind == PerfOptions.Kind.BW;
        for (int i = 0; i < o.numQps; i++) {
            res.peer(i, key(i, indented));
        }
        // perftest: both GIDs IPv4-mapped or both not (--ipv6 on one side only fails here)
        if (!o.rdmaCm && ipv4Mapped(res.local(0).gid()) != ipv4Mapped(res.peer(0).gid())) {
            err.print("\n Found Incompatibility issue with GID types.\n");
            err.print(" Please Try to use a different IP version.\n\n");
            throw new ToolExit(1);
        }
    }

    /** Whether a GID is an IPv4-mapped IPv6 address ({@code ::ffff:a.b.c.d}). */
    static boolean ipv4Mapped(byte[] gid) {
        for (int i = 0; i < 10; i++) {
            if (gid[i] != 0) {
                return false;
            }
        }
        return gid[10] == (byte) 0xff && gid[11] == (byte) 0xff;
    }

    /** A synchronising K with QP 0's description (the answer is not needed); its failure line unindented. */
    void barrier() throws ToolExit {
        key(0, false);
    }

    /** As {@link #barrier()}, at a site where perftest indents the failure line. */
    void barrierIndented() throws ToolExit {
        key(0, true);
    }

    /**
     * The barrier of ib_write_bw, ib_read_bw and ib_atomic_bw with -b before a size's run (and
     * after it with -a), whose failure perftest reports in words of its own.
     */
    void barrierBetweenSizes() throws ToolExit {
        key(0, false, "Failed to sync between server and client between different msg sizes");
    }

    /** The address lines: every local one, then per queue pair a K and the peer's line. */
    void printAddresses() throws ToolExit {
        for (int i = 0; i < o.numQps; i++) {
            out.print(PerfOutput.address(o, "local", res.local(i)));
        }
        for (int i = 0; i < o.numQps; i++) {
            res.peer(i, key(i, true));
            out.print(PerfOutput.address(o, "remote", res.peer(i)));
        }
    }

    // ---- the reports of the bandwidth tests ----

    /** Sends this side's result and returns the peer's. */
    PerfOutput.Bw exchangeReport(PerfOutput.Bw mine) throws ToolExit {
        try {
            long size = Wire.int64(channel.exchange(Wire.int64(mine.size())));
            long iters = Wire.int64(channel.exchange(Wire.int64(mine.iters())));
            double peak = Wire.float64(channel.exchange(Wire.float64(mine.peak())));
            double avg = Wire.float64(channel.exchange(Wire.float64(mine.avg())));
            double rate = Wire.float64(channel.exchange(Wire.float64(mine.msgRate())));
            return new PerfOutput.Bw(size, iters, peak, avg, rate);
        } catch (IOException e) {
            throw exchangeFailed();
        }
    }

    // ---- the end ----

    /** The final K and "done"; the channel is closed after. */
    void closeExchange() throws ToolExit {
        closeExchange("Failed to close connection between server and client");
    }

    /** As {@link #closeExchange()}, with {@code failed} as the last line of a failure. */
    private void closeExchange(String failed) throws ToolExit {
        key(0, true, failed);
        channel.finish(true);
        channel = null;
    }

    /**
     * The final K of the send tests, whose failure perftest reports but does not fail on (ib_send_bw
     * indents its line, ib_send_lat does not).
     */
    void closeExchangeLenient() {
        try {
            closeExchange((o.kind == PerfOptions.Kind.BW ? " " : "") + "Failed to close connection between server and client");
        } catch (ToolExit e) {
            err.print(" Trying to close this side resources\n");
        }
    }

    /** The end without a final K (ib_write_lat): the channel is closed. */
    void finishWithoutKey() {
        channel.finish(false);
        channel = null;
    }

    private ToolExit exchangeFailed() {
        return exit(" Failed to exchange data between server and clients", 1);
    }

    /** Closes the channel if it is still open, quietly. */
    void close() {
        if (channel != null) {
            channel.close();
        }
    }
}
