package dev.verbs4j.perf.tools;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * {@code --cpu_util} in duration mode, computed as perftest computes it: the user and idle times
 * of the first line of {@code /proc/stat}, read when the sample window opens and when it closes,
 * and the user share of their sum, in percent. A virtual thread takes the two readings at those
 * moments, so the measuring loop does no file reading. No native resources.
 */
final class CpuUtil {

    private static final Path STAT = Path.of("/proc/stat");

    private final long[] user = new long[2];
    private final long[] idle = new long[2];
    private Thread sampler;

    /** Takes the readings at the start and the end of {@code phases}' sample window. */
    void watch(DurationMode.Phases phases) {
        if (sampler != null) {
            return;
        }
        sampler = Thread.ofVirtual().name("perftest-cpu-util").start(() -> {
            try {
                sleepUntil(phases.sampleStart);
                read(0);
                sleepUntil(phases.sampleEnd);
                read(1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
    }

    private static void sleepUntil(long nanoTime) throws InterruptedException {
        long left;
        while ((left = nanoTime - System.nanoTime()) > 0) {
            Thread.sleep(left / 1_000_000, (int) (left % 1_000_000));
        }
    }

    private void read(int at) {
        try {
            List<String> lines = Files.readAllLines(STAT);
            String[] w = lines.get(0).trim().split("\\s+");
            // "cpu user nice system idle ...": perftest takes the second and the fifth word
            user[at] = Long.parseLong(w[1]);
            idle[at] = Long.parseLong(w[4]);
        } catch (IOException | RuntimeException e) {
            user[at] = 0;
            idle[at] = 0;
        }
    }

    /** The user share of the window in percent (float arithmetic as perftest's), 0 without readings. */
    double percent() {
        if (sampler != null) {
            try {
                sampler.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        long u = user[1] - user[0];
        long i = idle[1] - idle[0];
        return u + i != 0 ? (float) u / (u + i) * 100f : 0;
    }
}
