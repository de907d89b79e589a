package dev.verbs4j.rdmacm;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;
import java.util.Optional;

/**
 * Why a passive side rejected a connection request, as it travels in the private data of the
 * reject ({@code rdma_reject}): a fixed prefix, then the text in UTF-8, cut to what a reject
 * carries over RoCE (148 bytes). The active side reads it from its REJECTED event. An immutable
 * value; the wire form is a fresh array.
 *
 * @param text the reason, e.g. "the backlog of 64 connections is full"
 */
public record RejectionReason(String text) {

    /** What the private data of a reject that gives a reason starts with. */
    static final String PREFIX = "verbs4j rejected: ";
    /** The most private data a reject carries over RoCE. */
    public static final int MAX_BYTES = 148;

    private static final byte[] PREFIX_BYTES = PREFIX.getBytes(StandardCharsets.UTF_8);

    public RejectionReason {
        Objects.requireNonNull(text, "text");
    }

    /** The private data of the reject: the prefix and the text, cut to {@link #MAX_BYTES} on a character boundary. */
    public byte[] encode() {
        byte[] b = (PREFIX + text).getBytes(StandardCharsets.UTF_8);
        if (b.length <= MAX_BYTES) {
            return b;
        }
        int end = MAX_BYTES;
        while (end > PREFIX_BYTES.length && (b[end] & 0xC0) == 0x80) {
            end--; // not inside a multi-byte character
        }
        return Arrays.copyOf(b, end);
    }

    /**
     * The reason in a reject's private data (zero padding after it, as the transport adds, is
     * not part of it); empty when the data is too short to hold the prefix or does not start with
     * it (a peer that gave no reason, or another protocol's data).
     */
    public static Optional<RejectionReason> decode(byte[] privateData) {
        if (privateData == null || privateData.length < PREFIX_BYTES.length
                || !Arrays.equals(privateData, 0, PREFIX_BYTES.length, PREFIX_BYTES, 0, PREFIX_BYTES.length)) {
            return Optional.empty();
        }
        int end = PREFIX_BYTES.length;
        while (end < privateData.length && privateData[end] != 0) {
            end++;
        }
        return Optional.of(new RejectionReason(new String(privateData, PREFIX_BYTES.length, end - PREFIX_BYTES.length,
                StandardCharsets.UTF_8)));
    }

    @Override
    public String toString() {
        return text;
    }
}
