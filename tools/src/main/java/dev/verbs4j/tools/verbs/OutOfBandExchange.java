package dev.verbs4j.tools.verbs;

import dev.verbs4j.verbs.Gid;
import dev.verbs4j.verbs.QueuePairEndpoint;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Locale;
import java.util.function.Consumer;

/**
 * The out-of-band TCP exchange of rdma-core's pingpong examples ({@code ibv_rc_pingpong},
 * {@code ibv_uc_pingpong}, {@code ibv_ud_pingpong}), wire-compatible with them: each side sends
 * its {@link QueuePairEndpoint} as the 52-byte message {@code "%04x:%06x:%06x:%s\0"} (LID, QP
 * number, PSN, GID as 32 hex digits), the client first; the server connects its queue pair, then
 * answers with its own; the client acknowledges with {@code "done\0"} and both close.
 *
 * <p>One object owns one TCP connection (the server's listening socket is closed as soon as the
 * client is accepted, as in C); close it when done. Waits take a timeout ({@code null} or zero:
 * none, as in C) and end early, with {@link InterruptedIOException}, when the waiting thread is
 * interrupted. Nothing native is involved.
 *
 * <pre>{@code
 * // server                                        // client
 * try (var x = OutOfBandExchange.accept(port,       try (var x = OutOfBandExchange.connect(host, port,
 *         null, timeout)) {                                 timeout, timeout)) {
 *     QueuePairEndpoint remote = x.receive();          x.send(local);
 *     ... connect the queue pair ...                   QueuePairEndpoint remote = x.receive();
 *     x.send(local);                                   x.sendDone();
 *     x.receiveDone();                             }
 * }
 * }</pre>
 */
final class OutOfBandExchange implements AutoCloseable {

    /** The TCP port the C tools use unless told otherwise. */
    public static final int DEFAULT_PORT = 18515;

    /** The size of an endpoint message on the wire, terminating NUL included. */
    public static final int MESSAGE_BYTES = "0000:000000:000000:00000000000000000000000000000000".length() + 1;

    /** The client's final acknowledgement on the wire, terminating NUL included. */
    private static final byte[] DONE = {'d', 'o', 'n', 'e', 0};

    /** Longest single blocking wait, so that timeouts and interrupts are noticed. */
    private static final int SLICE_MILLIS = 200;

    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;
    private final Duration ioTimeout;

    private OutOfBandExchange(Socket socket, Duration ioTimeout) throws IOException {
        this.socket = socket;
        this.ioTimeout = ioTimeout;
        socket.setTcpNoDelay(true);
        this.in = socket.getInputStream();
        this.out = socket.getOutputStream();
    }

    /** A message shorter than {@link #MESSAGE_BYTES} (or than the acknowledgement) arrived before the peer closed. */
    public static final class ShortMessageException extends EOFException {

        private static final long serialVersionUID = 1L;

        private final int received;
        private final int expected;

        ShortMessageException(int received, int expected) {
            super("the peer closed the connection after " + received + " of " + expected + " bytes");
            this.received = received;
            this.expected = expected;
        }

        /** Bytes that did arrive. */
        public int received() {
            return received;
        }

        /** Bytes expected. */
        public int expected() {
            return expected;
        }
    }

    /**
     * Listens on {@code port} of every local address (with {@code SO_REUSEADDR}, as C does), accepts
     * one client and stops listening.
     *
     * @param acceptTimeout how long to wait for the client; {@code null} or zero: without limit
     * @param ioTimeout     the limit of each later wait for data ({@code null} or zero: none)
     * @throws java.net.BindException         when the port cannot be bound
     * @throws SocketTimeoutException         when no client came in time
     * @throws InterruptedIOException         when the thread was interrupted while waiting
     */
    public static OutOfBandExchange accept(int port, Duration acceptTimeout, Duration ioTimeout) throws IOException {
        checkPort(port);
        long deadline = deadline(acceptTimeout);
        try (ServerSocket server = new ServerSocket()) {
            server.setReuseAddress(true);
            server.bind(new InetSocketAddress(port), 1);
            while (true) {
                server.setSoTimeout(slice(deadline));
                try {
                    Socket s = server.accept();
                    try {
                        return new OutOfBandExchange(s, ioTimeout);
                    } catch (IOException | RuntimeException e) {
                        s.close();
                        throw e;
                    }
                } catch (SocketTimeoutException e) {
                    checkWait(deadline, "no client connected to port " + port);
                }
            }
        }
    }

    /**
     * Connects to {@code host}:{@code port}, trying each address the name resolves to once, in
     * order, as C does (no retries).
     *
     * @param connectTimeout the limit of each connection attempt; {@code null} or zero: the system's
     * @param ioTimeout      the limit of each later wait for data ({@code null} or zero: none)
     * @throws java.net.UnknownHostException when the name does not resolve
     * @throws IOException                   the failure of the last attempt when none succeeded
     */
    public static OutOfBandExchange connect(String host, int port, Duration connectTimeout, Duration ioTimeout)
            throws IOException {
        checkPort(port);
        IOException last = null;
        for (InetAddress a : InetAddress.getAllByName(host)) {
            Socket s = new Socket();
            try {
                s.connect(new InetSocketAddress(a, port), millis(connectTimeout));
                return new OutOfBandExchange(s, ioTimeout);
            } catch (IOException e) {
                s.close();
                last = e;
            }
        }
        throw last != null ? last : new IOException("no address for " + host);
    }

    /** Sends {@code local} as one 52-byte message. */
    public void send(QueuePairEndpoint local) throws IOException {
        out.write(encode(local));
        out.flush();
    }

    /**
     * Reads the peer's 52-byte message.
     *
     * @throws ShortMessageException when the peer closed before sending all of it
     * @throws IOException           on a malformed message ({@link IllegalArgumentException} as the cause) or a timeout
     */
    public QueuePairEndpoint receive() throws IOException {
        byte[] msg = readFully(MESSAGE_BYTES);
        try {
            return decode(msg);
        } catch (IllegalArgumentException e) {
            throw new IOException("malformed endpoint message from the peer", e);
        }
    }

    /** Sends the client's final acknowledgement, {@code "done\0"}. */
    public void sendDone() throws IOException {
        out.write(DONE);
        out.flush();
    }

    /**
     * Reads the client's final acknowledgement (the server's last step).
     *
     * @throws ShortMessageException when the client closed before sending it
     * @throws IOException           when something else arrived, or on a timeout
     */
    public void receiveDone() throws IOException {
        byte[] got = readFully(DONE.length);
        if (!java.util.Arrays.equals(got, DONE)) {
            throw new IOException("expected \"done\" from the peer, got \""
                    + new String(got, StandardCharsets.US_ASCII).replace("\0", "\\0") + "\"");
        }
    }

    /** The peer's address. */
    public InetSocketAddress remoteAddress() {
        return (InetSocketAddress) socket.getRemoteSocketAddress();
    }

    /**
     * The whole client side in one call: connect, send {@code local}, read the server's endpoint,
     * acknowledge, close. {@code timeout} limits the connection attempt and each wait for data.
     */
    public static QueuePairEndpoint exchangeAsClient(String host, int port, QueuePairEndpoint local, Duration timeout)
            throws IOException {
        try (OutOfBandExchange x = connect(host, port, timeout, timeout)) {
            x.send(local);
            QueuePairEndpoint remote = x.receive();
            x.sendDone();
            return remote;
        }
    }

    /**
     * The whole server side in one call: accept one client on {@code port}, read its endpoint,
     * run {@code beforeReply} with it (the place to connect the queue pair, so that it is ready
     * before the client learns the server's endpoint), answer with {@code local}, read the
     * acknowledgement, close. {@code timeout} limits the wait for the client and each wait for data.
     */
    public static QueuePairEndpoint exchangeAsServer(int port, QueuePairEndpoint local,
                                                     Consumer<QueuePairEndpoint> beforeReply, Duration timeout)
            throws IOException {
        try (OutOfBandExchange x = accept(port, timeout, timeout)) {
            QueuePairEndpoint remote = x.receive();
            beforeReply.accept(remote);
            x.send(local);
            x.receiveDone();
            return remote;
        }
    }

    /** Closes the connection. */
    @Override
    public void close() throws IOException {
        socket.close();
    }

    // ---- the message format ----

    /** The message text without its NUL: {@code "%04x:%06x:%06x:%s"}, e.g. {@code 0000:000011:a3b2c1:0000…ffff7f000001}. */
    public static String format(QueuePairEndpoint e) {
        return String.format(Locale.ROOT, "%04x:%06x:%06x:%s", e.lid(), e.qpn(), e.psn(), wireGid(e.gid()));
    }

    /** The 52 bytes on the wire: {@link #format} and a NUL. */
    public static byte[] encode(QueuePairEndpoint e) {
        byte[] text = format(e).getBytes(StandardCharsets.US_ASCII);
        byte[] msg = new byte[MESSAGE_BYTES];
        System.arraycopy(text, 0, msg, 0, text.length);
        return msg;
    }

    /**
     * Reads a message as C's {@code sscanf("%x:%x:%x:%s")} and {@code wire_gid_to_gid()} do: the
     * text up to the first NUL, three hex fields and a GID of 32 hex digits.
     *
     * @throws IllegalArgumentException when the text does not have that form
     */
    public static QueuePairEndpoint decode(byte[] msg) {
        int end = 0;
        while (end < msg.length && msg[end] != 0) {
            end++;
        }
        return parse(new String(msg, 0, end, StandardCharsets.US_ASCII));
    }

    /** Parses the text of a message (see {@link #decode}). */
    public static QueuePairEndpoint parse(String text) {
        String[] f = text.strip().split(":", -1);
        if (f.length != 4) {
            throw new IllegalArgumentException("not LID:QPN:PSN:GID: \"" + text + "\"");
        }
        return new QueuePairEndpoint(hex(f[0], 4, text), hex(f[1], 6, text), hex(f[2], 6, text), parseWireGid(f[3]));
    }

    /**
     * A GID as the C tools' {@code gid_to_wire_gid()} writes it: four 32-bit words, each converted
     * to big-endian and printed as {@code %08x}. The result is the 16 bytes in network order as 32
     * lowercase hex digits (the same on little- and big-endian hosts).
     */
    public static String wireGid(Gid gid) {
        return HexFormat.of().formatHex(gid.raw());
    }

    /** The inverse of {@link #wireGid}, as {@code wire_gid_to_gid()} reads it (either case). */
    public static Gid parseWireGid(String wire) {
        if (wire.length() != 2 * Gid.BYTES) {
            throw new IllegalArgumentException("a wire GID has 32 hex digits, got \"" + wire + "\"");
        }
        try {
            return Gid.of(HexFormat.of().parseHex(wire));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("a wire GID has 32 hex digits, got \"" + wire + "\"", e);
        }
    }

    private static int hex(String field, int maxDigits, String text) {
        if (field.isEmpty() || field.length() > maxDigits) {
            throw new IllegalArgumentException("bad field \"" + field + "\" in \"" + text + "\"");
        }
        for (int i = 0; i < field.length(); i++) {
            if (!HexFormat.isHexDigit(field.charAt(i))) {
                throw new IllegalArgumentException("bad field \"" + field + "\" in \"" + text + "\"");
            }
        }
        return HexFormat.fromHexDigits(field);
    }

    // ---- waiting ----

    private byte[] readFully(int n) throws IOException {
        byte[] buf = new byte[n];
        int got = 0;
        long deadline = deadline(ioTimeout);
        while (got < n) {
            socket.setSoTimeout(slice(deadline));
            int r;
            try {
                r = in.read(buf, got, n - got);
            } catch (SocketTimeoutException e) {
                checkWait(deadline, "waiting for " + (n - got) + " more bytes from " + remoteAddress());
                continue;
            }
            if (r < 0) {
                throw new ShortMessageException(got, n);
            }
            got += r;
        }
        return buf;
    }

    private static long deadline(Duration timeout) {
        return timeout == null || timeout.isZero() || timeout.isNegative() ? Long.MAX_VALUE
                : System.nanoTime() + timeout.toNanos();
    }

    private static int slice(long deadline) {
        if (deadline == Long.MAX_VALUE) {
            return SLICE_MILLIS;
        }
        long left = (deadline - System.nanoTime() + 999_999) / 1_000_000;
        return (int) Math.max(1, Math.min(SLICE_MILLIS, left));
    }

    private static void checkWait(long deadline, String what) throws IOException {
        if (Thread.currentThread().isInterrupted()) {
            throw new InterruptedIOException("interrupted: " + what);
        }
        if (deadline != Long.MAX_VALUE && System.nanoTime() - deadline >= 0) {
            throw new SocketTimeoutException("timed out: " + what);
        }
    }

    private static int millis(Duration d) {
        return d == null || d.isNegative() ? 0 : (int) Math.min(Integer.MAX_VALUE, Math.max(d.isZero() ? 0 : 1, d.toMillis()));
    }

    private static void checkPort(int port) {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("TCP port out of range: " + port);
        }
    }
}
