package dev.verbs4j.rdmacm;

/**
 * The port space of a {@link CmId} ({@code enum rdma_port_space}): which transport and which
 * port numbers it uses.
 */
public enum PortSpace {
    /** IP over InfiniBand ports. */
    IPOIB(0x0002),
    /** Reliable connected queue pairs, TCP-like port numbers. */
    TCP(0x0106),
    /** Unreliable datagram queue pairs and multicast, UDP-like port numbers. */
    UDP(0x0111),
    /** Native InfiniBand service ids (either queue pair type). */
    IB(0x013F);

    private final int code;

    PortSpace(int code) {
        this.code = code;
    }

    /** The C value. */
    public int code() {
        return code;
    }

    /** The port space with C value {@code code}. */
    public static PortSpace of(int code) {
        for (PortSpace p : values()) {
            if (p.code == code) {
                return p;
            }
        }
        throw new IllegalArgumentException("unknown rdma_port_space 0x" + Integer.toHexString(code));
    }
}
