package dev.verbs4j.perf.tools;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * perftest's out-of-band protocol (perftest 4.5, version string "6.06"): the symmetric exchange
 * of fixed-size messages, client first, over TCP ({@link Tcp}) or RDMA CM; the queue-pair
 * description ("K" message) in its 108-byte text form (59 bytes without a GID) and its 56-byte
 * binary form for RDMA CM; the bandwidth report as five big-endian 8-byte values.
 */
final class Wire {

    static final int TEXT_WITH_GID = 108;
    static final int TEXT_WITHOUT_GID = 59;
    static final int BINARY = 56;
    static final byte[] DONE = {'d', 'o', 'n', 'e', 0};

    private Wire() {
    }

    /** One queue pair's description as perftest exchanges it ({@code struct pingpong_dest}). */
    record Dest(int lid, int outReads, int qpn, int psn, int rkey, long vaddr, byte[] gid, int srqn) {
    }

    /** The control channel: one symmetric exchange of equal-sized messages at a time. */
    interface Channel extends AutoCloseable {

        /**
         * Sends {@code mine} and returns the peer's message of the same length (the client writes
         * first, the server reads first).
         */
        byte[] exchange(byte[] mine) throws IOException;

        /**
         * The last exchange before the channel closes. Where a transport can leave the
         * acknowledgement of the server's answer unseen once the client has it and closes (RDMA
         * CM), the server stops waiting for it after a grace period.
         */
        default byte[] lastExchange(byte[] mine) throws IOException {
            return exchange(mine);
        }

        /** The end: "done" where the protocol has it (TCP), then the channel closed. */
        void finish(boolean sayDone);

        @Override
        void close();
    }

    /** The peer vanished or sent something unreadable. */
    static final class ProtocolException extends IOException {

        private static final long serialVersionUID = 1L;

        ProtocolException(String message) {
            super(message);
        }
    }

    // ---- messages ----

    static byte[] version() {
        byte[] b = new byte[16];
        byte[] v = PerfOptions.VERSION.getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(v, 0, b, 0, v.length);
        return b;
    }

    /** C's {@code atof()} of a NUL-terminated version string; 0 when it does not start with a number. */
    static double parseVersion(byte[] b) {
        int end = 0;
        while (end < b.length && b[end] != 0) {
            end++;
        }
        String s = new String(b, 0, end, StandardCharsets.US_ASCII).strip();
        int i = 0;
        while (i < s.length() && (Character.isDigit(s.charAt(i)) || s.charAt(i) == '.')) {
            i++;
        }
        try {
            return i == 0 ? 0 : Double.parseDouble(s.substring(0, i));
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    static byte[] int32(int v) {
        return ByteBuffer.allocate(4).putInt(v).array();
    }

    static int int32(byte[] b) {
        return ByteBuffer.wrap(b).getInt();
    }

    static byte[] int64(long v) {
        return ByteBuffer.allocate(8).putLong(v).array();
    }

    static long int64(byte[] b) {
        return ByteBuffer.wrap(b).getLong();
    }

    static byte[] float64(double v) {
        return int64(Double.doubleToRawLongBits(v));
    }

    static double float64(byte[] b) {
        return Double.longBitsToDouble(int64(b));
    }

    /** The MTU message: the enum digit and a NUL. */
    static byte[] mtu(int code) {
        return new byte[]{(byte) ('0' + code), 0};
    }

    /** The peer's MTU enum from its message; 0 when it is not a digit 1..5. */
    static int mtu(byte[] b) {
        int c = b[0] - '0';
        return c >= 1 && c <= 5 && b[1] == 0 ? c : 0;
    }

    /** The text form of {@code d}: 107 characters and a NUL with the GID, 58 and a NUL without. */
    static byte[] text(Dest d, boolean withGid) {
        StringBuilder s = new StringBuilder(TEXT_WITH_GID);
        s.append(String.format(Locale.ROOT, "%04x:%04x:%06x:%06x:%08x:%016x", d.lid() & 0xffff, d.outReads() & 0xffff,
                d.qpn() & 0xffffff, d.psn() & 0xffffff, d.rkey(), d.vaddr()));
        if (withGid) {
            s.append(':');
            for (byte g : d.gid()) {
                s.append(String.format(Locale.ROOT, "%02x:", g & 0xff));
            }
            s.append(String.format(Locale.ROOT, "%08x:", d.srqn()));
        } else {
            s.append(String.format(Locale.ROOT, ":%08x", d.srqn()));
        }
        byte[] chars = s.toString().getBytes(StandardCharsets.US_ASCII);
        byte[] b = new byte[chars.length + 1];
        System.arraycopy(chars, 0, b, 0, chars.length);
        return b;
    }

    /** Parses the text form (fields split on ':', base 16). */
    static Dest parseText(byte[] b, boolean withGid) throws ProtocolException {
        int end = 0;
        while (end < b.length && b[end] != 0) {
            end++;
        }
        String[] f = new String(b, 0, end, StandardCharsets.US_ASCII).split(":");
        int need = withGid ? 23 : 7;
        if (f.length < need) {
            throw new ProtocolException("Couldn't parse line");
        }
        try {
            byte[] gid = new byte[16];
            int srqn;
            if (withGid) {
                for (int i = 0; i < 16; i++) {
                    gid[i] = (byte) Integer.parseInt(f[6 + i], 16);
                }
                srqn = (int) Long.parseLong(f[22], 16);
            } else {
                srqn = (int) Long.parseLong(f[6], 16);
            }
            return new Dest(Integer.parseInt(f[0], 16), Integer.parseInt(f[1], 16), Integer.parseInt(f[2], 16),
                    Integer.parseInt(f[3], 16), (int) Long.parseLong(f[4], 16), Long.parseUnsignedLong(f[5], 16), gid, srqn);
        } catch (NumberFormatException e) {
            throw new ProtocolException("Couldn't parse line");
        }
    }

    /** The 56-byte big-endian binary form used over RDMA CM. */
    static byte[] binary(Dest d, int gidIndex) {
        ByteBuffer b = ByteBuffer.allocate(BINARY);
        b.putInt(d.lid()).putInt(d.outReads()).putInt(d.qpn()).putInt(d.psn()).putInt(d.rkey()).putInt(0)
                .putLong(d.vaddr()).put(d.gid()).putInt(d.srqn()).putInt(gidIndex);
        return b.array();
    }

    static Dest parseBinary(byte[] raw) {
        ByteBuffer b = ByteBuffer.wrap(raw);
        int lid = b.getInt();
        int out = b.getInt();
        int qpn = b.getInt();
        int psn = b.getInt();
        int rkey = b.getInt();
        b.getInt();
        long vaddr = b.getLong();
        byte[] gid = new byte[16];
        b.get(gid);
        int srqn = b.getInt();
        return new Dest(lid, out, qpn, psn, rkey, vaddr, gid, srqn);
    }

    // ---- TCP ----

    /** The TCP control channel: perftest's default, IPv4, one connection per run. */
    static final class Tcp implements Channel {

        /** How often a blocked read wakes up to look at the interrupt flag. */
        private static final int SLICE_MS = 200;

        private final Socket socket;
        private final boolean client;
        private final InputStream in;
        private final OutputStream out;

        private Tcp(Socket socket, boolean client) throws IOException {
            this.socket = socket;
            this.client = client;
            socket.setTcpNoDelay(true);
            socket.setSoTimeout(SLICE_MS);
            this.in = socket.getInputStream();
            this.out = socket.getOutputStream();
        }

        /** Connects to {@code host:port} (from {@code sourceIp} when given). */
        static Tcp connect(String host, int port, String sourceIp) throws IOException {
            Socket s = new Socket();
            try {
                if (sourceIp != null) {
                    s.bind(new InetSocketAddress(InetAddress.getByName(sourceIp), 0));
                }
                InetAddress addr = null;
                for (InetAddress a : InetAddress.getAllByName(host)) {
                    if (a instanceof java.net.Inet4Address) {
                        addr = a;
                        break;
                    }
                }
                if (addr == null) {
                    throw new IOException("no IPv4 address for " + host);
                }
                s.connect(new InetSocketAddress(addr, port));
                return new Tcp(s, true);
            } catch (IOException | RuntimeException e) {
                s.close();
                throw e;
            }
        }

        /** Listens on {@code port} (of {@code sourceIp}, else every IPv4 address), accepts one client, stops listening. */
        static Tcp accept(int port, String sourceIp) throws IOException {
            try (ServerSocket ss = new ServerSocket()) {
                ss.setReuseAddress(true);
                ss.bind(new InetSocketAddress(sourceIp != null ? InetAddress.getByName(sourceIp)
                        : InetAddress.getByName("0.0.0.0"), port), 1);
                ss.setSoTimeout(SLICE_MS);
                while (true) {
                    try {
                        return new Tcp(ss.accept(), false);
                    } catch (SocketTimeoutException e) {
                        if (Thread.currentThread().isInterrupted()) {
                            throw new InterruptedIOException("interrupted while waiting for a client");
                        }
                    }
                }
            }
        }

        @Override
        public byte[] exchange(byte[] mine) throws IOException {
            if (client) {
                out.write(mine);
                out.flush();
                return readFully(mine.length);
            }
            byte[] theirs = readFully(mine.length);
            out.write(mine);
            out.flush();
            return theirs;
        }

        private byte[] readFully(int n) throws IOException {
            byte[] b = new byte[n];
            int got = 0;
            while (got < n) {
                int r;
                try {
                    r = in.read(b, got, n - got);
                } catch (SocketTimeoutException e) {
                    if (Thread.currentThread().isInterrupted()) {
                        throw new InterruptedIOException("interrupted while waiting for the peer");
                    }
                    continue;
                }
                if (r < 0) {
                    throw new ProtocolException("the peer closed the connection after " + got + " of " + n + " bytes");
                }
                got += r;
            }
            return b;
        }

        @Override
        public void finish(boolean sayDone) {
            try {
                if (sayDone) {
                    out.write(DONE);
                    out.flush();
                }
                socket.shutdownOutput();
                // take the peer's "done" (perftest <= 6.16) or its close, briefly, so close() sends no reset
                socket.setSoTimeout(100);
                byte[] sink = new byte[64];
                long deadline = System.nanoTime() + 1_000_000_000L;
                while (System.nanoTime() < deadline) {
                    try {
                        if (in.read(sink) < 0) {
                            break;
                        }
                    } catch (SocketTimeoutException e) {
                        if (Thread.currentThread().isInterrupted()) {
                            break;
                        }
                    }
                }
            } catch (IOException ignored) {
                // the peer may be gone already: newer perftest closes without reading
            }
            close();
        }

        @Override
        public void close() {
            try {
                socket.close();
            } catch (IOException ignored) {
                // nothing left to do
            }
        }
    }
}
