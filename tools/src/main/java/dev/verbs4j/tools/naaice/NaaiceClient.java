package dev.verbs4j.tools.naaice;

import dev.verbs4j.naaice.NaaClient;
import dev.verbs4j.naaice.NaaiceException;
import dev.verbs4j.naaice.ReferenceKernels;
import dev.verbs4j.tools.Getopt;
import dev.verbs4j.tools.OperatorLog;
import dev.verbs4j.tools.Sizes;
import dev.verbs4j.verbs.RdmaArena;

import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code naaice-client}: connects to a NAA, sets up one input/output parameter per size, runs
 * {@code --repeat} RPCs of {@code --fncode}, prints the setup and transfer time of each and, for
 * the reference kernels 1..3, verifies every byte (exit status 1 on a difference).
 */
public final class NaaiceClient {

    private NaaiceClient() {
    }

    private static void usage(PrintStream out) {
        out.print("Usage: naaice-client -a ADDRESS [OPTIONS]\n" + CommonOptions.NAA_USAGE + """
                  -f, --fncode=F          function code 1..127 (default 1)
                  -s, --sizes=N,N,...     parameter sizes in bytes (k, m, g suffixes), each an input/output region (default 1024)
                  -n, --repeat=N          RPCs on the connection (default 1)
                """ + CommonOptions.CLIENT_USAGE_TAIL + """
                Parameter i starts filled with the byte 10+i; for functions 1, 2 (add 1, 2) and 3 (no-op) the results are checked.
                """);
    }

    /**
     * Runs the tool with {@code out} and {@code err} as its streams: 0 when every RPC succeeded
     * and (for functions 1..3) every byte was as expected, 1 otherwise, 2 on a usage error.
     */
    public static int run(String[] args, PrintStream out, PrintStream err) throws Exception {
        Getopt g = new Getopt("naaice-client", args, "a:p:l:f:s:n:t:vqh", "address:a", "port:p", "local:l", "fncode:f", "sizes:s",
                "repeat:n", "timeout:t", "verbose:v", "quiet:q", "help:h");
        String address = null;
        String localAddress = null;
        int port = NaaClient.DEFAULT_PORT;
        int fn = 1;
        List<Long> sizes = List.of(1024L);
        int repeat = 1;
        Duration timeout = Duration.ofSeconds(60);
        CommonOptions common = new CommonOptions(out, out, NaaiceClient::usage);
        int c;
        while ((c = g.next(err)) != -1) {
            switch (c) {
                case 'a' -> address = g.argument();
                case 'p' -> port = Integer.parseInt(g.argument());
                case 'l' -> localAddress = g.argument();
                case 'f' -> fn = Integer.parseInt(g.argument());
                case 's' -> {
                    List<Long> l = new ArrayList<>();
                    for (String s : g.argument().split(",")) {
                        l.add(Sizes.parse(s));
                    }
                    sizes = l;
                }
                case 'n' -> repeat = Integer.parseInt(g.argument());
                case 't' -> timeout = Duration.ofSeconds(Long.parseLong(g.argument()));
                default -> {
                    int end = common.take(c);
                    if (end != CommonOptions.GO_ON) {
                        return end;
                    }
                }
            }
        }
        if (address == null) {
            usage(out);
            return 2;
        }
        OperatorLog.verbosity(common.verbosity());
        int add = switch (fn) {
            case 1 -> 1;
            case 2 -> 2;
            case 3 -> 0;
            default -> -1;
        };
        InetSocketAddress naa = new InetSocketAddress(InetAddress.getByName(address), port);
        try (RdmaArena arena = RdmaArena.ofShared()) {
            NaaClient.Builder b = NaaClient.builder(naa).maxRequestEntries(Math.max(1, Math.min(255, sizes.size())));
            if (localAddress != null) {
                b.localAddress(new InetSocketAddress(InetAddress.getByName(localAddress), 0));
            }
            List<MemorySegment> params = new ArrayList<>();
            for (int i = 0; i < sizes.size(); i++) {
                MemorySegment s = arena.allocate(sizes.get(i), 4096);
                s.fill((byte) (10 + i));
                params.add(s);
                b.inOut(s);
            }
            int failures = 0;
            try (NaaClient client = b.build()) {
                client.connect(timeout);
                client.setupRegions(timeout);
                out.printf("connected to %s, %d parameters set up in %d µs%n", naa, params.size(), client.setupNanos() / 1000);
                for (int r = 1; r <= repeat; r++) {
                    try {
                        client.rpc(fn, timeout);
                    } catch (NaaiceException e) {
                        out.printf("RPC %d: %s%n", r, e.getMessage());
                        failures++;
                        if (e.reason() != NaaiceException.Reason.NAA_RETURN_CODE) {
                            break;
                        }
                        continue;
                    }
                    String check = "";
                    if (add >= 0) {
                        int bad = 0;
                        for (int i = 0; i < params.size(); i++) {
                            byte want = (byte) (10 + i + add * r);
                            long at = ReferenceKernels.firstDifference(params.get(i), want);
                            if (at >= 0) {
                                bad++;
                                out.printf("RPC %d: parameter %d differs at byte %d: %d, expected %d%n", r, i, at,
                                        params.get(i).get(ValueLayout.JAVA_BYTE, at) & 0xff, want & 0xff);
                            }
                        }
                        check = bad == 0 ? ", verified" : ", " + bad + " parameters DIFFER";
                        failures += bad;
                    }
                    out.printf("RPC %d: transfer %d µs, return code %d, %d bytes in the last write%s%n", r,
                            client.lastRpcNanos() / 1000, client.lastReturnCode(), client.bytesReceived(), check);
                }
            } catch (NaaiceException e) {
                out.println("naaice-client: " + e.getMessage());
                return 1;
            }
            return failures == 0 ? 0 : 1;
        }
    }
}
