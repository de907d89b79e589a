package dev.verbs4j.naaice;

/**
 * The memory region flags of an MRSP advertise+request entry (one byte on the wire; may be
 * combined). Constants only.
 */
public final class RegionFlags {
    /** An NAA-only scratch region: never transferred, not advertised back; sent with address 0 and rkey 0. */
    public static final int INTERNAL = 0x01;
    /** An input written only in the first RPC of the connection (combine with {@link #INPUT}). */
    public static final int SINGLE_SEND = 0x02;
    /** The host writes this region to the NAA in each RPC. */
    public static final int INPUT = 0x04;
    /** The NAA writes this region back, at its full size, in each RPC. */
    public static final int OUTPUT = 0x08;

    private RegionFlags() {
    }

    /** A readable form such as {@code INPUT|OUTPUT}. */
    public static String describe(int flags) {
        StringBuilder b = new StringBuilder();
        String[] names = {"INTERNAL", "SINGLE_SEND", "INPUT", "OUTPUT"};
        for (int i = 0; i < names.length; i++) {
            if ((flags & (1 << i)) != 0) {
                b.append(b.isEmpty() ? "" : "|").append(names[i]);
            }
        }
        if ((flags & ~0x0f) != 0) {
            b.append(b.isEmpty() ? "" : "|").append("0x").append(Integer.toHexString(flags & ~0x0f));
        }
        return b.isEmpty() ? "NONE" : b.toString();
    }
}
