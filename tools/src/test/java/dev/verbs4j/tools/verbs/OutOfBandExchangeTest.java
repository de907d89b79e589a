package dev.verbs4j.tools.verbs;

import dev.verbs4j.verbs.Gid;
import dev.verbs4j.verbs.QueuePairEndpoint;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The pingpong out-of-band message format and exchange, over TCP on this host (no RDMA device). */
@Timeout(60)
class OutOfBandExchangeTest {

    private static final Duration LIMIT = Duration.ofSeconds(20);

    /** ::ffff:127.0.0.1, the RoCE v2 GID of rxe_lo. */
    private static final Gid LOOPBACK_GID = Gid.of(HexFormat.of().parseHex("00000000000000000000ffff7f000001"));

    /**
     * What ibv_rc_pingpong 44.0 (x86-64) sent as a client from rxe_lo with -g of its
     * ::ffff:127.0.0.1 GID, taken off the wire; it printed "local address:  LID 0x0000,
     * QPN 0x000011, PSN 0x288b8f, GID ::ffff:127.0.0.1".
     */
    private static final String C_CLIENT_MESSAGE = "0000:000011:288b8f:00000000000000000000ffff7f000001";

    @Test
    void formatIsTheCOne() {
        QueuePairEndpoint e = new QueuePairEndpoint(0x1a, 0x11, 0xabcdef, LOOPBACK_GID);
        assertThat(OutOfBandExchange.format(e)).isEqualTo("001a:000011:abcdef:00000000000000000000ffff7f000001");
        byte[] wire = OutOfBandExchange.encode(e);
        assertThat(wire).hasSize(52);
        assertThat(OutOfBandExchange.MESSAGE_BYTES).isEqualTo(52);
        assertThat(wire[51]).isZero();
        assertThat(new String(wire, 0, 51, StandardCharsets.US_ASCII)).isEqualTo(OutOfBandExchange.format(e));
    }

    @Test
    void readsWhatTheCToolSends() {
        byte[] wire = Arrays.copyOf(C_CLIENT_MESSAGE.getBytes(StandardCharsets.US_ASCII), 52);
        QueuePairEndpoint e = OutOfBandExchange.decode(wire);
        assertThat(e.lid()).isZero();
        assertThat(e.qpn()).isEqualTo(0x11);
        assertThat(e.psn()).isEqualTo(0x288b8f);
        assertThat(e.gid()).isEqualTo(LOOPBACK_GID);
        assertThat(e.gid().toString()).isEqualTo("::ffff:127.0.0.1");
        assertThat(OutOfBandExchange.encode(e)).isEqualTo(wire);
    }

    @Test
    void wireGidIsTheGidBytesInNetworkOrder() {
        byte[] raw = new byte[16];
        for (int i = 0; i < 16; i++) {
            raw[i] = (byte) (0xf0 + i);
        }
        raw[0] = (byte) 0xfe;
        raw[1] = (byte) 0x80;
        Gid g = Gid.of(raw);
        assertThat(OutOfBandExchange.wireGid(g)).isEqualTo("fe80f2f3f4f5f6f7f8f9fafbfcfdfeff");
        assertThat(OutOfBandExchange.parseWireGid("FE80F2F3F4F5F6F7F8F9FAFBFCFDFEFF")).isEqualTo(g);
    }

    @Test
    void roundTrips() {
        Random r = new Random(42);
        for (int i = 0; i < 1000; i++) {
            byte[] raw = new byte[16];
            r.nextBytes(raw);
            QueuePairEndpoint e = new QueuePairEndpoint(r.nextInt(0x10000), r.nextInt(0x1000000), r.nextInt(0x1000000), Gid.of(raw));
            assertThat(OutOfBandExchange.decode(OutOfBandExchange.encode(e))).isEqualTo(e);
            assertThat(OutOfBandExchange.parse(OutOfBandExchange.format(e))).isEqualTo(e);
        }
    }

    @Test
    void rejectsMalformedMessages() {
        for (String bad : new String[]{"", "done", "0000:000011:5ac2f4", "0000:000011:5ac2f4:0000",
                "0000:000011:5ac2f4:0000000000000000000ffff7f000001g", "00000:000011:288b8f:00000000000000000000ffff7f000001",
                "0000:0000x1:5ac2f4:00000000000000000000ffff7f000001", "0000:000011:5ac2f4:00000000000000000000ffff7f000001:"}) {
            assertThatThrownBy(() -> OutOfBandExchange.parse(bad)).as("\"%s\"", bad).isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void clientAndServerExchangeEndpoints() throws Exception {
        int port = freePort();
        QueuePairEndpoint server = new QueuePairEndpoint(0, 0x22, 0x123456, LOOPBACK_GID);
        QueuePairEndpoint client = new QueuePairEndpoint(0, 0x11, 0x654321, LOOPBACK_GID);
        AtomicReference<QueuePairEndpoint> seenBeforeReply = new AtomicReference<>();
        CompletableFuture<QueuePairEndpoint> s = CompletableFuture.supplyAsync(() -> {
            try {
                return OutOfBandExchange.exchangeAsServer(port, server, seenBeforeReply::set, LIMIT);
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        });
        QueuePairEndpoint fromServer = connectWithRetry(() -> OutOfBandExchange.exchangeAsClient("127.0.0.1", port, client, LIMIT));
        assertThat(fromServer).isEqualTo(server);
        assertThat(s.get(30, TimeUnit.SECONDS)).isEqualTo(client);
        assertThat(seenBeforeReply.get()).isEqualTo(client);
    }

    /** The server as the C client sees it: 52 bytes in, 52 bytes out, "done\0" in, closed. */
    @Test
    void serverSpeaksTheCBytes() throws Exception {
        int port = freePort();
        QueuePairEndpoint server = new QueuePairEndpoint(0, 0x22, 0x123456, LOOPBACK_GID);
        CompletableFuture<QueuePairEndpoint> s = CompletableFuture.supplyAsync(() -> {
            try {
                return OutOfBandExchange.exchangeAsServer(port, server, e -> { }, LIMIT);
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        });
        try (Socket c = connectWithRetry(() -> new Socket(InetAddress.getLoopbackAddress(), port))) {
            c.setSoTimeout(20_000);
            OutputStream out = c.getOutputStream();
            InputStream in = c.getInputStream();
            out.write(Arrays.copyOf(C_CLIENT_MESSAGE.getBytes(StandardCharsets.US_ASCII), 52));
            byte[] reply = in.readNBytes(52);
            assertThat(reply).isEqualTo(OutOfBandExchange.encode(server));
            out.write(new byte[]{'d', 'o', 'n', 'e', 0});
            assertThat(in.read()).as("server closes after done").isEqualTo(-1);
        }
        assertThat(s.get(30, TimeUnit.SECONDS)).isEqualTo(OutOfBandExchange.decode(
                Arrays.copyOf(C_CLIENT_MESSAGE.getBytes(StandardCharsets.US_ASCII), 52)));
    }

    /** The client as the C server sees it: 52 bytes in, 52 bytes out, then exactly "done\0". */
    @Test
    void clientSpeaksTheCBytes() throws Exception {
        QueuePairEndpoint client = new QueuePairEndpoint(0, 0x11, 0x654321, LOOPBACK_GID);
        QueuePairEndpoint server = new QueuePairEndpoint(0, 0x22, 0x123456, LOOPBACK_GID);
        try (ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            listener.setSoTimeout(20_000);
            CompletableFuture<QueuePairEndpoint> c = CompletableFuture.supplyAsync(() -> {
                try {
                    return OutOfBandExchange.exchangeAsClient("127.0.0.1", listener.getLocalPort(), client, LIMIT);
                } catch (IOException e) {
                    throw new RuntimeException(e);
                }
            });
            try (Socket s = listener.accept()) {
                s.setSoTimeout(20_000);
                assertThat(s.getInputStream().readNBytes(52)).isEqualTo(OutOfBandExchange.encode(client));
                s.getOutputStream().write(OutOfBandExchange.encode(server));
                assertThat(s.getInputStream().readAllBytes()).containsExactly('d', 'o', 'n', 'e', 0);
            }
            assertThat(c.get(30, TimeUnit.SECONDS)).isEqualTo(server);
        }
    }

    @Test
    void shortMessageSaysHowMuchArrived() throws Exception {
        int port = freePort();
        CompletableFuture<Throwable> s = CompletableFuture.supplyAsync(() -> {
            try (OutOfBandExchange x = OutOfBandExchange.accept(port, LIMIT, LIMIT)) {
                x.receive();
                return null;
            } catch (Throwable e) {
                return e;
            }
        });
        try (Socket c = connectWithRetry(() -> new Socket(InetAddress.getLoopbackAddress(), port))) {
            c.getOutputStream().write("0000:0000".getBytes(StandardCharsets.US_ASCII));
        }
        Throwable t = s.get(30, TimeUnit.SECONDS);
        assertThat(t).isInstanceOf(OutOfBandExchange.ShortMessageException.class);
        assertThat(((OutOfBandExchange.ShortMessageException) t).received()).isEqualTo(9);
        assertThat(((OutOfBandExchange.ShortMessageException) t).expected()).isEqualTo(52);
    }

    @Test
    void waitsEndOnTimeoutAndOnInterrupt() throws Exception {
        long t0 = System.nanoTime();
        assertThatThrownBy(() -> OutOfBandExchange.accept(freePort(), Duration.ofMillis(300), null))
                .isInstanceOf(SocketTimeoutException.class);
        assertThat(System.nanoTime() - t0).isLessThan(Duration.ofSeconds(10).toNanos());

        CompletableFuture<Throwable> result = new CompletableFuture<>();
        int port = freePort();
        Thread waiter = Thread.ofPlatform().start(() -> {
            try (OutOfBandExchange x = OutOfBandExchange.accept(port, null, null)) {
                result.complete(null);
            } catch (Throwable e) {
                result.complete(e);
            }
        });
        Thread.sleep(300);
        waiter.interrupt();
        assertThat(result.get(10, TimeUnit.SECONDS)).isInstanceOf(InterruptedIOException.class);

        try (ServerSocket silent = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            try (OutOfBandExchange x = OutOfBandExchange.connect("127.0.0.1", silent.getLocalPort(), LIMIT, Duration.ofMillis(300))) {
                assertThatThrownBy(x::receive).isInstanceOf(SocketTimeoutException.class);
            }
        }
    }

    @Test
    void connectFailsWithoutRetrying() throws Exception {
        int port = freePort();
        long t0 = System.nanoTime();
        assertThatThrownBy(() -> OutOfBandExchange.connect("127.0.0.1", port, LIMIT, LIMIT)).isInstanceOf(IOException.class);
        assertThat(System.nanoTime() - t0).isLessThan(Duration.ofSeconds(5).toNanos());
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    interface IoSupplier<T> {
        T get() throws IOException;
    }

    /** The server thread may not listen yet: retry the connection for a while. */
    private static <T> T connectWithRetry(IoSupplier<T> connect) throws Exception {
        long deadline = System.nanoTime() + LIMIT.toNanos();
        while (true) {
            try {
                return connect.get();
            } catch (java.net.ConnectException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(20);
            }
        }
    }
}
