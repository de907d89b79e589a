package dev.verbs4j.naaice;

/**
 * The 32-bit immediate values of a NAAICE RPC, as host-order ints (the verbs API puts them on the
 * wire in network order). Static functions only.
 *
 * <p>Host → NAA: {@code (U2 << 24) | (U1 << 16) | (U0 << 8) | 0x80 | F}, F the function code
 * 1..127 and U0..U2 three user bytes; the value 0 means "host-side error, no RPC".
 *
 * <p>NAA → host: 0 on success; an error E (1..255) as {@code (E << 8) | E}, which the C host (bits
 * 8..15) and readers of the low byte both decode as E. Decoding accepts either style: the low
 * byte if it is not zero, else bits 8..15.
 */
public final class Immediate {

    /** The "start RPC" bit of a host → NAA immediate. */
    public static final int START_BIT = 0x80;
    /** The immediate a host sends to signal its own error (no RPC). */
    public static final int HOST_ERROR = 0;
    /** Return code: success. */
    public static final int SUCCESS = 0;
    /** Return code: socket not available. */
    public static final int SOCKET_UNAVAILABLE = 0x01;
    /** Return code: kernel timeout. */
    public static final int KERNEL_TIMEOUT = 0x02;
    /** Return code: the first application error (0x10..0x7f); also "no such function" from this NAA. */
    public static final int APPLICATION_ERROR = 0x10;

    private Immediate() {
    }

    /** The host → NAA immediate for function {@code fn} (1..127) with user bytes U0, U1, U2. */
    public static int request(int fn, int u0, int u1, int u2) {
        checkFunctionCode(fn);
        checkByte(u0, "U0");
        checkByte(u1, "U1");
        checkByte(u2, "U2");
        return (u2 << 24) | (u1 << 16) | (u0 << 8) | START_BIT | fn;
    }

    /** The host → NAA immediate for function {@code fn} without user bytes. */
    public static int request(int fn) {
        return request(fn, 0, 0, 0);
    }

    /** The function code F of a host → NAA immediate ({@code imm & 0x7f}; the 0x80 bit is not required). */
    public static int functionCode(int imm) {
        return imm & 0x7f;
    }

    /** User byte {@code index} (0 = U0 … 2 = U2) of a host → NAA immediate. */
    public static int userByte(int imm, int index) {
        Bounds.inRange("user byte index", index, 0, 2);
        return (imm >>> (8 * (index + 1))) & 0xff;
    }

    /** The NAA → host immediate for return code {@code code} (0 = success, 1..255 an error). */
    public static int reply(int code) {
        checkByte(code, "return code");
        return code == 0 ? 0 : (code << 8) | code;
    }

    /** The return code in a NAA → host immediate (0 = success). */
    public static int returnCode(int imm) {
        int low = imm & 0xff;
        return low != 0 ? low : (imm >>> 8) & 0xff;
    }

    /** The four immediate bytes in wire (packet) order. */
    public static byte[] wireBytes(int imm) {
        return new byte[]{(byte) (imm >>> 24), (byte) (imm >>> 16), (byte) (imm >>> 8), (byte) imm};
    }

    /** The immediate whose wire (packet) order bytes are {@code b[0..3]}. */
    public static int fromWireBytes(byte[] b) {
        return ((b[0] & 0xff) << 24) | ((b[1] & 0xff) << 16) | ((b[2] & 0xff) << 8) | (b[3] & 0xff);
    }

    /** Throws unless {@code fn} is a function code, 1..127 (the 0x80 bit of F is the start bit). */
    static void checkFunctionCode(int fn) {
        Bounds.inRange("a function code", fn, 1, 127);
    }

    private static void checkByte(int v, String what) {
        Bounds.inRange(what, v, 0, 255);
    }
}
