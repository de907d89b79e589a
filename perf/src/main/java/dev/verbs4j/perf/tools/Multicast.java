package dev.verbs4j.perf.tools;

import dev.verbs4j.perf.tools.PerfOptions.Kind;

/**
 * perftest's multicast of the send tools ({@code -g/--mcg}, {@code -M/--MGID}, UD only): the
 * side that receives attaches its queue pair to a group and sends the group's GID, multicast LID
 * and QPN 0xffffff as its description; the sender sends to that group. On RoCE there is no subnet
 * manager to join (the LID stays 0); on InfiniBand perftest joins through the subnet
 * administrator, which these tools do not.
 */
final class Multicast {

    /** perftest's group when -M is not given ({@code MCG_GID}: ff01:0:0:2:c985::); the client of ib_send_lat adds 1 to its last byte. */
    static final byte[] DEFAULT_MGID = {(byte) 255, 1, 0, 0, 0, 2, (byte) 201, (byte) 133, 0, 0, 0, 0, 0, 0, 0, 0};
    /** The destination QPN of a send to a group, in the attached side's description. */
    static final int QPN = 0xffffff;

    private Multicast() {
    }

    /**
     * Whether this side attaches its queue pairs to a group: the receiving side of ib_send_bw (the
     * server; both with -b, which multicast refuses) and both sides of ib_send_lat.
     */
    static boolean attaches(PerfOptions o) {
        return o.useMcg && (o.kind == Kind.LAT || o.duplex || !o.isClient());
    }

    /**
     * This side's group: -M's, else the default one, whose last byte the client increments
     * (perftest's set_multicast_gid). Null when -M is not 16 colon-separated numbers (where
     * perftest reads past the text).
     */
    static byte[] group(PerfOptions o) {
        if (o.mgid != null) {
            return parse(o.mgid);
        }
        byte[] g = DEFAULT_MGID.clone();
        if (o.isClient()) {
            g[15]++;
        }
        return g;
    }

    /**
     * -M's text: 16 numbers separated by colons, each read as {@code strtoll(s, NULL, 0)} reads it
     * (decimal, 0x hexadecimal or 0 octal, up to the first character that is no digit) and cut to
     * a byte, as perftest does; null when there are fewer than 16.
     */
    static byte[] parse(String text) {
        String[] f = text.split(":", 16);
        if (f.length < 16) {
            return null;
        }
        byte[] g = new byte[16];
        for (int i = 0; i < 16; i++) {
            g[i] = (byte) strtoll(f[i]);
        }
        return g;
    }

    /** C's {@code strtoll(s, NULL, 0)}: what it reads of {@code s}, 0 if nothing (saturating as C does). */
    static long strtoll(String s) {
        int i = 0;
        int n = s.length();
        while (i < n && Character.isWhitespace(s.charAt(i))) {
            i++;
        }
        boolean negative = false;
        if (i < n && (s.charAt(i) == '+' || s.charAt(i) == '-')) {
            negative = s.charAt(i) == '-';
            i++;
        }
        int base = 10;
        if (i + 1 < n && s.charAt(i) == '0' && (s.charAt(i + 1) == 'x' || s.charAt(i + 1) == 'X')
                && i + 2 < n && Character.digit(s.charAt(i + 2), 16) >= 0) {
            base = 16;
            i += 2;
        } else if (i < n && s.charAt(i) == '0') {
            base = 8;
        }
        java.math.BigInteger v = java.math.BigInteger.ZERO;
        java.math.BigInteger b = java.math.BigInteger.valueOf(base);
        for (; i < n; i++) {
            int d = Character.digit(s.charAt(i), base);
            if (d < 0) {
                break;
            }
            v = v.multiply(b).add(java.math.BigInteger.valueOf(d));
        }
        if (negative) {
            v = v.negate();
        }
        if (v.compareTo(java.math.BigInteger.valueOf(Long.MAX_VALUE)) > 0) {
            return Long.MAX_VALUE;
        }
        if (v.compareTo(java.math.BigInteger.valueOf(Long.MIN_VALUE)) < 0) {
            return Long.MIN_VALUE;
        }
        return v.longValue();
    }

    /**
     * What perftest 4.5's ib_send_bw prints when it leaves after its server attached the group and
     * before the test: its error path destroys the queue pair without detaching it, and the
     * device refuses (EBUSY) the queue pair, the two completion queues and the protection domain.
     */
    static String busyTearDown() {
        return "Couldn't destroy QP - Device or resource busy\n"
                + "Failed to destroy CQ - Device or resource busy\n"
                + "Failed to destroy CQ - Device or resource busy\n"
                + "Failed to deallocate PD - Device or resource busy\n"
                + "Failed to destroy resources\n";
    }
}
