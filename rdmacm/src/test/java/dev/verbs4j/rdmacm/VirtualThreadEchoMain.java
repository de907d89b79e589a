package dev.verbs4j.rdmacm;

import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;

import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Test support, run in a JVM of its own (so that the virtual-thread scheduler's carrier count can
 * be set): an {@link RdmaServer} whose accept loop and connections run on virtual threads, and N
 * {@link RdmaConnection} clients on virtual threads that each send M numbered messages in batches
 * and check that every echo comes back whole and in order; JFR records {@code
 * jdk.VirtualThreadPinned} with threshold 0 meanwhile (after one warm-up client: see main). Arguments: server address, client address,
 * port, clients, messages. Prints {@code PINNED n}, {@code OS_THREADS peak}, and {@code RESULT ok
 * failed seconds}; exits 0 when every client verified all of its echoes.
 */
public final class VirtualThreadEchoMain {

    static final ConnectionOptions OPTIONS = ConnectionOptions.DEFAULT.withMaxMessageSize(64).withDepths(4, 4);
    static final int BATCH = 4;
    /**
     * How long the clients may take in all (a guard against a hang); the test waits a little
     * longer for this JVM. Beside two busy VMs the 256 clients took 157 s once and more than 150 s
     * another time, with every connection and echo still progressing (the first connections
     * came after 10 s and after 51 s).
     */
    static final int LIMIT_SECONDS = 240;
    static final AtomicInteger CONNECTED = new AtomicInteger();
    private static long t0;

    private VirtualThreadEchoMain() {
    }

    public static void main(String[] args) throws Exception {
        InetAddress serverHost = InetAddress.getByName(args[0]);
        InetAddress clientHost = InetAddress.getByName(args[1]);
        int port = Integer.parseInt(args[2]);
        int clients = Integer.parseInt(args[3]);
        int messages = Integer.parseInt(args[4]);
        Path jfr = Files.createTempFile("pinned", ".jfr");
        int ok;
        ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
        try (Recording recording = new Recording()) {
            recording.enable("jdk.VirtualThreadPinned").withThreshold(Duration.ZERO).withStackTrace();
            try (RdmaServer server = RdmaServer.bind(new InetSocketAddress(serverHost, port), OPTIONS, clients + 16,
                    Duration.ofSeconds(LIMIT_SECONDS), null)) {
                System.out.println("LISTENING " + server.localAddress().getPort());
                Thread acceptor = Thread.ofVirtual().name("accept").start(() -> acceptAll(server));
                // one client first, alone: the first use of each class loads and initializes it, and
                // a virtual thread waiting for another's class loading or initialization pins its
                // carrier (a JDK limitation); the recording covers the run after it
                Thread warmUp = Thread.ofVirtual().name("warm-up").start(() -> {
                    try {
                        runClient(server.localAddress(), new InetSocketAddress(clientHost, 0), clients, BATCH);
                    } catch (Throwable e) {
                        failures.add("warm-up client: " + e);
                    }
                });
                warmUp.join();
                CONNECTED.set(0);
                recording.start();
                t0 = System.nanoTime();
                CountDownLatch done = new CountDownLatch(clients);
                AtomicInteger verified = new AtomicInteger();
                Thread progress = Thread.ofPlatform().daemon().start(() -> {
                    try {
                        while (!done.await(10, TimeUnit.SECONDS)) {
                            System.out.println("PROGRESS connected " + CONNECTED.get() + ", done " + (clients - done.getCount())
                                    + ", " + (System.nanoTime() - t0) / 1_000_000_000 + " s");
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                });
                for (int c = 0; c < clients; c++) {
                    int client = c;
                    Thread.ofVirtual().name("client-" + c).start(() -> {
                        try {
                            runClient(server.localAddress(), new InetSocketAddress(clientHost, 0), client, messages);
                            verified.incrementAndGet();
                        } catch (Throwable e) {
                            failures.add("client " + client + ": " + e);
                        } finally {
                            done.countDown();
                        }
                    });
                }
                if (!done.await(LIMIT_SECONDS, TimeUnit.SECONDS)) {
                    failures.add(done.getCount() + " clients did not finish within " + LIMIT_SECONDS + " s");
                    printThreads();
                }
                progress.interrupt();
                ok = verified.get();
                server.close();
                acceptor.join(10_000);
            }
            recording.stop();
            recording.dump(jfr);
        }
        List<RecordedEvent> pinned = RecordingFile.readAllEvents(jfr).stream()
                .filter(e -> e.getEventType().getName().equals("jdk.VirtualThreadPinned")).toList();
        Files.deleteIfExists(jfr);
        for (RecordedEvent e : pinned.subList(0, Math.min(3, pinned.size()))) {
            System.out.println("pinned: " + e);
        }
        failures.stream().limit(10).forEach(f -> System.out.println("failure: " + f));
        System.out.println("PINNED " + pinned.size());
        System.out.println("OS_THREADS " + ManagementFactory.getThreadMXBean().getPeakThreadCount());
        System.out.println("RESULT " + ok + " " + (clients - ok) + " " + (System.nanoTime() - t0) / 1_000_000_000.0);
        System.out.flush();
        System.exit(ok == clients && failures.isEmpty() ? 0 : 1);
    }

    /** Where every thread, virtual ones included, is (the first 400 lines of the JDK's thread dump). */
    private static void printThreads() {
        try {
            Path dump = Files.createTempFile("vt-echo-threads", ".txt");
            Files.delete(dump);
            Process jcmd = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
                    Long.toString(ProcessHandle.current().pid()), "Thread.dump_to_file", dump.toString())
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            if (!jcmd.waitFor(20, TimeUnit.SECONDS)) {
                jcmd.destroyForcibly();
            }
            Files.readAllLines(dump).stream().limit(400).forEach(l -> System.out.println("threads: " + l));
            Files.deleteIfExists(dump);
        } catch (Exception e) {
            System.out.println("threads: no dump: " + e);
        }
    }

    private static void acceptAll(RdmaServer server) {
        while (true) {
            RdmaConnection c;
            try {
                c = server.accept(Duration.ofMinutes(5));
            } catch (RdmaConnectionException e) {
                return; // closed
            }
            Thread.ofVirtual().name("echo").start(() -> RdmaEchoServerMain.echo(c));
        }
    }

    /** Sends {@code messages} numbered messages in batches and checks that the echoes come back whole and in order. */
    static void runClient(InetSocketAddress server, InetSocketAddress local, int client, int messages) throws Exception {
        try (RdmaConnection c = RdmaConnection.connect(server, local, OPTIONS, Duration.ofSeconds(LIMIT_SECONDS))) {
            CONNECTED.incrementAndGet();
            Duration wait = Duration.ofSeconds(60);
            for (int sent = 0; sent < messages; ) {
                int n = Math.min(BATCH, messages - sent);
                for (int i = 0; i < n; i++) {
                    c.send(message(client, sent + i), wait);
                }
                for (int i = 0; i < n; i++) {
                    byte[] echo = c.receive(wait);
                    byte[] expected = message(client, sent + i);
                    if (echo == null || !java.util.Arrays.equals(echo, expected)) {
                        throw new AssertionError("message " + (sent + i) + " came back as "
                                + (echo == null ? "end of stream" : java.util.HexFormat.of().formatHex(echo)));
                    }
                }
                sent += n;
            }
        }
    }

    /** Message {@code seq} of {@code client}: both numbers, then a pattern of a length that varies with them. */
    static byte[] message(int client, int seq) {
        ByteBuffer b = ByteBuffer.allocate(8 + (client + seq) % 56);
        b.putInt(client).putInt(seq);
        while (b.hasRemaining()) {
            b.put((byte) (client * 31 + seq + b.position()));
        }
        return b.array();
    }
}
