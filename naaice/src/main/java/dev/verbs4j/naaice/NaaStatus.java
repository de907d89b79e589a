package dev.verbs4j.naaice;

/**
 * What {@link NaaHandle#test()} and {@link NaaHandle#await} report ({@code naa_status}): the
 * context's state, whether the invocation is over, the NAA's return code and the byte count of
 * the NAA's final write. A plain value.
 *
 * @param state         the low-level context's state
 * @param finished      whether the invocation is over (state FINISHED, or ERROR)
 * @param naaError      the NAA's return code (0 = success; see {@link Immediate})
 * @param immediate     the raw 32-bit immediate of the NAA's reply (0 before the first)
 * @param bytesReceived the byte count of the NAA's final write (the last output region only)
 */
public record NaaStatus(NaaState state, boolean finished, int naaError, int immediate, long bytesReceived) {

    /** Whether the invocation finished without any error. */
    public boolean succeeded() {
        return state == NaaState.FINISHED && naaError == 0;
    }
}
