package dev.verbs4j.vipl;

/**
 * The return codes of the VIPL functions ({@code VIP_RETURN}, §9.10.1 of the VI Architecture
 * specification), ordinals and C values 0–10 exactly as the specification's enum, followed by the
 * codes later VIPL headers append (11–16), of which this library uses {@link #INVALID_STATE}
 * (decision D5) and {@link #NOT_REACHABLE}. Plain values: no memory is owned.
 */
public enum VipReturn {
    /** {@code VIP_SUCCESS}: the function completed successfully. */
    SUCCESS,
    /** {@code VIP_NOT_DONE}: no completed descriptor (or CQ entry) at the head of the queue. */
    NOT_DONE,
    /** {@code VIP_INVALID_PARAMETER}: one or more inputs invalid, among them a stale or foreign handle. */
    INVALID_PARAMETER,
    /** {@code VIP_ERROR_RESOURCE}: insufficient resources, and the refusals the specification gives this code. */
    ERROR_RESOURCE,
    /** {@code VIP_TIMEOUT}: the operation timed out. */
    TIMEOUT,
    /** {@code VIP_REJECT}: the remote end rejected the connection request (§9.4.4 spells it VIP_REJECTED; D1). */
    REJECT,
    /** {@code VIP_INVALID_RELIABILITY_LEVEL}: invalid, unsupported or conflicting reliability level. */
    INVALID_RELIABILITY_LEVEL,
    /** {@code VIP_INVALID_MTU}: invalid, unsupported or conflicting MaxTransferSize. */
    INVALID_MTU,
    /** {@code VIP_INVALID_QOS}: invalid, unsupported or conflicting quality of service. */
    INVALID_QOS,
    /** {@code VIP_INVALID_PTAG}: invalid protection tag. */
    INVALID_PTAG,
    /** {@code VIP_INVALID_RDMAREAD}: RDMA Read requested but not supported. */
    INVALID_RDMAREAD,
    /**
     * {@code VIP_DESCRIPTOR_ERROR} (later VIPL, 11): a Done or Wait function dequeued a descriptor
     * whose memory (its arena) was closed while it was queued, so nothing could be written into it.
     */
    DESCRIPTOR_ERROR,
    /** {@code VIP_INVALID_STATE} (later VIPL, 12): a valid VI in a state that does not allow the call (D5). */
    INVALID_STATE,
    /** {@code VIP_ERROR_NAMESERVICE} (later VIPL, 13): a name service failure. */
    ERROR_NAMESERVICE,
    /** {@code VIP_NO_MATCH} (later VIPL, 14): no matching peer-to-peer request. */
    NO_MATCH,
    /** {@code VIP_NOT_REACHABLE} (later VIPL, 15): the remote host cannot be reached. */
    NOT_REACHABLE,
    /** {@code VIP_ERROR_NOT_SUPPORTED} (later VIPL, 16): the function or option is not supported. */
    ERROR_NOT_SUPPORTED;

    /** The C value ({@code VIP_RETURN}), equal to the ordinal. */
    public int code() {
        return ordinal();
    }

    /** The constant for C value {@code code}. */
    public static VipReturn of(int code) {
        VipReturn[] all = values();
        if (code < 0 || code >= all.length) {
            throw new IllegalArgumentException("no VIP_RETURN " + code);
        }
        return all[code];
    }

    /** The C name, e.g. {@code VIP_INVALID_PARAMETER}. */
    public String cName() {
        return "VIP_" + name();
    }
}
