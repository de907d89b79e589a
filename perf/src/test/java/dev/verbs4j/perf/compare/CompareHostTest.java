package dev.verbs4j.perf.compare;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

/** compare without a device: parsing perftest's tables, ratios, bounds, CSV, chart, options. */
class CompareHostTest {

    private static final String DASHES = "-".repeat(87);
    private static final String LAT_HEADER = " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]"
            + "    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] ";
    private static final String BW_HEADER = " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]";

    @Test
    void latencyRowsGiveTTypical() {
        List<String> out = List.of(DASHES, " local address: LID 0000 QPN 0x001b PSN 0x2ccefe", DASHES, LAT_HEADER,
                " 2       100          1792.27        4218.87      3996.38  \t       3829.53     \t562.75 \t\t4218.87 \t\t4218.87",
                " 4096    100          3599.56        5931.56      3996.84  \t       4020.49     \t208.24 \t\t5931.56 \t\t5931.56",
                DASHES);
        assertThat(ResultParser.values(out, true)).containsExactly(Map.entry(2L, 3996.38), Map.entry(4096L, 3996.84));
    }

    @Test
    void bandwidthRowsGiveMsgRate() {
        List<String> out = List.of(DASHES, BW_HEADER,
                " 2          20               0.02               0.00   \t\t   0.001430",
                " 65536      20               23.05              20.79  \t\t   0.000333", DASHES);
        assertThat(ResultParser.values(out, false)).containsExactly(Map.entry(2L, 0.00143), Map.entry(65536L, 0.000333));
        assertThat(ResultParser.values(out, true)).isEmpty();
    }

    @Test
    void failedCalibrationIsNotUsable() {
        List<String> out = List.of(LAT_HEADER,
                " 2       1000          inf            inf          inf      \t       inf         \t-nan   \t\tinf     \t\tinf    ");
        double v = ResultParser.values(out, true).get(2L);
        assertThat(v).isNaN();
        assertThat(ResultParser.usable(v)).isFalse();
        assertThat(ResultParser.usable(0.0)).isFalse();
        assertThat(ResultParser.usable(-1.0)).isFalse();
        assertThat(ResultParser.usable(0.000001)).isTrue();
        assertThat(ResultParser.number("-nan")).isNaN();
        assertThat(ResultParser.number("garbage")).isNaN();
    }

    @Test
    void rowsOutsideATableAreIgnored() {
        List<String> out = List.of(" 2 3 4 5 6 7", LAT_HEADER, "not a row", DASHES, " 8 100 1 2 3 4 5 6 7");
        assertThat(ResultParser.values(out, true)).isEmpty();
    }

    @Test
    void ratioIsTheJavaSlowdownBothWays() {
        assertThat(new Result(Tool.IB_SEND_LAT, 2, 4.0, 6.0, 1).ratio()).isCloseTo(1.5, within(1e-12));
        assertThat(new Result(Tool.IB_WRITE_BW, 2, 0.002, 0.001, 1).ratio()).isCloseTo(2.0, within(1e-12));
        assertThat(new Result(Tool.IB_READ_LAT, 2, Double.NaN, 6.0, 4).ratio()).isNaN();
        assertThat(new Result(Tool.IB_READ_BW, 2, 1.0, 0.0, 1).ratio()).isNaN();
    }

    @Test
    void boundsReportRatiosOutsideAndMissingOnes() {
        List<Result> r = List.of(new Result(Tool.IB_SEND_LAT, 2, 4.0, 6.0, 1), new Result(Tool.IB_SEND_LAT, 4, 4.0, 1.0, 1),
                new Result(Tool.IB_WRITE_BW, 2, 1.0, Double.NaN, 1));
        assertThat(Report.outsideBound(r, 0, Double.POSITIVE_INFINITY)).singleElement().asString()
                .contains("ib_write_bw 2 B", "Java");
        assertThat(Report.outsideBound(r, 0.5, 1.4)).hasSize(3);
        assertThat(Report.outsideBound(r.subList(0, 2), 0.25, 1.5)).isEmpty();
    }

    @Test
    void csvRoundTrips() {
        List<Result> r = List.of(new Result(Tool.IB_SEND_LAT, 2, 4.0, 6.0, 1),
                new Result(Tool.IB_ATOMIC_BW, 8, 0.001234, Double.NaN, 4));
        List<String> csv = Report.csv(r);
        assertThat(csv.get(0)).isEqualTo(Report.CSV_HEADER);
        assertThat(csv.get(1)).isEqualTo("ib_send_lat,2,t_typical[usec],4.000000,6.000000,1.500000,1");
        assertThat(csv.get(2)).isEqualTo("ib_atomic_bw,8,MsgRate[Mpps],0.001234,,,4");
        List<Result> back = Report.readCsv(csv);
        assertThat(back.get(0)).isEqualTo(r.get(0));
        assertThat(back.get(1).java()).isNaN();
        assertThatThrownBy(() -> Report.readCsv(List.of("x,y"))).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void options() {
        CompareOptions o = new CompareOptions();
        assertThat(o.parse(new String[] {"--tools", "lat,ib_write_bw", "--sizes=2..16,64K", "-n", "20",
            "--max-ratio", "3"})).isNull();
        assertThat(o.tools).containsExactly(Tool.IB_SEND_LAT, Tool.IB_WRITE_LAT, Tool.IB_READ_LAT, Tool.IB_ATOMIC_LAT,
                Tool.IB_WRITE_BW);
        assertThat(o.sizes).containsExactly(2L, 4L, 8L, 16L, 65536L);
        assertThat(o.iters).isEqualTo(20);
        assertThat(o.maxRatio).isEqualTo(3.0);
        assertThat(new CompareOptions().sizes).hasSize(16).startsWith(2L).endsWith(65536L);
        assertThat(new CompareOptions().parse(new String[] {"--tools", "ib_nope"})).contains("ib_nope");
        assertThat(new CompareOptions().parse(new String[] {"-n", "2"})).contains("at least 5");
        assertThat(new CompareOptions().parse(new String[] {"--sizes", "3..16"})).contains("power of two");
        assertThat(new CompareOptions().parse(new String[] {"--min-ratio", "2", "--max-ratio", "1"})).isNotNull();
        assertThat(new CompareOptions().parse(new String[] {"--bogus"})).contains("--bogus");
        assertThat(Measure.sizesOf(Tool.IB_ATOMIC_LAT, List.of(2L, 4L))).containsExactly(8L);
    }

    @Test
    void fromCsvPrintsTablesWritesChartAndChecksTheBound(@TempDir Path dir) throws Exception {
        Path in = dir.resolve("in.csv");
        Files.write(in, Report.csv(List.of(new Result(Tool.IB_SEND_LAT, 2, 4.0, 6.0, 1),
                new Result(Tool.IB_SEND_LAT, 4096, 5.0, 5.0, 2), new Result(Tool.IB_ATOMIC_LAT, 8, 3.0, 4.5, 1))));
        Path csv = dir.resolve("out.csv");
        Path png = dir.resolve("out.png");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        String[] common = {"--from-csv", in.toString(), "--csv", csv.toString(), "--plot", png.toString()};
        int rc = Compare.run(concat(common, "--max-ratio", "2"), print(out), print(err));
        assertThat(rc).as(err.toString(StandardCharsets.UTF_8)).isZero();
        String text = out.toString(StandardCharsets.UTF_8);
        assertThat(text).contains("ib_send_lat", "ib_atomic_lat", "1.50", "1.00", "Java slowdown");
        assertThat(Files.readAllLines(csv)).hasSize(4);
        assertThat(Files.readAllBytes(png)).startsWith(new byte[] {(byte) 0x89, 'P', 'N', 'G'});
        rc = Compare.run(concat(common, "--max-ratio", "1.2"), print(out), print(err));
        assertThat(rc).isEqualTo(1);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("ib_send_lat 2 B: ratio 1.50 above");
        assertThat(Compare.run(new String[] {"--nope"}, print(out), print(err))).isEqualTo(2);
    }

    private static PrintStream print(ByteArrayOutputStream b) {
        return new PrintStream(b, true, StandardCharsets.UTF_8);
    }

    private static String[] concat(String[] a, String... b) {
        String[] r = new String[a.length + b.length];
        System.arraycopy(a, 0, r, 0, a.length);
        System.arraycopy(b, 0, r, a.length, b.length);
        return r;
    }

    @Test
    void onAnEmulatedCpuBothSidesUseEventsAndIbWriteLatIsLeftOutUnlessPollingIsAsked() {
        CompareOptions o = new CompareOptions();
        assertThat(o.parse(new String[0])).isNull();
        ByteArrayOutputStream said = new ByteArrayOutputStream();
        Emulation.apply(o, "tcg,thread=single", new PrintStream(said, true, StandardCharsets.UTF_8));
        assertThat(o.events).isTrue();
        assertThat(o.tools).doesNotContain(Tool.IB_WRITE_LAT).hasSize(Tool.values().length - 1);
        assertThat(said.toString(StandardCharsets.UTF_8)).contains("the CPU is emulated (qemu tcg,thread=single)",
                "completion events (-e)", "ib_write_lat", "--polling", "real hardware", "JIT compilers",
                "-n 100: the Java side's median latency may fall while its JIT compilers still work; -n 20000");

        CompareOptions steady = new CompareOptions();
        assertThat(steady.parse(new String[] {"-n", "20000"})).isNull();
        ByteArrayOutputStream quiet = new ByteArrayOutputStream();
        Emulation.apply(steady, "tcg", new PrintStream(quiet, true, StandardCharsets.UTF_8));
        assertThat(quiet.toString(StandardCharsets.UTF_8)).doesNotContain("median latency may fall");

        CompareOptions polling = new CompareOptions();
        assertThat(polling.parse(new String[] {"--polling"})).isNull();
        ByteArrayOutputStream warned = new ByteArrayOutputStream();
        Emulation.apply(polling, "tcg", new PrintStream(warned, true, StandardCharsets.UTF_8));
        assertThat(polling.events).isFalse();
        assertThat(polling.tools).contains(Tool.IB_WRITE_LAT);
        assertThat(warned.toString(StandardCharsets.UTF_8)).contains("polling as asked", "two emulations");

        CompareOptions hardware = new CompareOptions();
        Emulation.apply(hardware, null, new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
        assertThat(hardware.events).isFalse();
        assertThat(hardware.tools).hasSize(Tool.values().length);

        CompareOptions onlyWriteLat = new CompareOptions();
        assertThat(onlyWriteLat.parse(new String[] {"--tools", "ib_write_lat"})).isNull();
        assertThatThrownBy(() -> Emulation.apply(onlyWriteLat, "tcg", new PrintStream(new ByteArrayOutputStream(), true,
                StandardCharsets.UTF_8))).hasMessageContaining("nothing left to compare");
        CompareOptions events = new CompareOptions();
        assertThat(events.parse(new String[] {"-e"})).isNull();
        assertThat(events.events).isTrue();
    }
}
