package dev.verbs4j.naaice;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/** Helpers of the NAAICE device tests: byte checks and process resource counts. */
final class NaaiceTestSupport {

    private static final int CHUNK = 1 << 20;

    private NaaiceTestSupport() {
    }

    /** The first index of {@code s} whose byte is not {@code v}, or -1. */
    static long firstDifference(MemorySegment s, byte v) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment want = arena.allocate(Math.min(CHUNK, Math.max(1, s.byteSize())));
            want.fill(v);
            for (long at = 0; at < s.byteSize(); at += CHUNK) {
                long n = Math.min(CHUNK, s.byteSize() - at);
                long m = MemorySegment.mismatch(s, at, at + n, want, 0, n);
                if (m >= 0) {
                    return at + m;
                }
            }
            return -1;
        }
    }

    /** Open file descriptors of this process. */
    static int openFds() throws IOException {
        try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
            return (int) s.count();
        }
    }

    /** Resident set size of this process in KiB. */
    static long rssKiB() throws IOException {
        for (String l : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (l.startsWith("VmRSS:")) {
                return Long.parseLong(l.replaceAll("[^0-9]", ""));
            }
        }
        return -1;
    }

    /** Lines of {@code rdma res show KIND} (mr, qp, cm_id, pd, cq) that name this process's pid. */
    static int rdmaResources(String kind) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("rdma", "res", "show", kind).redirectErrorStream(true).start();
        String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor(10, TimeUnit.SECONDS);
        String pid = "pid " + ProcessHandle.current().pid() + " ";
        int n = 0;
        for (String line : text.split("\n")) {
            if ((line + " ").contains(pid)) {
                n++;
            }
        }
        return n;
    }
}
