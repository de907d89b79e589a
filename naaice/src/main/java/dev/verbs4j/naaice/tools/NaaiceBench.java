package dev.verbs4j.naaice.tools;

import dev.verbs4j.naaice.NaaClient;
import dev.verbs4j.naaice.ReferenceKernels;
import dev.verbs4j.verbs.tools.Getopt;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code naaice-bench}: for sizes from 1 byte up, ×1.5 per step, connects to a NAA with one
 * input/output parameter of that size, and measures the setup (connect + region setup) and the
 * transfer (one no-op RPC: write, write-back) in microseconds; prints a table, then CSV.
 */
public final class NaaiceBench {

    private NaaiceBench() {
    }

    private static void usage() {
        System.out.print("""
                Usage: naaice-bench -a ADDRESS [OPTIONS]
                  -a, --address=ADDRESS   the NAA's address
                  -p, --port=PORT         the NAA's port (default 12345)
                  -l, --local=ADDRESS     the local address to connect from
                  -f, --fncode=F          function code (default 3, the no-op)
                  -M, --max=BYTES         the largest size (default 1048576)
                  -n, --repeat=N          RPCs per size, the median is reported (default 5)
                  -t, --timeout=SECONDS   timeout of each step (default 60)
                  -h, --help              this text
                """);
    }

    /** Runs the sweep against the NAA given by the arguments; exit status 2 on a usage error. */
    public static void main(String[] args) throws Exception {
        Getopt g = new Getopt("naaice-bench", args, "a:p:l:f:M:n:t:h", "address:a", "port:p", "local:l", "fncode:f", "max:M",
                "repeat:n", "timeout:t", "help:h");
        String address = null;
        String localAddress = null;
        int port = NaaClient.DEFAULT_PORT;
        int fn = ReferenceKernels.FN_NO_OP;
        long max = 1 << 20;
        int repeat = 5;
        Duration timeout = Duration.ofSeconds(60);
        int c;
        while ((c = g.next(System.err)) != -1) {
            switch (c) {
                case 'a' -> address = g.argument();
                case 'p' -> port = Integer.parseInt(g.argument());
                case 'l' -> localAddress = g.argument();
                case 'f' -> fn = Integer.parseInt(g.argument());
                case 'M' -> max = Long.parseLong(g.argument());
                case 'n' -> repeat = Integer.parseInt(g.argument());
                case 't' -> timeout = Duration.ofSeconds(Long.parseLong(g.argument()));
                case 'h' -> {
                    usage();
                    return;
                }
                default -> {
                    usage();
                    System.exit(2);
                }
            }
        }
        if (address == null) {
            usage();
            System.exit(2);
        }
        InetSocketAddress naa = new InetSocketAddress(InetAddress.getByName(address), port);
        InetSocketAddress local = localAddress == null ? null : new InetSocketAddress(InetAddress.getByName(localAddress), 0);
        List<long[]> rows = new ArrayList<>();
        System.out.printf("%12s %12s %12s %12s%n", "bytes", "setup_us", "transfer_us", "MB/s");
        for (long size = 1; size <= max; size = Math.max(size + 1, (long) (size * 1.5))) {
            try (Arena arena = Arena.ofShared()) {
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
                java.util.Arrays.sort(times);
                long median = times[repeat / 2];
                double mbps = 2.0 * size / (median / 1e3);
                rows.add(new long[]{size, setup / 1000, median / 1000});
                System.out.printf("%12d %12d %12d %12.2f%n", size, setup / 1000, median / 1000, mbps);
            }
        }
        System.out.println();
        System.out.println("bytes,setup_us,transfer_us");
        for (long[] r : rows) {
            System.out.println(r[0] + "," + r[1] + "," + r[2]);
        }
    }
}
