package dev.verbs4j.tools.naaice;

import dev.verbs4j.naaice.NaaClient;
import dev.verbs4j.naaice.NaaServer;
import dev.verbs4j.tools.Getopt;
import dev.verbs4j.tools.OperatorLog;
import dev.verbs4j.tools.Sizes;

import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;

/**
 * {@code naaice-server}: runs the software NAA with the reference kernels (1: +1, 2: +2, 3: no-op)
 * until killed, or for {@code --duration} seconds. The server logs each connection and RPC, one
 * line each on standard error when run as a program (see {@link dev.verbs4j.tools.OperatorLog});
 * {@code -v} adds DEBUG events, {@code -q} leaves warnings and errors.
 */
public final class NaaiceServer {

    private NaaiceServer() {
    }

    private static void usage(PrintStream out) {
        out.print("""
                Usage: naaice-server [OPTIONS]
                  -p, --port=PORT            listen on PORT (default 12345)
                  -b, --bind=ADDRESS         listen on this address only (default: all)
                  -c, --max-connections=N    connections served at once (default 1024)
                  -r, --max-regions=N        regions per connection (default 32)
                  -m, --max-bytes=N          bytes per connection, k, m, g suffixes (default 1073741824)
                  -R, --max-total-regions=N  regions of all connections together (default 65536)
                  -M, --max-total-bytes=N    bytes of all connections together, k, m, g suffixes (default 4294967296)
                  -d, --duration=SECONDS     stop after this many seconds (default: run until killed)
                  -v, --verbose              log each event in more detail (DEBUG as well as INFO)
                  -q, --quiet                log warnings and errors only
                  -h, --help                 this text
                Kernels: function 1 adds 1, function 2 adds 2 to every byte of every parameter; 3 does nothing.
                """);
    }

    /**
     * Runs the server with {@code out} and {@code err} as its streams until {@code --duration}
     * passes or the calling thread is interrupted, then stops it and returns 0 (2 on a usage error).
     */
    public static int run(String[] args, PrintStream out, PrintStream err) throws Exception {
        Getopt g = new Getopt("naaice-server", args, "p:b:c:r:m:R:M:d:vqh", "port:p", "bind:b", "max-connections:c",
                "max-regions:r", "max-bytes:m", "max-total-regions:R", "max-total-bytes:M", "duration:d", "verbose:v", "quiet:q", "help:h");
        int port = NaaClient.DEFAULT_PORT;
        String bind = null;
        NaaServer.Builder b = NaaServer.builder().logEachRpc(true);
        long duration = -1;
        CommonOptions common = new CommonOptions(out, err, NaaiceServer::usage);
        int c;
        while ((c = g.next(err)) != -1) {
            switch (c) {
                case 'p' -> port = Integer.parseInt(g.argument());
                case 'b' -> bind = g.argument();
                case 'c' -> b.maxConnections(Integer.parseInt(g.argument()));
                case 'r' -> b.maxRegions(Integer.parseInt(g.argument()));
                case 'm' -> b.maxBytes(Sizes.parse(g.argument()));
                case 'R' -> b.maxTotalRegions(Long.parseLong(g.argument()));
                case 'M' -> b.maxTotalBytes(Sizes.parse(g.argument()));
                case 'd' -> duration = Long.parseLong(g.argument());
                default -> {
                    int end = common.take(c);
                    if (end != CommonOptions.GO_ON) {
                        return end;
                    }
                }
            }
        }
        OperatorLog.verbosity(common.verbosity());
        InetSocketAddress address = bind == null ? new InetSocketAddress(port) : new InetSocketAddress(InetAddress.getByName(bind), port);
        NaaServer server = b.bind(address).start();
        out.println("naaice-server: listening on " + address + " (port " + server.port() + ")");
        Thread hook = new Thread(server::close);
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            if (duration >= 0) {
                Thread.sleep(duration * 1000);
            } else {
                Thread.sleep(Long.MAX_VALUE);
            }
        } catch (InterruptedException e) {
            // stop
        }
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException e) {
            return 0; // the JVM is exiting: the hook closes the server
        }
        server.close();
        out.println("naaice-server: stopped after " + server.acceptedCount() + " connections, " + server.rpcCount() + " RPCs");
        return 0;
    }
}
