package dev.verbs4j.rdmacm;

/**
 * A message that arrived in a buffer the application posted with {@link
 * RdmaConnection#postReceive} (zero-copy receiving): where its bytes are. The buffer is the
 * application's again once this is returned; post it again to receive into it. A plain value.
 *
 * @param buffer the registered buffer the receive was posted on
 * @param offset where in it the receive (and the message) starts
 * @param length the message's length in bytes (for a posted receive not yet used: its capacity)
 */
public record ReceivedBuffer(RegisteredBuffer buffer, long offset, int length) {
}
