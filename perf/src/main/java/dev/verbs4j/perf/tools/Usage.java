package dev.verbs4j.perf.tools;

import java.io.PrintStream;

/**
 * The {@code -h} text of the perftest tools: the options this implementation takes, per tool, in
 * perftest's layout, and which C perftest versions it interoperates with.
 */
final class Usage {

    /** Which C perftest releases these tools talk to. */
    static final String INTEROP = "Wire-compatible with the perftest C tools of upstream v4.5-0.17 ... 25.10.0-0.128"
            + " (internal versions 6.06-6.27; Debian bookworm 4.5+0.17 = 6.06) and with 26.04.17 (6.29) in TCP mode;"
            + " -R requires 6.06-6.27; not compatible with perftest-26.01.5 (6.28).";

    private Usage() {
    }

    static void print(PerfOptions o, PrintStream out) {
        StringBuilder s = new StringBuilder();
        boolean bw = o.kind == PerfOptions.Kind.BW;
        PerfOptions.Verb v = o.verb;
        s.append("Usage:\n");
        s.append("  ").append(o.program).append("            start a server and wait for connection\n");
        s.append("  ").append(o.program).append(" <host>     connect to server at <host>\n");
        s.append("\n");
        s.append("Options:\n");
        if (v != PerfOptions.Verb.ATOMIC) {
            s.append("  -a, --all  Run every message size from 2 to 2^23 bytes\n");
        } else {
            s.append("  -A, --atomic_type=<type>  Atomic operation: CMP_AND_SWAP or FETCH_AND_ADD (default FETCH_AND_ADD)\n");
        }
        if (bw) {
            s.append("  -b, --bidirectional  Measure traffic in both directions (default one direction)\n");
        }
        String types = switch (o.verb) {
            case SEND -> "RC/UC/UD";
            case WRITE -> "RC/UC";
            case READ, ATOMIC -> "RC";
        };
        s.append("  -c, --connection=<").append(types).append(">  Connection type ").append(types)
                .append(" (default RC)\n");
        if (!bw) {
            s.append("  -C, --report-cycles  Report times in clock units (here: nanoseconds)\n");
        }
        s.append("  -d, --ib-dev=<dev>  RDMA device to use (default: the first one)\n");
        s.append("  -D, --duration=<seconds>  Run for this many seconds instead of iterations (a quarter at each end unmeasured)\n");
        if (v != PerfOptions.Verb.WRITE) {
            s.append("  -e, --events  Sleep on completion events instead of polling\n");
            s.append("  -X, --vector=<completion vector>  Completion vector of the queues with -e (default 0)\n");
        }
        s.append("  -f, --margin=<seconds>  Unmeasured seconds at each end of -D (default: a quarter)\n");
        s.append("  -F, --CPU-freq  Accepted for compatibility (time comes from System.nanoTime)\n");
        s.append("  -h, --help  This text\n");
        if (!bw) {
            s.append("  -H, --report-histogram  Print every sample, not only the summary\n");
        }
        s.append("  -i, --ib-port=<port>  Port of the device (default 1)\n");
        if (v != PerfOptions.Verb.READ && v != PerfOptions.Verb.ATOMIC) {
            s.append("  -I, --inline_size=<size>  Largest message to send inline\n");
        }
        if (bw) {
            s.append("  -l, --post_list=<list size>  Post this many work requests at once\n");
        }
        s.append("  -L, --hop_limit=<hop_limit>  Hop limit, 0-255 (default 64)\n");
        s.append("  -m, --mtu=<mtu>  MTU, 256-4096 (default: the port's active MTU)\n");
        s.append("  -n, --iters=<iters>  Number of exchanges (at least 5, default ")
                .append(v == PerfOptions.Verb.WRITE && bw ? 5000 : 1000).append(")\n");
        if (bw) {
            s.append("  -N, --noPeak  Skip the peak bandwidth computation\n");
        }
        if (v == PerfOptions.Verb.READ || v == PerfOptions.Verb.ATOMIC) {
            s.append("  -o, --outs=<num>  Outstanding reads/atomics (default: the device maximum)\n");
        }
        s.append("  -p, --port=<port>  TCP port (or RDMA CM port with -R) to listen on/connect to (default 18515)\n");
        if (bw) {
            s.append("  -q, --qp=<num of qp's>  Number of queue pairs (default 1)\n");
            s.append("  -Q, --cq-mod  Ask for a completion every <n> work requests\n");
        }
        if (v == PerfOptions.Verb.SEND) {
            s.append("  -r, --rx-depth=<dep>  Receive queue depth (default 512)\n");
        }
        s.append("  -R, --rdma_cm  Connect the queue pairs with RDMA CM and exchange data over it\n");
        if (v != PerfOptions.Verb.ATOMIC) {
            s.append("  -s, --size=<size>  Message size, K and M suffixes allowed (default ")
                    .append(bw ? 65536 : 2).append(")\n");
        }
        s.append("  -S, --sl=<sl>  Service level (default 0)\n");
        if (bw) {
            s.append("  -t, --tx-depth=<dep>  Send queue depth (default 128)\n");
        }
        s.append("  -T, --tos=<tos value>  Type of service for RDMA CM queue pairs (with -R only)\n");
        s.append("  -u, --qp-timeout=<timeout>  QP ACK timeout exponent (default 14)\n");
        if (!bw) {
            s.append("  -U, --report-unsorted  Print every sample unsorted (implies -H)\n");
        }
        s.append("  -V, --version  Print the protocol version\n");
        if (bw) {
            s.append("  -w, --limit_bw=<value>  Fail when the bandwidth is below this\n");
        }
        s.append("  -x, --gid-index=<index>  GID index (default on RoCE: the IPv4-mapped RoCE v2 entry)\n");
        if (bw) {
            s.append("  -y, --limit_msgrate=<value>  Fail when the message rate is below this\n");
        }
        s.append("      --out_json  Save the report in a json file\n");
        s.append("      --out_json_file=<file>  Name of the report json file (default: ").append(PerfOptions.DEFAULT_JSON_FILE)
                .append(" in the working directory)\n");
        s.append("      --output=<units>  Print only bandwidth, message_rate or latency\n");
        if (bw) {
            s.append("      --report_gbits  Report bandwidth in Gb/sec instead of MB/sec\n");
        }
        s.append("      --source_ip=<ip>  Local address of the connection\n");
        s.append("      --retry_count=<n>  RDMA CM retry count (default 7)\n");
        s.append("\n");
        s.append(INTEROP).append("\n");
        out.print(s);
    }
}
