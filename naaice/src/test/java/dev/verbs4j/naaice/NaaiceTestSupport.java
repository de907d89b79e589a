package dev.verbs4j.naaice;

import dev.verbs4j.verbs.TestBed;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/** Helpers of the NAAICE device tests: the test bed's addresses and process resource counts. */
final class NaaiceTestSupport {

    private NaaiceTestSupport() {
    }

    /** The NAA's address: host B's, {@code port}. */
    static InetSocketAddress naaAddress(int port) throws UnknownHostException {
        return new InetSocketAddress(InetAddress.getByName(TestBed.hostB().address()), port);
    }

    /** The address a host side connects from: host A's, any port. */
    static InetSocketAddress hostAddress() throws UnknownHostException {
        return new InetSocketAddress(InetAddress.getByName(TestBed.hostA().address()), 0);
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
