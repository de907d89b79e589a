package dev.verbs4j.verbs;

/**
 * The status of a work completion ({@code enum ibv_wc_status}) with the text {@code
 * ibv_wc_status_str()} gives it. Pure value.
 */
public enum WcStatus {
    /** Success. */
    SUCCESS("success"),
    /** Local length error. */
    LOC_LEN_ERR("local length error"),
    /** Local QP operation error. */
    LOC_QP_OP_ERR("local QP operation error"),
    /** Local EE context operation error. */
    LOC_EEC_OP_ERR("local EE context operation error"),
    /** Local protection error. */
    LOC_PROT_ERR("local protection error"),
    /** Work request flushed (the QP is in the error state). */
    WR_FLUSH_ERR("Work Request Flushed Error"),
    /** Memory window bind error. */
    MW_BIND_ERR("memory management operation error"),
    /** Bad response. */
    BAD_RESP_ERR("bad response error"),
    /** Local access error. */
    LOC_ACCESS_ERR("local access error"),
    /** Remote invalid request. */
    REM_INV_REQ_ERR("remote invalid request error"),
    /** Remote access error (bad rkey, address or rights). */
    REM_ACCESS_ERR("remote access error"),
    /** Remote operation error. */
    REM_OP_ERR("remote operation error"),
    /** Transport retry counter exceeded. */
    RETRY_EXC_ERR("transport retry counter exceeded"),
    /** RNR retry counter exceeded (no receive posted at the peer). */
    RNR_RETRY_EXC_ERR("RNR retry counter exceeded"),
    /** Local RDD violation. */
    LOC_RDD_VIOL_ERR("local RDD violation error"),
    /** Remote invalid RD request. */
    REM_INV_RD_REQ_ERR("remote invalid RD request"),
    /** Remote aborted. */
    REM_ABORT_ERR("aborted error"),
    /** Invalid EE context number. */
    INV_EECN_ERR("invalid EE context number"),
    /** Invalid EE context state. */
    INV_EEC_STATE_ERR("invalid EE context state"),
    /** Fatal error. */
    FATAL_ERR("fatal error"),
    /** Response timeout. */
    RESP_TIMEOUT_ERR("response timeout error"),
    /** General error. */
    GENERAL_ERR("general error"),
    /** Tag matching error. */
    TM_ERR("TM error"),
    /** Tag matching rendezvous incomplete. */
    TM_RNDV_INCOMPLETE("TM software rendezvous");

    private static final WcStatus[] VALUES = values();

    private final String description;

    WcStatus(String description) {
        this.description = description;
    }

    /** The C value. */
    public int code() {
        return ordinal();
    }

    /** The text {@code ibv_wc_status_str()} returns. */
    public String description() {
        return description;
    }

    /** The status with C value {@code code}, or {@link #GENERAL_ERR} for a value out of range. */
    public static WcStatus of(int code) {
        return code >= 0 && code < VALUES.length ? VALUES[code] : GENERAL_ERR;
    }
}
