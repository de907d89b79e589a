package dev.verbs4j.rdmacm;

/**
 * What the peer's {@link RdmaConnection#writeWithImmediate} delivers to this side, taken with
 * {@link RdmaConnection#receiveImmediate}: the 32-bit immediate value and how many bytes the write
 * put into this side's buffer (which the write named; the data is there when this value is
 * taken). A plain value.
 *
 * @param value      the immediate value the writer chose
 * @param byteLength the bytes written
 */
public record ImmediateData(int value, int byteLength) {
}
