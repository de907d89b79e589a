package dev.verbs4j.perf.tools;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The numbers of the result rows are printed as glibc prints them. */
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
}
