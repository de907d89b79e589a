package dev.verbs4j.tools.rdmacm;

import dev.verbs4j.rdmacm.ConnectionOptions;
import dev.verbs4j.rdmacm.RdmaConnection;
import dev.verbs4j.rdmacm.RdmaConnectionException;
import dev.verbs4j.rdmacm.RdmaServer;
import dev.verbs4j.rdmacm.RdmaTimeoutException;

import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code rdma-echo-load}: an RDMA CM echo load generator for {@link RdmaServer} and {@link
 * RdmaConnection}. The server ({@code -s}) accepts on a virtual thread and echoes each connection
 * on a virtual thread of its own; the client opens N connections at once, each on a virtual
 * thread, sends M messages on each, checks every echo byte for byte, and prints the throughput,
 * the round-trip latency percentiles (p50, p99, max) and the process's OS threads. Options in
 * {@link EchoLoadOptions}.
 */
public final class RdmaEchoLoad {

    private RdmaEchoLoad() {
    }

    /** Runs one side; returns 0 when everything was verified, 1 on a failure, 2 on a usage error. */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        int[] exit = {0};
        EchoLoadOptions o = EchoLoadOptions.parse(args, out, err, exit);
        if (o == null) {
            return exit[0];
        }
        try {
            return o.server() ? serve(o, out, err) : load(o, out, err);
        } catch (UnknownHostException e) {
            err.println("rdma-echo-load: unknown host: " + e.getMessage());
            return 2;
        } catch (RdmaConnectionException | InterruptedException e) {
            err.println("rdma-echo-load: " + e.getMessage());
            return 1;
        }
    }

    static ConnectionOptions connectionOptions(EchoLoadOptions o) {
        return ConnectionOptions.DEFAULT.withMaxMessageSize(o.size()).withDepths(4, 4);
    }

    private static int serve(EchoLoadOptions o, PrintStream out, PrintStream err) throws UnknownHostException,
            RdmaConnectionException, InterruptedException {
        InetSocketAddress local = new InetSocketAddress(InetAddress.getByName(o.address()), o.port());
        AtomicLong messages = new AtomicLong();
        AtomicLong failed = new AtomicLong();
        int count = o.serveCount();
        Semaphore ended = new Semaphore(0);
        try (RdmaServer server = RdmaServer.bind(local, connectionOptions(o), 1024, o.timeout(), null)) {
            out.println("listening on " + server.localAddress());
            out.flush();
            int served = 0;
            while (count == 0 || served < count) {
                RdmaConnection c;
                try {
                    c = server.accept(Duration.ofHours(1));
                } catch (RdmaTimeoutException e) {
                    continue;
                }
                served++;
                Thread.ofVirtual().name("echo " + c.remoteAddress()).start(() -> {
                    try (c) {
                        byte[] buffer = new byte[o.size()];
                        int n;
                        while ((n = c.receive(buffer, 0, buffer.length, Duration.ofHours(1))) != RdmaConnection.END_OF_STREAM) {
                            c.send(buffer, 0, n, o.timeout());
                            messages.incrementAndGet();
                        }
                    } catch (RdmaConnectionException e) {
                        failed.incrementAndGet();
                        err.println("rdma-echo-load: " + e.getMessage());
                    } finally {
                        ended.release();
                    }
                });
            }
            ended.acquire(count);
            out.println("served " + count + " connections, " + messages.get() + " messages echoed, " + failed.get()
                    + " failed; OS threads " + osThreads());
            return failed.get() == 0 ? 0 : 1;
        }
    }

    private static int load(EchoLoadOptions o, PrintStream out, PrintStream err) throws UnknownHostException, InterruptedException {
        InetSocketAddress remote = new InetSocketAddress(InetAddress.getByName(o.address()), o.port());
        InetSocketAddress local = o.local() == null ? null : new InetSocketAddress(InetAddress.getByName(o.local()), 0);
        int n = o.connections();
        long[][] latencies = new long[n][];
        ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
        CountDownLatch connected = new CountDownLatch(n);
        CountDownLatch done = new CountDownLatch(n);
        long[] start = new long[1];
        int threadsBefore = osThreads();
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            int id = i;
            Thread.ofVirtual().name("client " + i).start(() -> {
                boolean counted = false;
                try (RdmaConnection c = RdmaConnection.connect(remote, local, connectionOptions(o), o.timeout())) {
                    connected.countDown();
                    counted = true;
                    connected.await();
                    latencies[id] = exchange(c, id, o);
                } catch (Exception | AssertionError e) {
                    failures.add("connection " + id + ": " + e.getMessage());
                } finally {
                    if (!counted) {
                        connected.countDown();
                    }
                    done.countDown();
                }
            });
        }
        connected.await();
        start[0] = System.nanoTime();
        int threadsDuring = osThreads();
        done.await();
        long end = System.nanoTime();
        long[] all = Arrays.stream(latencies).filter(l -> l != null).flatMapToLong(Arrays::stream).sorted().toArray();
        int ok = (int) Arrays.stream(latencies).filter(l -> l != null).count();
        double seconds = (end - start[0]) / 1e9;
        out.printf("connections %d (connected in %.2f s), messages %d x %d bytes each: %d verified, %d failed%n", n,
                (start[0] - t0) / 1e9, o.messages(), o.size(), ok, n - ok);
        if (all.length > 0) {
            out.printf("throughput %.0f msg/s, %.2f MB/s (both ways) in %.2f s%n", all.length / seconds,
                    2.0 * all.length * o.size() / seconds / 1e6, seconds);
            out.printf("round trip us: p50 %.1f  p99 %.1f  max %.1f%n", all[all.length / 2] / 1e3,
                    all[(int) Math.min(all.length - 1, (long) Math.ceil(all.length * 0.99) - 1)] / 1e3, all[all.length - 1] / 1e3);
        }
        out.printf("OS threads: %d before, %d with all connections open%n", threadsBefore, threadsDuring);
        failures.stream().limit(10).forEach(f -> err.println("rdma-echo-load: " + f));
        return ok == n ? 0 : 1;
    }

    /** Sends and checks {@code o.messages()} messages on {@code c}; returns each round trip in ns. */
    private static long[] exchange(RdmaConnection c, int id, EchoLoadOptions o) throws RdmaConnectionException {
        long[] times = new long[o.messages()];
        byte[] message = new byte[o.size()];
        byte[] echo = new byte[o.size()];
        for (int m = 0; m < o.messages(); m++) {
            fill(message, id, m);
            long t = System.nanoTime();
            c.send(message, o.timeout());
            int len = c.receive(echo, 0, echo.length, o.timeout());
            times[m] = System.nanoTime() - t;
            if (len != message.length || !Arrays.equals(message, echo)) {
                throw new AssertionError("message " + m + " came back " + (len < 0 ? "as end of stream" : "changed (" + len + " bytes)"));
            }
        }
        return times;
    }

    /** Message {@code m} of connection {@code id}: both numbers, then a pattern of them. */
    static void fill(byte[] b, int id, int m) {
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) (id * 131 + m * 7 + i);
        }
        for (int i = 0; i < 4; i++) {
            b[i] = (byte) (id >>> (8 * i));
            b[4 + i] = (byte) (m >>> (8 * i));
        }
    }

    /** The threads of this process, as the kernel counts them (/proc/self/status); -1 where it cannot be read. */
    static int osThreads() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("Threads:")) {
                    return Integer.parseInt(line.substring(8).trim());
                }
            }
        } catch (IOException | NumberFormatException e) {
            return -1;
        }
        return -1;
    }
}
