package dev.verbs4j.tools.naaice;

import dev.verbs4j.naaice.NaaClient;
import dev.verbs4j.naaice.ReferenceKernels;
import dev.verbs4j.tools.Getopt;
import dev.verbs4j.verbs.RdmaArena;

import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * {@code naaice-bench}: for sizes from 1 byte up, ×1.5 per step, connects to a NAA with one
 * input/output parameter of that size, and measures the setup (connect + region setup) and the
 * transfer (one no-op RPC: write, write-back) in microseconds; prints a table, then CSV.
 */
public final class NaaiceBench {

    private NaaiceBench() {
    }

    private static void usage(PrintStream out) {
        out.print("Usage: naaice-bench -a ADDRESS [OPTIONS]\n" + CommonOptions.NAA_USAGE + """
                  -f, --fncode=F          function code (default 3, the no-op)
                  -M, --max=BYTES         the largest size, k, m, g suffixes (default 1048576)
                  -n, --repeat=N          RPCs per size, the median is reported (default 5)
                """ + CommonOptions.CLIENT_USAGE_TAIL);
    }

    /**
     * Runs the sweep against the NAA given by the arguments; returns 0 when every size was
     * measured, 1 when an RPC failed, 2 on a usage error.
     */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        Getopt g = new Getopt("naaice-bench", args, "a:p:l:f:M:n:t:vqh", "address:a", "port:p", "local:l", "fncode:f", "max:M",
                "repeat:n", "timeout:t", "verbose:v", "quiet:q", "help:h");
        int fn = ReferenceKernels.FN_NO_OP;
        long max = 1 << 20;
        int repeat = 5;
        ClientOptions client = new ClientOptions("naaice-bench", out, err, NaaiceBench::usage);
        try {
            for (int c; (c = g.next(err)) != -1; ) {
                switch (c) {
                    case 'f' -> fn = (int) NaaArguments.number("--fncode", g.argument(), 0, 255);
                    case 'M' -> max = NaaArguments.size("--max", g.argument(), 1, Integer.MAX_VALUE);
                    case 'n' -> repeat = (int) NaaArguments.number("--repeat", g.argument(), 1, 1_000_000);
                    default -> {
                        int end = client.take(c, g);
                        if (end != CommonOptions.GO_ON) {
                            return end;
                        }
                    }
                }
            }
        } catch (IllegalArgumentException e) {
            return client.invalid(e);
        }
        client.applyVerbosity();
        NaaArguments at = client.resolve();
        if (at == null) {
            return 2;
        }
        InetSocketAddress naa = at.naa();
        InetSocketAddress local = at.local();
        Duration timeout = client.timeout();
        // one unreported round first: the first connection of a process pays for loading the
        // libraries and compiling the code paths, which would otherwise land in the first row
        try {
            measure(naa, local, 1, fn, 1, timeout);
        } catch (RuntimeException e) {
            err.println("naaice-bench: warm-up: " + e.getMessage());
            return 1;
        }
        List<long[]> rows = new ArrayList<>();
        out.printf("%12s %12s %12s %12s%n", "bytes", "setup_us", "transfer_us", "MB/s");
        for (long size = 1; size <= max; size = Math.max(size + 1, (long) (size * 1.5))) {
            try {
                long[] r = measure(naa, local, size, fn, repeat, timeout);
                double mbps = 2.0 * size / (r[1] / 1e3);
                rows.add(new long[]{size, r[0] / 1000, r[1] / 1000});
                out.printf("%12d %12d %12d %12.3f%n", size, r[0] / 1000, r[1] / 1000, mbps);
            } catch (RuntimeException e) {
                err.println("naaice-bench: " + size + " bytes: " + e.getMessage());
                return 1;
            }
        }
        out.println();
        out.println("bytes,setup_us,transfer_us");
        for (long[] r : rows) {
            out.println(r[0] + "," + r[1] + "," + r[2]);
        }
        return 0;
    }

    /** Connects with one in/out parameter of {@code size} bytes; returns the setup and the median RPC time in ns. */
    private static long[] measure(InetSocketAddress naa, InetSocketAddress local, long size, int fn, int repeat, Duration timeout) {
        try (RdmaArena arena = RdmaArena.ofShared()) {
            MemorySegment s = arena.allocate(size, 4096);
            NaaClient.Builder b = NaaClient.builder(naa).inOut(s);
            if (local != null) {
                b.localAddress(local);
            }
            long[] times = new long[repeat];
            long setup;
            try (NaaClient client = b.build()) {
                client.connect(timeout);
                client.setupRegions(timeout);
                setup = client.setupNanos();
                for (int r = 0; r < repeat; r++) {
                    client.rpc(fn, timeout);
                    times[r] = client.lastRpcNanos();
                }
            }
            Arrays.sort(times);
            return new long[]{setup, times[repeat / 2]};
        }
    }
}
