package dev.verbs4j.rdmacm;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A peer's registered memory as the peer describes it for one-sided operations: the address its
 * device uses for the first byte, the length, and the remote key. A plain value (it owns no
 * memory and refers to nothing local): one side takes it from {@link RegisteredBuffer#remote()},
 * sends its {@link #toBytes() bytes} over the connection, and the other side passes {@link
 * #fromBytes} of them to {@link RdmaConnection#write}, {@link RdmaConnection#read} and {@link
 * RdmaConnection#writeWithImmediate}, which check every range against {@link #length()} before
 * posting.
 *
 * @param address the address of the first byte as the peer's device sees it
 * @param length  the length in bytes (not negative)
 * @param rkey    the remote key of the peer's region
 */
public record RemoteBuffer(long address, long length, int rkey) {

    /** The length of {@link #toBytes()}: 8 (address) + 8 (length) + 4 (rkey), big-endian. */
    public static final int BYTES = 20;

    public RemoteBuffer {
        if (length < 0) {
            throw new IllegalArgumentException("length must not be negative, got " + length);
        }
    }

    /**
     * The part of this buffer from {@code offset}, {@code length} bytes long.
     *
     * @throws IllegalArgumentException when the range is not inside this buffer
     */
    public RemoteBuffer slice(long offset, long length) {
        checkRange(offset, length, "slice");
        return new RemoteBuffer(address + offset, length, rkey);
    }

    /**
     * Checks that {@code [offset, offset + length)} lies inside this buffer.
     *
     * @throws IllegalArgumentException naming {@code what}, the range and this buffer's length otherwise
     */
    void checkRange(long offset, long length, String what) {
        if (offset < 0 || length < 0 || offset > this.length - length) {
            throw new IllegalArgumentException(what + ": the remote range of " + length + " bytes at offset " + offset
                    + " is outside the remote buffer of " + this.length + " bytes");
        }
    }

    /** The {@link #BYTES} bytes that describe this buffer, for sending to the peer. */
    public byte[] toBytes() {
        return ByteBuffer.allocate(BYTES).order(ByteOrder.BIG_ENDIAN).putLong(address).putLong(length).putInt(rkey).array();
    }

    /**
     * The buffer described by {@code bytes[offset .. offset + BYTES)}, as written by {@link #toBytes()}.
     *
     * @throws IllegalArgumentException when fewer than {@link #BYTES} bytes are there or the
     *                                  length is negative
     */
    public static RemoteBuffer fromBytes(byte[] bytes, int offset) {
        if (offset < 0 || bytes.length - offset < BYTES) {
            throw new IllegalArgumentException("a RemoteBuffer needs " + BYTES + " bytes, got " + Math.max(0, bytes.length - Math.max(0, offset))
                    + " from offset " + offset);
        }
        ByteBuffer b = ByteBuffer.wrap(bytes, offset, BYTES).order(ByteOrder.BIG_ENDIAN);
        return new RemoteBuffer(b.getLong(), b.getLong(), b.getInt());
    }

    /** {@link #fromBytes(byte[], int)} from offset 0. */
    public static RemoteBuffer fromBytes(byte[] bytes) {
        return fromBytes(bytes, 0);
    }

    @Override
    public String toString() {
        return "RemoteBuffer[0x" + Long.toHexString(address) + ", " + length + " bytes, rkey 0x" + Integer.toHexString(rkey) + "]";
    }
}
