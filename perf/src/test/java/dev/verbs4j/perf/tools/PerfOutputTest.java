package dev.verbs4j.perf.tools;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The numbers of the result rows are printed as glibc prints them; the rows and the JSON file of
 * duration mode and of {@code --out_json} are laid out as perftest 4.5-0.17 lays them out.
 */
class PerfOutputTest {

    @Test
    void fixedPointAsGlibc() {
        assertThat(PerfOutput.fixed(0.125, 2)).isEqualTo("0.12");
        assertThat(PerfOutput.fixed(0.375, 2)).isEqualTo("0.38");
        assertThat(PerfOutput.fixed(1.005, 2)).isEqualTo("1.00");
        assertThat(PerfOutput.fixed(2.675, 2)).isEqualTo("2.67");
        assertThat(PerfOutput.fixed(1234.005, 2)).isEqualTo("1234.01");
        assertThat(PerfOutput.fixed(0.0000765, 6)).isEqualTo("0.000077");
        assertThat(PerfOutput.fixed(0, 2)).isEqualTo("0.00");
        assertThat(PerfOutput.fixed(-0.001, 2)).isEqualTo("-0.00");
        assertThat(PerfOutput.fixed(Double.POSITIVE_INFINITY, 2)).isEqualTo("inf");
    }

    @Test
    void rowsInPerftestsFormats() {
        assertThat(PerfOutput.latencyRow(2, 1000, new PerfOutput.Latency(82.465, 10344.07, 168.125, 1054.98, 1822.52, 8359.05,
                10344.07))).isEqualTo(" 2       1000          82.47          10344.07      168.12   \t       1054.98     \t1822.52\t\t8359.05 \t\t10344.07\n");
        PerfOptions o = new PerfOptions("ib_write_bw", PerfOptions.Verb.WRITE, PerfOptions.Kind.BW);
        assertThat(PerfOutput.bwRow(o, new PerfOutput.Bw(65536, 5000, 5.27, 4.825, 0.000077)))
                .isEqualTo(" 65536      5000             5.27               4.83   \t\t   0.000077\n");
    }

    private static PerfOptions options(String program, PerfOptions.Verb verb, PerfOptions.Kind kind, String... args) {
        PerfOptions o = new PerfOptions(program, verb, kind);
        PrintStream sink = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
        assertThat(o.parse(args, sink, sink)).isNull();
        return o;
    }

    private static final PerfOutput.HeaderInfo ROCE = new PerfOutput.HeaderInfo("rxe_lo", 1024, true, 1, 16, true);

    @Test
    void durationRowsAsPerftest() {
        assertThat(PerfOutput.LAT_DURATION_HEADER).isEqualTo(" #bytes        #iterations       t_avg[usec]    tps average\n");
        // 2 s sampled, 40000 round trips: 50 us each, 25 one way
        double[] v = PerfOutput.latencyDuration(2_000_000_000L, 40000, 2);
        assertThat(v[0]).isEqualTo(25.0);
        assertThat(v[1]).isEqualTo(20000.0);
        assertThat(PerfOutput.latencyDurationRow(2, 40000, v[0], v[1]))
                .isEqualTo(" 2             40000            25.00          20000.00\n");
        PerfOptions o = options("ib_write_bw", PerfOptions.Verb.WRITE, PerfOptions.Kind.BW, "-D", "2");
        PerfOutput.Bw b = PerfOutput.bandwidthDuration(o, 65536, 32000, 2_000_000_000L);
        assertThat(b.peak()).isZero();
        assertThat(b.avg()).isEqualTo(1000.0);
        assertThat(b.msgRate()).isEqualTo(0.016);
        assertThat(PerfOutput.bwRow(o, b)).isEqualTo(" 65536      32000            0.00               1000.00\t\t   0.016000\n");
    }

    @Test
    void eventsLineInTheHeader() {
        PerfOptions o = options("ib_send_bw", PerfOptions.Verb.SEND, PerfOptions.Kind.BW, "-e", "-X", "2", "host");
        assertThat(PerfOutput.header(o, ROCE)).contains("                    Send BW Test\n Test with events. Using rxe_lo_comp2\n"
                + " Dual-port       : OFF\t\tDevice         : rxe_lo\n");
        o = options("ib_send_bw", PerfOptions.Verb.SEND, PerfOptions.Kind.BW, "host");
        assertThat(PerfOutput.header(o, ROCE)).doesNotContain("events");
    }

    @Test
    void jsonOfALatencyClient() {
        PerfOptions o = options("ib_send_lat", PerfOptions.Verb.SEND, PerfOptions.Kind.LAT, "-e", "--out_json", "host");
        String results = PerfOutput.jsonLatency(o, 2, 1000, new PerfOutput.Latency(82.465, 10344.07, 168.125, 1054.98, 1822.52,
                8359.05, 10344.07));
        assertThat(PerfOutput.json(o, ROCE, results)).isEqualTo("""
                {
                test_info: {
                test: Send_Latency_Test,
                Test with events: Using_rxe_lo_comp0,
                Dual_port: OFF,
                Device: "rxe_lo",
                Number_of_qps: 1,
                Transport_type: IB,
                Connection_type: RC,
                Using_SRQ: OFF,
                PCIe_relax_order: ON,
                ibv_wr_API: OFF,
                TX_depth : 1,
                Mtu: 1024,
                Link_type: Ethernet,
                GID_index: 1,
                Max_inline_data: 0,
                rdma_cm_QPs: OFF,
                Data_ex_method: Ethernet,
                },
                results: {
                MsgSize: 2,
                n_iterations: 1000,
                t_min: 82.47,
                t_max: 10344.07,
                t_typical: 168.12,
                t_avg: 1054.98,
                t_stdev: 1822.52,
                percentile_99: 8359.05,
                percentile_99.9: 10344.07,
                },
                }
                """);
        o = options("ib_send_lat", PerfOptions.Verb.SEND, PerfOptions.Kind.LAT, "--output=latency", "host");
        assertThat(PerfOutput.jsonLatency(o, 2, 1000, new PerfOutput.Latency(1, 2, 1, 1.5, 0, 2, 2))).isEqualTo("avg_lat: 1.500000,\n");
        assertThat(PerfOutput.jsonLatencyDuration(o, 2, 40000, 12.5, 20000)).isEqualTo("t_avg: 12.500000\n");
        o = options("ib_write_lat", PerfOptions.Verb.WRITE, PerfOptions.Kind.LAT, "-D", "2", "host");
        assertThat(PerfOutput.jsonLatencyDuration(o, 2, 40000, 12.5, 20000))
                .isEqualTo("MsgSize: 2,\nn_iterations: 40000,\nt_avg: 12.50,\ntps_average: 20000.00,\n");
    }

    @Test
    void jsonOfABandwidthServer() {
        // an ib_read_bw -R server with -b -q 2: RX depth not printed (not SEND), TX depth with -b, TOS with -R
        PerfOptions o = options("ib_atomic_bw", PerfOptions.Verb.ATOMIC, PerfOptions.Kind.BW, "-R", "-b", "-q", "2", "-T", "3",
                "-A", "CMP_AND_SWAP", "-l", "4", "-n", "8");
        String results = PerfOutput.jsonBw(o, new PerfOutput.Bw(8, 16, 5.27, 4.825, 0.000077));
        assertThat(PerfOutput.json(o, new PerfOutput.HeaderInfo("rxe_a", 1024, true, -1, 16, false), results)).isEqualTo("""
                {
                test_info: {
                test: Atomic_CMP_AND_SWAP_Bidirectional_Post_List_BW_Test,
                Dual_port: OFF,
                Device: "rxe_a",
                Number_of_qps: 2,
                Transport_type: IB,
                Connection_type: RC,
                Using_SRQ: OFF,
                PCIe_relax_order: OFF,
                ibv_wr_API: OFF,
                TX_depth : 8,
                Post_List: 4,
                CQ_Moderation: 4,
                Mtu: 1024,
                Link_type: Ethernet,
                Outstand_reads: 16,
                rdma_cm_QPs: ON,
                Data_ex_method: rdma_cm,
                TOS: 3,
                },
                results: {
                MsgSize: 8,
                n_iterations: 16,
                BW_peak: 5.27,
                BW_average: 4.83,
                MsgRate: 0.000077,
                },
                }
                """);
        o = options("ib_send_bw", PerfOptions.Verb.SEND, PerfOptions.Kind.BW, "--output=message_rate");
        assertThat(PerfOutput.jsonBw(o, new PerfOutput.Bw(8, 16, 5.27, 4.825, 0.000077))).isEqualTo("msgRate_avg: 0.000077,\n");
        o = options("ib_send_bw", PerfOptions.Verb.SEND, PerfOptions.Kind.BW, "--output=bandwidth");
        assertThat(PerfOutput.jsonBw(o, new PerfOutput.Bw(8, 16, 5.27, 4.825, 0.000077))).isEqualTo("bw_avg: 4.825000,\n");
        o = options("ib_send_bw", PerfOptions.Verb.SEND, PerfOptions.Kind.BW, "--report_gbits");
        assertThat(PerfOutput.jsonBw(o, new PerfOutput.Bw(8, 16, 0.05, 0.04, 0.000077)))
                .isEqualTo("MsgSize: 8,\nn_iterations: 16,\nBW_peak: 0.050000,\nBW_average: 0.040000,\nMsgRate: 0.000077,\n");
    }

    @Test
    void samplesPrintedAsCsPercentG() {
        // the values of printf '%g' from the C library
        assertThat(PerfOutput.g(12.5)).isEqualTo("12.5");
        assertThat(PerfOutput.g(0.000123456)).isEqualTo("0.000123456");
        assertThat(PerfOutput.g(1234567)).isEqualTo("1.23457e+06");
        assertThat(PerfOutput.g(7.25e-5)).isEqualTo("7.25e-05");
        assertThat(PerfOutput.g(100)).isEqualTo("100");
        assertThat(PerfOutput.g(3.0)).isEqualTo("3");
        assertThat(PerfOutput.g(999999.5)).isEqualTo("1e+06");
    }

    @Test
    void histogramAsPerftest() {
        long[] t = new long[20];
        for (int i = 1; i < t.length; i++) {
            t[i] = t[i - 1] + 1000L * (i % 5 + 1) * 2;
        }
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(b, true, StandardCharsets.UTF_8);
        // -H: sorted, the two largest of the 19 samples left out
        PerfOutput.histogram(out, t, 20, 2, false, true);
        String[] lines = b.toString(StandardCharsets.UTF_8).split("\n");
        assertThat(lines).hasSize(18);
        assertThat(lines[0]).isEqualTo("#, usec");
        assertThat(lines[1]).isEqualTo("1, 1");
        assertThat(lines[17]).isEqualTo("17, 5");
        b.reset();
        // -U: all 19 as measured; -C: titled in cycles (here nanoseconds)
        PerfOutput.histogram(out, t, 20, 2, true, false);
        lines = b.toString(StandardCharsets.UTF_8).split("\n");
        assertThat(lines).hasSize(20);
        assertThat(lines[0]).isEqualTo("#, cycles");
        assertThat(lines[1]).isEqualTo("1, 2000");
    }

    @Test
    void tosOnTheDataExchangeLineWithRdmaCm() {
        PerfOptions o = options("ib_send_lat", PerfOptions.Verb.SEND, PerfOptions.Kind.LAT, "-R", "-T", "32", "1.2.3.4");
        String h = PerfOutput.header(o, new PerfOutput.HeaderInfo("rxe_a", 1024, true, 1, 0, true));
        assertThat(h).contains(" Data ex. method : rdma_cm \tTOS    : 32\n" + PerfOutput.RESULT_LINE);
        o = options("ib_send_lat", PerfOptions.Verb.SEND, PerfOptions.Kind.LAT, "-R", "-T", "32");
        h = PerfOutput.header(o, new PerfOutput.HeaderInfo("rxe_a", 1024, true, 1, 0, true));
        assertThat(h).endsWith(" Data ex. method : rdma_cm \tTOS    : 32\n" + PerfOutput.RESULT_LINE
                + " Waiting for client rdma_cm QP to connect\n Please run the same command with the IB/RoCE interface IP\n"
                + PerfOutput.RESULT_LINE);
    }

    @Test
    void softwareRateLimiterInBurstsAsPerftest() {
        // 1 Gb/s of 64 KiB messages: 1907 per second, in bursts of the send depth (128): 14 a second
        PerfOptions o = options("ib_write_bw", PerfOptions.Verb.WRITE, PerfOptions.Kind.BW, "--rate_limit=1",
                "--rate_limit_type=SW");
        assertThat(o.burstSize).isEqualTo(128);
        RateLimiter r = RateLimiter.of(o, 65536);
        long t0 = 1_000_000_000L;
        assertThat(r.open(t0)).isTrue();
        for (int k = 0; k < 128; k++) {
            assertThat(r.sending()).isTrue();
            r.posted();
        }
        assertThat(r.sending()).isFalse();
        assertThat(r.open(t0 + 1_000_000_000L / 14 - 1)).isFalse();
        assertThat(r.open(t0 + 1_000_000_000L / 14)).isTrue();
        assertThat(r.sending()).isTrue();
        // without SW limiting it never holds back
        RateLimiter none = RateLimiter.of(options("ib_write_bw", PerfOptions.Verb.WRITE, PerfOptions.Kind.BW), 65536);
        assertThat(none.open(t0)).isTrue();
        none.posted();
        assertThat(none.sending()).isTrue();
    }
}
