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

    /** The options that need one vendor's hardware (mlx5 crypto, DC streams). */
    static final String HARDWARE_SPECIFIC = "--aes_xts --encrypt_on_tx --sig_before --aes_block_size --data_enc_keys_number"
            + " --kek_path --credentials_path --data_enc_key_app_path --log_dci_streams --log_active_dci_streams";

    /**
     * perftest 4.5's {@code usage()} for this tool (its options in its words), then what differs
     * here: which options need hardware, and the interoperating versions.
     */
    static void print(PerfOptions o, PrintStream out) {
        StringBuilder s = new StringBuilder();
        boolean bw = o.kind == PerfOptions.Kind.BW;
        boolean lat = !bw;
        PerfOptions.Verb v = o.verb;
        boolean send = v == PerfOptions.Verb.SEND;
        boolean write = v == PerfOptions.Verb.WRITE;
        boolean readOrAtomic = v == PerfOptions.Verb.READ || v == PerfOptions.Verb.ATOMIC;
        boolean atomic = v == PerfOptions.Verb.ATOMIC;
        s.append("Usage:\n");
        s.append("  ").append(o.program).append("            start a server and wait for connection\n");
        s.append("  ").append(o.program).append(" <host>     connect to server at <host>\n");
        s.append("\n");
        s.append("Options:\n");
        if (!atomic) {
            s.append("  -a, --all  Run sizes from 2 till 2^23\n");
        } else {
            s.append("  -A, --atomic_type=<type>  type of atomic operation from {CMP_AND_SWAP,FETCH_AND_ADD} (default FETCH_AND_ADD)\n");
        }
        if (bw) {
            s.append("  -b, --bidirectional  Measure bidirectional bandwidth (default unidirectional)\n");
        }
        String types = send ? "RC/XRC/UC/UD/DC/SRD" : write ? "RC/XRC/UC/DC" : "RC/XRC/DC";
        s.append("  -c, --connection=<").append(types).append(">  Connection type ").append(types).append(" (default RC)\n");
        s.append("      --log_dci_streams=<log_num_dci_stream_channels> (default 0)  Run DC initiator as DCS instead of DCI with <log_num dci_stream_channels>\n");
        s.append("      --log_active_dci_streams=<log_num_active_dci_stream_channels> (default log_num_dci_stream_channels)\n");
        s.append("\t  --aes_xts Runs traffic with AES_XTS feature (encryption)\n");
        s.append("\t  --encrypt_on_tx Runs traffic with encryption on tx (default decryption on tx)\n");
        s.append("\t  --sig_before Puts signature on data before encrypting it (default after)\n");
        s.append("      --aes_block_size=<512,520,4048,4096,4160> (default 512)\n");
        s.append("\t  --data_enc_keys_number=<number of data encryption keys> (default 1)\n");
        s.append("\t  --kek_path path to the key encryption key file\n");
        s.append("\t  --credentials_path path to the credentials file\n");
        s.append("\t  --data_enc_key_app_path path to the data encryption key app\n");
        if (lat) {
            s.append("  -C, --report-cycles  report times in cpu cycle units (default microseconds)\n");
        }
        s.append("  -d, --ib-dev=<dev>  Use IB device <dev> (default first device found)\n");
        s.append("  -D, --duration  Run test for a customized period of seconds.\n");
        if (!write) {
            s.append("  -e, --events  Sleep on CQ events (default poll)\n");
            s.append("  -X, --vector=<completion vector>  Set <completion vector> used for events\n");
        }
        s.append("  -f, --margin  measure results within margins. (default=2sec)\n");
        s.append("  -F, --CPU-freq  Do not show a warning even if cpufreq_ondemand module is loaded, and cpu-freq is not on max.\n");
        if (send) {
            s.append("  -g, --mcg  Send messages to multicast group with 1 QP attached to it.\n");
        }
        s.append("  -h, --help  Show this help screen.\n");
        if (lat) {
            s.append("  -H, --report-histogram  Print out all results (default print summary only)\n");
        }
        s.append("  -i, --ib-port=<port>  Use port <port> of IB device (default 1)\n");
        if (!readOrAtomic) {
            s.append("  -I, --inline_size=<size>  Max size of message to be sent in inline\n");
        }
        if (bw) {
            s.append("  -l, --post_list=<list size>\n");
            s.append(" Post list of send WQEs of <list size> size (instead of single post)\n");
            s.append("      --recv_post_list=<list size> Post list of receive WQEs of <list size> size (instead of single post)\n");
        }
        s.append("  -L, --hop_limit=<hop_limit>  Set hop limit value (ttl for IPv4 RawEth QP). Values 0-255 (default 64)\n");
        s.append("  -m, --mtu=<mtu>  MTU size : 256 - 4096 (default port mtu)\n");
        if (send) {
            s.append("  -M, --MGID=<multicast_gid>  In multicast, uses <multicast_gid> as the group MGID.\n");
        }
        s.append("  -n, --iters=<iters>  Number of exchanges (at least 5, default ").append(write && bw ? 5000 : 1000).append(")\n");
        if (bw) {
            s.append("  -N, --noPeak Cancel peak-bw calculation (default with peak up to iters=20000)\n");
        }
        if (readOrAtomic) {
            s.append("  -o, --outs=<num>  num of outstanding read/atom(default max of device)\n");
        }
        if (bw) {
            s.append("  -O, --dualport  Run test in dual-port mode.\n");
        }
        s.append("  -p, --port=<port>  Listen on/connect to port <port> (default 18515)\n");
        if (bw) {
            s.append("  -q, --qp=<num of qp's>  Num of qp's(default 1)\n");
            s.append("  -Q, --cq-mod  Generate Cqe only after <--cq-mod> completion\n");
        }
        if (send) {
            s.append("  -r, --rx-depth=<dep>  Rx queue size (default 512). If using srq, rx-depth controls max-wr size of the srq\n");
        }
        s.append("  -R, --rdma_cm  Connect QPs with rdma_cm and run test on those QPs\n");
        if (!atomic) {
            s.append("  -s, --size=<size>  Size of message to exchange (default ").append(lat ? 2 : 65536).append(")\n");
        }
        s.append("  -S, --sl=<sl>  SL (default 0)\n");
        if (bw) {
            s.append("  -t, --tx-depth=<dep>  Size of tx queue (default 128)\n");
        }
        s.append("  -T, --tos=<tos value>  Set <tos_value> to RDMA-CM QPs. available only with -R flag. values 0-256 (default off)\n");
        s.append("  -u, --qp-timeout=<timeout>  QP timeout, timeout value is 4 usec * 2 ^(timeout), default 14\n");
        if (lat) {
            s.append("  -U, --report-unsorted  (implies -H) print out unsorted results (default sorted)\n");
        }
        s.append("  -V, --version  Display version number\n");
        if (bw) {
            s.append("  -w, --limit_bw=<value>  Set verifier limit for bandwidth\n");
        }
        s.append("  -W, --report-counters=<list of counter names>  Report performance counter change (example: \"counters/port_xmit_data,hw_counters/out_of_buffer\")\n");
        s.append("  -x, --gid-index=<index>  Test uses GID with GID index (Default : IB - no gid . ETH - 0)\n");
        if (bw) {
            s.append("  -y, --limit_msgrate=<value>  Set verifier limit for Msg Rate\n");
        }
        s.append("  -z, --com_rdma_cm  Communicate with rdma_cm module to exchange data - use regular QPs\n");
        s.append('\n');
        s.append("      --out_json  Save the report in a json file\n");
        s.append("      --out_json_file=<file>  Name of the report json file. (Default: ").append(PerfOptions.DEFAULT_JSON_FILE)
                .append(" in the working directory) \n");
        s.append("      --cpu_util  Show CPU Utilization in report, valid only in Duration mode \n");
        s.append("      --dlid  Set a Destination LID instead of getting it from the other side.\n");
        s.append("      --dont_xchg_versions  Do not exchange versions and MTU with other side \n");
        s.append("      --force-link=<value>  Force the link(s) to a specific type: IB or Ethernet.\n");
        if (!write) {
            s.append("      --inline_recv=<size>  Max size of message to be sent in inline receive\n");
        }
        if (send) {
            s.append("      --use-srq  Use a Shared Receive Queue. --rx-depth controls max-wr size of the SRQ \n");
        }
        s.append("      --ipv6  Use IPv6 GID. Default is IPv4\n");
        s.append("      --source_ip  Source IP of the interface used for connection establishment. By default taken from routing table.\n");
        if (lat) {
            s.append("      --latency_gap=<delay_time>  delay time between each post send\n");
        }
        s.append("      --mmap=file  Use an mmap'd file as the buffer for testing P2P transfers.\n");
        s.append("      --mmap-offset=<offset>  Use an mmap'd file as the buffer for testing P2P transfers.\n");
        if (bw) {
            s.append("      --mr_per_qp  Create memory region for each qp.\n");
        }
        s.append("      --odp  Use On Demand Paging instead of Memory Registration.\n");
        s.append("      --output=<units> Set verbosity output level: bandwidth , message_rate, latency \n");
        s.append(" Latency measurement is Average calculation \n");
        s.append("      --use_old_post_send Use old post send flow (ibv_post_send).\n");
        s.append("      --perform_warm_up Perform some iterations before start measuring in order to warming-up memory cache,"
                + " valid in Atomic, Read and Write BW tests\n");
        s.append("      --pkey_index=<pkey index> PKey index to use for QP\n");
        if (bw) {
            s.append("      --report-both  Report RX & TX results separately on Bidirectional BW tests\n");
            s.append("      --report_gbits  Report Max/Average BW of test in Gbit/sec (instead of MiB/sec)\n");
            s.append("        Note: MiB=2^20 byte, while Gb=10^9 bits. Use these formulas for conversion:\n");
            s.append("        Factor=10^9/(2^20*8)=119.2; MiB=Gb_result * factor; Gb=MiB_result / factor\n");
            s.append("      --report-per-port  Report BW data on both ports when running Dualport and Duration mode\n");
            s.append("      --reversed  Reverse traffic direction - Server send to client\n");
            s.append("      --run_infinitely  Run test forever, print results every <duration> seconds\n");
        }
        s.append("      --retry_count=<value>  Set retry count value in rdma_cm mode\n");
        s.append("      --tclass=<value>  Set the Traffic Class in GRH (if GRH is in use)\n");
        s.append("      --use_hugepages  Use Hugepages instead of contig, memalign allocations.\n");
        if (bw) {
            s.append("      --wait_destroy=<seconds>  Wait <seconds> before destroying allocated resources (QP/CQ/PD/MR..)\n");
            s.append("      --disable_pcie_relaxed Disable PCIe relaxed ordering\n");
            s.append("\n Rate Limiter:\n");
            s.append("      --burst_size=<size> Set the amount of messages to send in a burst when using rate limiter\n");
            s.append("      --typical_pkt_size=<bytes> Set the size of packet to send in a burst. Only supports PP rate limiter\n");
            s.append("      --rate_limit=<rate> Set the maximum rate of sent packages. default unit is [Gbps]. use --rate_units to change that.\n");
            s.append("      --rate_units=<units> [Mgp] Set the units for rate limit to MiBps (M), Gbps (g) or pps (p). default is Gbps (g).\n");
            s.append("        Note (1): pps not supported with HW limit.\n");
            s.append("        Note (2): When using PP rate_units is forced to Kbps.\n");
            s.append("      --rate_limit_type=<type> [HW/SW/PP] Limit the QP's by HW, PP or by SW. Disabled by default."
                    + " When rate_limit is not specified HW limit is Default.\n");
            s.append("        Note: in Latency under load test SW rate limit is forced\n");
        }
        s.append('\n');
        s.append(" verbs4j:\n");
        s.append("  Hardware-specific (refused as perftest refuses them without the hardware): ").append(HARDWARE_SPECIFIC).append('\n');
        s.append("  ").append(INTEROP).append('\n');
        out.print(s);
    }
}
