package dev.verbs4j.perf.compare;

import dev.verbs4j.verbs.TestBed;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * compare on the test bed with the smallest sweep that still runs both languages: ib_send_lat at
 * 2 B (C, then Java in its own JVMs), a bound no ratio can meet, then the same results again from
 * the CSV without a bound.
 */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_3)
class CompareDeviceTest {

    // The Java pair's limit is compare's --timeout + 120 s: its default (300 s in all) was too short
    // for the two young JVMs at the start of a VM beside two busy ones (stopped in 3 of 5 full runs
    // on a 2-core host, with the C pair done in 8-20 s); 540 s, and the test's limit after it.
    @Test
    @Timeout(900)
    void tinySweepGivesFiniteRatiosAndTheBoundDecidesTheStatus(@TempDir Path dir) throws Exception {
        Path csv = dir.resolve("compare.csv");
        Path png = dir.resolve("compare.png");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int rc = Compare.run(new String[] {"--tools", "ib_send_lat", "--sizes", "2", "-n", "20", "--no-warmup",
            "--port", "19700", "--timeout", "420", "--csv", csv.toString(), "--plot", png.toString(), "--max-ratio", "0.0001"},
                print(out), print(err));
        String log = out.toString(StandardCharsets.UTF_8) + err.toString(StandardCharsets.UTF_8);
        assertThat(rc).as(log).isEqualTo(1);
        assertThat(log).contains("[  1/  2] ib_send_lat    C", "[  2/  2] ib_send_lat    Java", "Java slowdown",
                "ib_send_lat 2 B: ratio", "above the bound 1.0E-4");
        if (Emulation.detect() != null) {
            // the test bed's VM emulates its CPU: both sides sleep on completion events
            assertThat(log).contains("the CPU is emulated", "-n 20 -e");
        }
        List<Result> results = Report.readCsv(Files.readAllLines(csv));
        assertThat(results).singleElement().satisfies(r -> {
            assertThat(r.tool()).isEqualTo(Tool.IB_SEND_LAT);
            assertThat(r.size()).isEqualTo(2);
            assertThat(r.ratio()).as(log).isFinite().isPositive();
        });
        assertThat(Files.readAllBytes(png)).startsWith(new byte[] {(byte) 0x89, 'P', 'N', 'G'});

        ByteArrayOutputStream again = new ByteArrayOutputStream();
        assertThat(Compare.run(new String[] {"--from-csv", csv.toString(), "--csv", dir.resolve("2.csv").toString(),
            "--plot", dir.resolve("2.png").toString()}, print(again), print(err))).isZero();
        assertThat(again.toString(StandardCharsets.UTF_8)).contains("all 1 ratios within");
    }

    private static PrintStream print(ByteArrayOutputStream b) {
        return new PrintStream(b, true, StandardCharsets.UTF_8);
    }
}
