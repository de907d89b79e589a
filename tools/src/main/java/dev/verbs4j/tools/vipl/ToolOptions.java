package dev.verbs4j.tools.vipl;

import dev.verbs4j.tools.Getopt;
import dev.verbs4j.tools.Sizes;
import dev.verbs4j.vipl.VipReliabilityLevel;

import java.io.PrintStream;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The options of {@code vipl-pingpong} and {@code vipl-bw}, parsed and checked. A value filled by
 * {@link #parse}; owns no memory.
 */
final class ToolOptions {

    /** The largest message: also the MaxTransferSize both ends give their VI (they must be equal, D8). */
    static final int MAX_SIZE = 1 << 20;
    /** The most send (client) or receive (server) descriptors of {@code vipl-bw} in flight. */
    static final int MAX_WINDOW = 128;
    /** The largest buffer the bandwidth server registers for its window (window × largest size). */
    static final long MAX_WINDOW_BYTES = 64L << 20;

    /** The most sizes of one run (they travel in the client's first message). */
    static final int MAX_SIZES = 1000;

    /** Bad options: the message, then exit status 2. */
    static final class UsageException extends Exception {
        private static final long serialVersionUID = 1L;

        UsageException(String message) {
            super(message);
        }
    }

    final boolean bw;
    final String program;
    String device;
    int port = 18515;
    String local;
    String server;
    int[] sizes;
    int iters;
    int warmup = -1;
    VipReliabilityLevel level = VipReliabilityLevel.RELIABLE_DELIVERY;
    boolean levelGiven;
    boolean waitMode;
    boolean cq;
    long timeoutMillis = 30_000;
    int window = 32;
    boolean verify;
    boolean help;

    private ToolOptions(boolean bw) {
        this.bw = bw;
        this.program = bw ? "vipl-bw" : "vipl-pingpong";
        this.iters = 1000;
        this.sizes = new int[]{bw ? 65536 : 4096};
    }

    /** The discriminator of the server's VI network address: the port number in decimal. */
    byte[] discriminator() {
        return Integer.toString(port).getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    }

    /** Warm-up iterations per size: as given, or a tenth of the iterations, at least 1 and at most 100. */
    int warmup() {
        return warmup >= 0 ? warmup : Math.max(1, Math.min(100, iters / 10));
    }

    boolean isServer() {
        return server == null;
    }

    static String usage(boolean bw) {
        String p = bw ? "vipl-bw" : "vipl-pingpong";
        StringBuilder s = new StringBuilder();
        s.append("Usage:\n");
        s.append("  ").append(p).append(" [OPTIONS]                 start a server and wait for a client\n");
        s.append("  ").append(p).append(" [OPTIONS] SERVER_ADDRESS  connect to the server at SERVER_ADDRESS\n\n");
        s.append(bw ? "VIPL bandwidth: the client streams sends of SIZE bytes to the server's posted receives\n"
                + "(a window of descriptors in flight, credits from the server); prints bytes, iterations,\n"
                + "MB/s (MB = 2^20 bytes) and messages/s per size.\n\n"
                : "VIPL latency: per iteration the client sends SIZE bytes, the server echoes them back;\n"
                + "prints bytes, iterations, average and median one-way latency (round trip / 2) per size.\n"
                + "The payload is verified on both sides.\n\n");
        s.append("Options:\n");
        s.append("  -d, --device=NIC        the VIPL NIC (RDMA device; default the first one)\n");
        s.append("  -p, --port=PORT         the connection's discriminator (default 18515); both sides alike\n");
        s.append("  -l, --local=ADDR        this side's host address (default the NIC's IPv4 address)\n");
        s.append("  -s, --size=LIST         message sizes in bytes, comma-separated, k/m suffixes (either case)\n");
        s.append("                          (1 B to 1 MiB; default ").append(bw ? "65536" : "4096").append(")\n");
        s.append("  -a, --all               sizes 1 B to 64 KiB, doubling\n");
        s.append("  -n, --iters=N           iterations per size (default 1000; client only)\n");
        s.append("  -W, --warmup=N          warm-up iterations per size, not timed (default iters/10, 1..100)\n");
        s.append("  -r, --reliability=LEVEL unreliable | reliable-delivery | reliable-reception\n");
        s.append("                          (default reliable-delivery; the server takes the client's)\n");
        s.append("  -w, --wait              block in VipRecvWait/VipSendWait (VipCQWait with -c) instead of\n");
        s.append("                          polling VipRecvDone/VipSendDone (VipCQDone)\n");
        s.append("  -c, --cq                attach the receive queue to a completion queue\n");
        if (bw) {
            s.append("  -q, --window=N          descriptors in flight (default 32, at most ").append(MAX_WINDOW).append(")\n");
            s.append("  -V, --verify            verify the payload bytes on the server\n");
        }
        s.append("  -t, --timeout=SECONDS   bound of every wait (default 30)\n");
        s.append("  -h, --help              this text\n\n");
        s.append("Exit status: 0 success, 1 a failure at run time, 2 bad options.\n");
        return s.toString();
    }

    /**
     * Parses {@code args}.
     *
     * @throws UsageException with the message to print (before the hint to use --help)
     */
    static ToolOptions parse(boolean bw, String[] args, PrintStream err) throws UsageException {
        ToolOptions o = new ToolOptions(bw);
        String shortOpts = bw ? "d:p:l:s:an:W:r:wcq:Vt:h" : "d:p:l:s:an:W:r:wct:h";
        Getopt g = new Getopt(o.program, args, shortOpts, "device:d", "port:p", "local:l", "size:s", "all:a",
                "iters:n", "warmup:W", "reliability:r", "wait:w", "cq:c", "window:q", "verify:V", "timeout:t", "help:h");
        boolean all = false;
        boolean sizeGiven = false;
        for (int c; (c = g.next(err)) != -1; ) {
            String a = g.argument();
            switch (c) {
                case 'd' -> o.device = a;
                case 'p' -> o.port = number(a, "port", 1, 65535);
                case 'l' -> o.local = address(a, "local address");
                case 's' -> {
                    o.sizes = sizes(a);
                    sizeGiven = true;
                }
                case 'a' -> all = true;
                case 'n' -> o.iters = number(a, "iterations", 1, 100_000_000);
                case 'W' -> o.warmup = number(a, "warm-up iterations", 0, 1_000_000);
                case 'r' -> {
                    o.level = level(a);
                    o.levelGiven = true;
                }
                case 'w' -> o.waitMode = true;
                case 'c' -> o.cq = true;
                case 'q' -> o.window = number(a, "window", 1, MAX_WINDOW);
                case 'V' -> o.verify = true;
                case 't' -> o.timeoutMillis = timeout(a);
                case 'h' -> o.help = true;
                default -> throw new UsageException(null);   // Getopt printed the message
            }
        }
        if (all && sizeGiven) {
            throw new UsageException("-a and -s exclude each other");
        }
        if (all) {
            List<Integer> l = new ArrayList<>();
            for (int s = 1; s <= 65536; s *= 2) {
                l.add(s);
            }
            o.sizes = l.stream().mapToInt(Integer::intValue).toArray();
        }
        List<String> operands = g.operands();
        if (operands.size() > 1) {
            throw new UsageException("one server address at most, got " + String.join(" ", operands));
        }
        if (operands.size() == 1) {
            o.server = address(operands.getFirst(), "server address");
        }
        if (bw) {
            long biggest = java.util.Arrays.stream(o.sizes).max().orElse(0);
            if (biggest * o.window > MAX_WINDOW_BYTES) {
                throw new UsageException("window " + o.window + " × size " + biggest + " is more than "
                        + (MAX_WINDOW_BYTES >> 20) + " MiB of receive buffers");
            }
        }
        return o;
    }

    private static int number(String text, String what, int min, int max) throws UsageException {
        try {
            long v = Long.parseLong(text.strip());
            if (v >= min && v <= max) {
                return (int) v;
            }
        } catch (NumberFormatException e) {
            // below
        }
        throw new UsageException("bad " + what + " '" + text + "': a number from " + min + " to " + max);
    }

    private static long timeout(String text) throws UsageException {
        try {
            double s = Double.parseDouble(text.strip());
            if (s > 0 && s <= 86_400) {
                return Math.max(1, Math.round(s * 1000));
            }
        } catch (NumberFormatException e) {
            // below
        }
        throw new UsageException("bad timeout '" + text + "': seconds, more than 0 and at most 86400");
    }

    static int[] sizes(String text) throws UsageException {
        List<Integer> l = new ArrayList<>();
        for (String part : text.split(",", -1)) {
            long v;
            try {
                v = Sizes.parse(part);
            } catch (NumberFormatException e) {
                v = -1;
            }
            if (v < 1 || v > MAX_SIZE) {
                throw new UsageException("bad size '" + part + "': 1 to " + MAX_SIZE + " bytes (k and m suffixes allowed)");
            }
            l.add((int) v);
        }
        if (l.size() > MAX_SIZES) {
            throw new UsageException("more than " + MAX_SIZES + " sizes");
        }
        return l.stream().mapToInt(Integer::intValue).toArray();
    }

    static VipReliabilityLevel level(String text) throws UsageException {
        return switch (text.strip().toLowerCase(Locale.ROOT).replace('_', '-')) {
            case "unreliable", "u" -> VipReliabilityLevel.UNRELIABLE;
            case "reliable-delivery", "rd" -> VipReliabilityLevel.RELIABLE_DELIVERY;
            case "reliable-reception", "rr" -> VipReliabilityLevel.RELIABLE_RECEPTION;
            default -> throw new UsageException("bad reliability level '" + text
                    + "': unreliable, reliable-delivery or reliable-reception");
        };
    }

    /** The level's option spelling. */
    static String name(VipReliabilityLevel l) {
        return l.name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /** A literal IP address (no name lookup: a bad one is an option error, not a wait). */
    private static String address(String text, String what) throws UsageException {
        String t = text.strip();
        boolean literal;
        if (t.matches("[0-9.]+")) {
            String[] octets = t.split("\\.", -1);
            literal = octets.length == 4;
            for (String b : octets) {
                literal &= b.length() >= 1 && b.length() <= 3 && Integer.parseInt(b) <= 255;
            }
        } else {
            literal = t.contains(":");
        }
        if (literal) {
            try {
                InetAddress.getByName(t);
                return t;
            } catch (java.net.UnknownHostException e) {
                // below
            }
        }
        throw new UsageException("bad " + what + " '" + text + "': an IPv4 or IPv6 address");
    }
}
