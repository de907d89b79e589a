package dev.verbs4j.verbs;

import java.util.Arrays;
import java.util.HexFormat;

/**
 * A 128-bit global identifier ({@code union ibv_gid}), kept in network byte order. Immutable
 * value; owns no native memory.
 */
public final class Gid {

    /** The length of a GID in bytes. */
    public static final int BYTES = 16;

    private final byte[] raw;

    private Gid(byte[] raw) {
        this.raw = raw;
    }

    /** A GID from its 16 bytes in network order (copied). */
    public static Gid of(byte[] raw) {
        if (raw.length != BYTES) {
            throw new IllegalArgumentException("a GID has 16 bytes, got " + raw.length);
        }
        return new Gid(raw.clone());
    }

    /** The 16 bytes in network order (a copy). */
    public byte[] raw() {
        return raw.clone();
    }

    /** The upper 64 bits (subnet prefix) in host order. */
    public long subnetPrefix() {
        return bigEndianLong(0);
    }

    /** The lower 64 bits (interface id) in host order. */
    public long interfaceId() {
        return bigEndianLong(8);
    }

    /** Whether every byte is zero. */
    public boolean isZero() {
        for (byte b : raw) {
            if (b != 0) {
                return false;
            }
        }
        return true;
    }

    /** Whether this is an IPv4 address mapped into IPv6 ({@code ::ffff:a.b.c.d}). */
    public boolean isIpv4Mapped() {
        for (int i = 0; i < 10; i++) {
            if (raw[i] != 0) {
                return false;
            }
        }
        return raw[10] == (byte) 0xff && raw[11] == (byte) 0xff;
    }

    /**
     * Whether this names a multicast group: an IPv6 multicast address ({@code ff00::/8}, as
     * InfiniBand MGIDs are), or an IPv4 multicast address mapped into IPv6 ({@code ::ffff:224.0.0.0/100},
     * as RoCE v2 carries IPv4 groups).
     */
    public boolean isMulticast() {
        return raw[0] == (byte) 0xff || (isIpv4Mapped() && (raw[12] & 0xf0) == 0xe0);
    }

    private long bigEndianLong(int from) {
        long v = 0;
        for (int i = from; i < from + 8; i++) {
            v = (v << 8) | (raw[i] & 0xff);
        }
        return v;
    }

    /** The eight 16-bit groups in full, colon-separated: {@code fe80:0000:...}. */
    public String toHexString() {
        HexFormat hex = HexFormat.of();
        StringBuilder s = new StringBuilder(39);
        for (int i = 0; i < BYTES; i += 2) {
            if (i > 0) {
                s.append(':');
            }
            s.append(hex.toHexDigits(raw[i])).append(hex.toHexDigits(raw[i + 1]));
        }
        return s.toString();
    }

    /**
     * The IPv6 text form as {@code inet_ntop(AF_INET6)} writes it: the longest run of two or more
     * zero groups as {@code ::}, and IPv4-mapped or IPv4-compatible addresses in dotted form.
     */
    @Override
    public String toString() {
        int[] w = new int[8];
        for (int i = 0; i < 8; i++) {
            w[i] = ((raw[2 * i] & 0xff) << 8) | (raw[2 * i + 1] & 0xff);
        }
        int bestBase = -1;
        int bestLen = 0;
        for (int i = 0; i < 8; ) {
            if (w[i] != 0) {
                i++;
                continue;
            }
            int j = i;
            while (j < 8 && w[j] == 0) {
                j++;
            }
            if (j - i > bestLen) {
                bestBase = i;
                bestLen = j - i;
            }
            i = j;
        }
        if (bestLen < 2) {
            bestBase = -1;
        }
        StringBuilder s = new StringBuilder(46);
        for (int i = 0; i < 8; i++) {
            if (bestBase >= 0 && i >= bestBase && i < bestBase + bestLen) {
                if (i == bestBase) {
                    s.append(':');
                }
                continue;
            }
            if (i != 0) {
                s.append(':');
            }
            boolean embeddedIpv4 = i == 6 && bestBase == 0
                    && (bestLen == 6 || (bestLen == 5 && w[5] == 0xffff));
            if (embeddedIpv4) {
                s.append(raw[12] & 0xff).append('.').append(raw[13] & 0xff).append('.')
                        .append(raw[14] & 0xff).append('.').append(raw[15] & 0xff);
                return s.toString();
            }
            s.append(Integer.toHexString(w[i]));
        }
        if (bestBase >= 0 && bestBase + bestLen == 8) {
            s.append(':');
        }
        return s.toString();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Gid g && Arrays.equals(raw, g.raw);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(raw);
    }
}
