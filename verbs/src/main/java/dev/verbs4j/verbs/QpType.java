package dev.verbs4j.verbs;

/** The transport service of a queue pair ({@code enum ibv_qp_type}). Pure value. */
public enum QpType {
    /** Reliable connection. */
    RC(2),
    /** Unreliable connection. */
    UC(3),
    /** Unreliable datagram. */
    UD(4),
    /** Raw Ethernet packets. */
    RAW_PACKET(8),
    /** XRC send side. */
    XRC_SEND(9),
    /** XRC receive side. */
    XRC_RECV(10);

    private final int code;

    QpType(int code) {
        this.code = code;
    }

    /** The C value. */
    public int code() {
        return code;
    }

    /** The type with C value {@code code}. */
    public static QpType of(int code) {
        for (QpType t : values()) {
            if (t.code == code) {
                return t;
            }
        }
        throw new IllegalArgumentException("unknown QP type " + code);
    }
}
