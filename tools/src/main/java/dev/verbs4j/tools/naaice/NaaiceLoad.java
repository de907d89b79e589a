package dev.verbs4j.tools.naaice;

import dev.verbs4j.naaice.NaaClient;
import dev.verbs4j.naaice.NaaServer;
import dev.verbs4j.naaice.ReferenceKernels;
import dev.verbs4j.tools.Getopt;
import dev.verbs4j.verbs.RdmaArena;

import java.io.IOException;
import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code naaice-load}: opens N concurrent NAAICE client connections from this JVM, each on a
 * virtual thread, with one input/output parameter; once all are set up, runs M RPCs on each and
 * verifies every byte the NAA wrote back (functions 1, 2, 3: add 1, add 2, no-op), then closes
 * them together. Prints the failures, the clients that did not end in time, the throughput, the
 * setup and RPC latency percentiles, the server's OS threads (its peak during the run) and its
 * resident memory per connection: of this JVM with {@code --serve} (the server runs here, beside
 * the clients), or of the process {@code --server-pid} names.
 */
public final class NaaiceLoad {

    /** Clients connecting at once by default: a thousand connect requests at once would outwait the connection manager's retries. */
    public static final int DEFAULT_CONNECTING = 64;

    private NaaiceLoad() {
    }

    private static void usage(PrintStream out) {
        out.print("Usage: naaice-load -a ADDRESS [OPTIONS]\n" + CommonOptions.NAA_USAGE + """
                  -c, --clients=N         concurrent client connections (default 16)
                  -n, --rpcs=M            RPCs on each connection (default 10)
                  -s, --size=BYTES        the in/out parameter of each connection, k, m, g suffixes (default 4096)
                  -f, --fncode=F          function code 1..3 (default 1, add one)
                  -w, --connecting=K      clients connecting at once, the others wait their turn (default 64)
                  -S, --serve             run the software NAA in this JVM, listening on ADDRESS
                  -P, --server-pid=PID    the server process whose threads and memory to report
                """ + CommonOptions.CLIENT_USAGE_TAIL);
    }

    /** What a load run measured. Latencies in microseconds; memory in KiB. */
    public record Result(int clients, int rpcsEach, long size, int failed, int hung, long rpcsVerified, long millis,
                         long[] setupMicros, long[] rpcMicros, int peakOpen, int threadsBefore, int threadsPeak,
                         long rssBeforeKiB, long rssPeakKiB, List<String> failures) {

        /** The {@code p}-th percentile (0..100) of {@code sorted}, nearest rank; -1 when empty. */
        public static long percentile(long[] sorted, double p) {
            if (sorted.length == 0) {
                return -1;
            }
            int rank = (int) Math.ceil(p / 100 * sorted.length);
            return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
        }

        /** Resident memory the run added per open connection, KiB. */
        public long rssPerConnectionKiB() {
            return peakOpen == 0 ? 0 : (rssPeakKiB - rssBeforeKiB) / peakOpen;
        }

        /** Every client connected, ran its RPCs, verified and ended in time. */
        public boolean ok() {
            return failed == 0 && hung == 0 && rpcsVerified == (long) clients * rpcsEach;
        }
    }

    /**
     * Runs the tool with {@code out} and {@code err} as its streams: 0 when every client verified
     * every RPC, 1 when one failed or hung, 2 on a usage error.
     */
    public static int run(String[] args, PrintStream out, PrintStream err) throws Exception {
        Getopt g = new Getopt("naaice-load", args, "a:p:l:c:n:s:f:w:SP:t:vqh", "address:a", "port:p", "local:l", "clients:c",
                "rpcs:n", "size:s", "fncode:f", "connecting:w", "serve:S", "server-pid:P", "timeout:t", "verbose:v", "quiet:q", "help:h");
        int clients = 16;
        int rpcs = 10;
        long size = 4096;
        int fn = ReferenceKernels.FN_ADD_ONE;
        int connecting = DEFAULT_CONNECTING;
        boolean serve = false;
        long serverPid = -1;
        ClientOptions client = new ClientOptions("naaice-load", out, err, NaaiceLoad::usage);
        try {
            for (int c; (c = g.next(err)) != -1; ) {
                switch (c) {
                    case 'c' -> clients = (int) NaaArguments.number("--clients", g.argument(), 1, 100_000);
                    case 'n' -> rpcs = (int) NaaArguments.number("--rpcs", g.argument(), 1, 10_000_000);
                    case 's' -> size = NaaArguments.size("--size", g.argument(), 1, Integer.MAX_VALUE);
                    case 'f' -> fn = (int) NaaArguments.number("--fncode", g.argument(), 1, 3);
                    case 'w' -> connecting = (int) NaaArguments.number("--connecting", g.argument(), 1, 100_000);
                    case 'S' -> serve = true;
                    case 'P' -> serverPid = NaaArguments.number("--server-pid", g.argument(), 1, Integer.MAX_VALUE);
                    default -> {
                        int end = client.take(c, g);
                        if (end != CommonOptions.GO_ON) {
                            return end;
                        }
                    }
                }
            }
        } catch (IllegalArgumentException e) {
            return client.invalid(e);
        }
        client.applyVerbosity();
        if (client.address() != null && serve && serverPid >= 0) {
            err.println("naaice-load: --serve and --server-pid exclude each other");
            return 2;
        }
        NaaArguments at = client.resolve();
        if (at == null) {
            return 2;
        }
        InetSocketAddress naa = at.naa();
        InetSocketAddress local = at.local();
        Duration timeout = client.timeout();
        long pid = serverPid >= 0 ? serverPid : ProcessHandle.current().pid();
        NaaServer server = serve ? NaaServer.builder().bind(naa).maxConnections(Math.max(1024, clients)).start() : null;
        Result r;
        try {
            r = load(naa, local, clients, rpcs, size, fn, connecting, timeout, pid, err);
        } finally {
            if (server != null) {
                server.close();
            }
        }
        print(r, out, serve ? "this JVM (server and clients)" : serverPid >= 0 ? "server pid " + serverPid : "this JVM (clients only)");
        for (String f : r.failures().subList(0, Math.min(10, r.failures().size()))) {
            err.println("naaice-load: " + f);
        }
        return r.ok() ? 0 : 1;
    }

    /** Prints {@code r}: one line per measure, then one CSV line. */
    static void print(Result r, PrintStream out, String whose) {
        long[] rpc = r.rpcMicros();
        long[] setup = r.setupMicros();
        double seconds = r.millis() / 1e3;
        out.printf("clients %d, RPCs each %d, parameter %d bytes%n", r.clients(), r.rpcsEach(), r.size());
        out.printf("failed %d, hung %d, RPCs verified %d of %d, at most %d connections open at once%n", r.failed(), r.hung(),
                r.rpcsVerified(), (long) r.clients() * r.rpcsEach(), r.peakOpen());
        out.printf("time %.3f s, %.1f RPC/s, %.3f MB/s both ways%n", seconds, r.rpcsVerified() / seconds,
                2.0 * r.rpcsVerified() * r.size() / 1e6 / seconds);
        out.printf("setup us: p50 %d, p99 %d, max %d%n", Result.percentile(setup, 50), Result.percentile(setup, 99),
                Result.percentile(setup, 100));
        out.printf("RPC us: p50 %d, p99 %d, max %d%n", Result.percentile(rpc, 50), Result.percentile(rpc, 99),
                Result.percentile(rpc, 100));
        out.printf("OS threads of %s: %d before, %d at the peak%n", whose, r.threadsBefore(), r.threadsPeak());
        out.printf("RSS of %s: %d KiB before, %d KiB at the peak, %d KiB per connection%n", whose, r.rssBeforeKiB(),
                r.rssPeakKiB(), r.rssPerConnectionKiB());
        out.println("clients,rpcs,failed,hung,verified,seconds,rpc_per_s,rpc_p50_us,rpc_p99_us,rpc_max_us,threads_peak,rss_per_conn_kib");
        out.printf("%d,%d,%d,%d,%d,%.3f,%.1f,%d,%d,%d,%d,%d%n", r.clients(), r.rpcsEach(), r.failed(), r.hung(), r.rpcsVerified(),
                seconds, r.rpcsVerified() / seconds, Result.percentile(rpc, 50), Result.percentile(rpc, 99),
                Result.percentile(rpc, 100), r.threadsPeak(), r.rssPerConnectionKiB());
    }

    /**
     * The load itself: {@code clients} virtual threads each connect to {@code naa} (from {@code
     * local}, or null) with one in/out parameter of {@code size} bytes and set it up; once all are
     * set up (or failed; at most {@code connecting} connect and set up at a time), each runs {@code rpcs} RPCs of {@code fn} (1..3), verifying every byte
     * after each; once all are through, they close. Each step has {@code timeout}; a client still
     * running {@code timeout} after the last step's deadline counts as hung. Threads and memory are
     * read from {@code /proc/PID/status} of {@code pid}, the peak sampled every 20 ms. Progress
     * lines (all set up, all RPCs through) go to {@code progress}, unless it is null.
     */
    public static Result load(InetSocketAddress naa, InetSocketAddress local, int clients, int rpcs, long size, int fn,
                              int connecting, Duration timeout, long pid, PrintStream progress) throws InterruptedException {
        Semaphore turns = new Semaphore(connecting);
        int add = fn == ReferenceKernels.FN_ADD_ONE ? 1 : fn == ReferenceKernels.FN_ADD_TWO ? 2 : 0;
        Path status = Path.of("/proc", Long.toString(pid), "status");
        int threadsBefore = (int) statusField(status, "Threads:");
        long rssBefore = statusField(status, "VmRSS:");
        AtomicInteger threadsPeak = new AtomicInteger(threadsBefore);
        AtomicLong rssPeak = new AtomicLong(rssBefore);
        AtomicInteger open = new AtomicInteger();
        AtomicInteger peakOpen = new AtomicInteger();
        AtomicInteger failed = new AtomicInteger();
        AtomicLong verified = new AtomicLong();
        long[] setupMicros = new long[clients];
        long[][] rpcMicros = new long[clients][];
        Map<Integer, String> failures = new ConcurrentHashMap<>();
        CountDownLatch setUp = new CountDownLatch(clients);
        CountDownLatch done = new CountDownLatch(clients);
        CountDownLatch ended = new CountDownLatch(clients);
        long stepNanos = timeout.toNanos();
        // a platform thread: reading /proc on a virtual thread may have the scheduler add a carrier meanwhile
        Thread sampler = Thread.ofPlatform().daemon().name("naaice-load-sampler").start(() -> {
            while (!Thread.currentThread().isInterrupted()) {
                threadsPeak.accumulateAndGet((int) statusField(status, "Threads:"), Math::max);
                rssPeak.accumulateAndGet(statusField(status, "VmRSS:"), Math::max);
                try {
                    Thread.sleep(20);
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
        long t0 = System.nanoTime();
        Thread[] threads = new Thread[clients];
        for (int i = 0; i < clients; i++) {
            int me = i;
            threads[i] = Thread.ofVirtual().name("naaice-load-" + i).start(() -> {
                boolean arrived = false;
                boolean finished = false;
                long[] times = new long[rpcs];
                int n = 0;
                try (RdmaArena arena = RdmaArena.ofShared()) {
                    MemorySegment io = arena.allocate(size, 4096);
                    NaaClient.Builder b = NaaClient.builder(naa).inOut(io).resolveTimeouts(timeout, timeout);
                    if (local != null) {
                        b.localAddress(local);
                    }
                    try (NaaClient c = b.build()) {
                        turns.acquire();
                        try {
                            c.connect(timeout);
                            c.setupRegions(timeout);
                            setupMicros[me] = c.setupNanos() / 1000;
                            peakOpen.accumulateAndGet(open.incrementAndGet(), Math::max);
                        } finally {
                            turns.release();
                            arrived = true;
                            setUp.countDown();
                        }
                        // every connection open at once before the RPCs start
                        setUp.await(stepNanos, TimeUnit.NANOSECONDS);
                        for (; n < rpcs; n++) {
                            int v = (me * 31 + n * 7) & 0xff;
                            io.fill((byte) v);
                            c.rpc(fn, timeout);
                            times[n] = c.lastRpcNanos() / 1000;
                            long at = ReferenceKernels.firstDifference(io, (byte) (v + add));
                            if (at >= 0) {
                                throw new IllegalStateException("RPC " + (n + 1) + ": byte " + at + " differs");
                            }
                            verified.incrementAndGet();
                        }
                        finished = true;
                        done.countDown();
                        done.await(stepNanos, TimeUnit.NANOSECONDS);
                        open.decrementAndGet();
                    }
                } catch (Throwable e) {
                    failed.incrementAndGet();
                    failures.put(me, "client " + me + " after " + n + " RPCs: " + e);
                } finally {
                    if (!arrived) {
                        setUp.countDown();
                    }
                    if (!finished) {
                        done.countDown();
                    }
                    rpcMicros[me] = Arrays.copyOf(times, n);
                    ended.countDown();
                }
            });
        }
        // connect + setup, the RPCs, the close: three steps at most
        long end = t0 + 4 * stepNanos;
        if (setUp.await(end - System.nanoTime(), TimeUnit.NANOSECONDS) && progress != null) {
            progress.printf("naaice-load: %d of %d clients set up after %.1f s%n", open.get(), clients, (System.nanoTime() - t0) / 1e9);
        }
        if (done.await(end - System.nanoTime(), TimeUnit.NANOSECONDS) && progress != null) {
            progress.printf("naaice-load: %d RPCs verified after %.1f s%n", verified.get(), (System.nanoTime() - t0) / 1e9);
        }
        boolean allEnded = ended.await(end - System.nanoTime(), TimeUnit.NANOSECONDS);
        long millis = (System.nanoTime() - t0) / 1_000_000;
        sampler.interrupt();
        sampler.join();
        int hung = 0;
        if (!allEnded) {
            for (Thread t : threads) {
                if (t.isAlive()) {
                    hung++;
                }
            }
        }
        List<Long> all = new ArrayList<>();
        for (long[] r : rpcMicros) {
            if (r != null) {
                for (long x : r) {
                    all.add(x);
                }
            }
        }
        long[] rpcSorted = all.stream().mapToLong(Long::longValue).sorted().toArray();
        long[] setupSorted = Arrays.stream(setupMicros).filter(x -> x > 0).sorted().toArray();
        List<String> f = new ArrayList<>(new java.util.TreeMap<>(failures).values());
        return new Result(clients, rpcs, size, failed.get(), hung, verified.get(), millis, setupSorted, rpcSorted, peakOpen.get(),
                threadsBefore, threadsPeak.get(), rssBefore, rssPeak.get(), f);
    }

    /** The number of a {@code /proc/PID/status} line starting with {@code name} (KiB for memory), or -1. */
    static long statusField(Path status, String name) {
        try {
            for (String l : Files.readAllLines(status)) {
                if (l.startsWith(name)) {
                    return Long.parseLong(l.substring(name.length()).replaceAll("[^0-9]", ""));
                }
            }
        } catch (IOException | NumberFormatException e) {
            // gone, or not Linux
        }
        return -1;
    }
}
