package dev.verbs4j.rdmacm.internal;

import dev.verbs4j.bindings.sockaddr_storage;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteOrder;

/**
 * Conversions between {@link InetSocketAddress} and the kernel's {@code sockaddr_in} /
 * {@code sockaddr_in6} (ports in network byte order).
 */
public final class SocketAddresses {

    /** {@code AF_INET}. */
    public static final short AF_INET = 2;
    /** {@code AF_INET6}. */
    public static final short AF_INET6 = 10;
    /** {@code AF_IB}. */
    public static final short AF_IB = 27;

    private static final ValueLayout.OfShort PORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    private SocketAddresses() {
    }

    /**
     * A native {@code sockaddr} for {@code address} in {@code arena} (a {@code sockaddr_storage},
     * large enough for any family).
     *
     * @throws IllegalArgumentException for an unresolved address
     */
    public static MemorySegment write(Arena arena, InetSocketAddress address) {
        if (address.isUnresolved()) {
            throw new IllegalArgumentException("unresolved address: " + address.getHostString());
        }
        MemorySegment sa = arena.allocate(sockaddr_storage.layout());
        InetAddress ip = address.getAddress();
        if (ip instanceof Inet4Address) {
            sa.set(ValueLayout.JAVA_SHORT, 0, AF_INET);
            sa.set(PORT, 2, (short) address.getPort());
            MemorySegment.copy(ip.getAddress(), 0, sa, ValueLayout.JAVA_BYTE, 4, 4);
        } else {
            sa.set(ValueLayout.JAVA_SHORT, 0, AF_INET6);
            sa.set(PORT, 2, (short) address.getPort());
            MemorySegment.copy(ip.getAddress(), 0, sa, ValueLayout.JAVA_BYTE, 8, 16);
            if (ip instanceof Inet6Address v6) {
                sa.set(ValueLayout.JAVA_INT_UNALIGNED, 24, v6.getScopeId());
            }
        }
        return sa;
    }

    /** The address in a native {@code sockaddr}, or null for a family other than IPv4 and IPv6 or NULL. */
    public static InetSocketAddress read(MemorySegment sockaddr) {
        if (sockaddr.equals(MemorySegment.NULL)) {
            return null;
        }
        MemorySegment sa = sockaddr.byteSize() >= 28 ? sockaddr : dev.verbs4j.verbs.internal.Native.sized(sockaddr, 28);
        short family = sa.get(ValueLayout.JAVA_SHORT, 0);
        int port = Short.toUnsignedInt(sa.get(PORT, 2));
        byte[] raw;
        if (family == AF_INET) {
            raw = new byte[4];
            MemorySegment.copy(sa, ValueLayout.JAVA_BYTE, 4, raw, 0, 4);
        } else if (family == AF_INET6) {
            raw = new byte[16];
            MemorySegment.copy(sa, ValueLayout.JAVA_BYTE, 8, raw, 0, 16);
        } else {
            return null;
        }
        try {
            return new InetSocketAddress(InetAddress.getByAddress(raw), port);
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }
}
