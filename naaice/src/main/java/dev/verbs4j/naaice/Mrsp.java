package dev.verbs4j.naaice;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * The byte-exact encoder and decoder of Memory Region Setup Protocol messages, independent of the
 * CPU's byte order: a 4-byte header ({@code type, count or error code, 0, 0}), then 24-byte request
 * entries ({@code flags | 56-bit requested address, BE64 host address, BE32 rkey, BE32 size}) or
 * 16-byte advertise entries ({@code BE64 address, BE32 rkey, BE32 size}). Static functions only;
 * the caller owns the segments it passes.
 */
public final class Mrsp {

    /** Bytes of the common header. */
    public static final int HEADER = 4;
    /** Bytes of one advertise+request entry. */
    public static final int REQUEST_ENTRY = 24;
    /** Bytes of one advertise entry. */
    public static final int ADVERTISE_ENTRY = 16;
    /** The C library's MRSP buffer (32 × 24 bytes); a C peer can receive at most 31 request entries. */
    public static final int C_BUFFER = 768;
    /** Most request entries a C NAA can receive (its 768-byte buffer also holds the header). */
    public static final int C_MAX_REQUEST_ENTRIES = (C_BUFFER - HEADER) / REQUEST_ENTRY;
    /** A buffer large enough for any message (255 request entries). */
    public static final int MAX_MESSAGE = HEADER + REQUEST_ENTRY * 255;

    /** Error code: not enough memory (address + size beyond the memory). */
    public static final int NOT_ENOUGH_MEMORY = 0x01;
    /** Error code: invalid address. */
    public static final int INVALID_ADDRESS = 0x02;
    /** Error code: too many regions requested. */
    public static final int TOO_MANY_REGIONS = 0x03;
    /**
     * Error code of this implementation (not defined by the NAAICE documents): the message could
     * not be decoded (too short, unknown type, count beyond the length).
     */
    public static final int MALFORMED_MESSAGE = 0x04;
    /**
     * Error code of this implementation (not defined by the NAAICE documents): a host closes its
     * connection before setting up regions. It sends {@code 00 05 00 05}: the code at offset 1,
     * where the C host and a Java NAA read it, and again at offset 3, where the C NAA reads it.
     * The C NAA ends that connection's worker cleanly on any error message; a disconnect without
     * it, before the region setup, crashes the C NAA.
     */
    public static final int HOST_ABORT = 0x05;

    private static final ValueLayout.OfLong BE64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfInt BE32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final long ADDRESS_MASK = 0x00ff_ffff_ffff_ffffL;

    private Mrsp() {
    }

    /**
     * Writes {@code message} at the start of {@code buffer} and returns its length.
     *
     * @throws IndexOutOfBoundsException when the buffer is too small
     */
    public static int encode(MrspMessage message, MemorySegment buffer) {
        int len = message.length();
        if (buffer.byteSize() < len) {
            throw new IndexOutOfBoundsException("an MRSP message of " + len + " bytes does not fit " + buffer.byteSize() + " bytes");
        }
        switch (message) {
            case MrspMessage.Request r -> {
                header(buffer, MrspMessage.TYPE_REQUEST, r.entries().size(), 0);
                long at = HEADER;
                for (MrspMessage.RequestEntry e : r.entries()) {
                    buffer.set(BE64, at, ((long) e.flags() << 56) | (e.requestedAddress() & ADDRESS_MASK));
                    buffer.set(BE64, at + 8, e.hostAddress());
                    buffer.set(BE32, at + 16, e.rkey());
                    buffer.set(BE32, at + 20, (int) e.size());
                    at += REQUEST_ENTRY;
                }
            }
            case MrspMessage.Advertise a -> {
                header(buffer, MrspMessage.TYPE_ADVERTISE, a.entries().size(), 0);
                long at = HEADER;
                for (MrspMessage.AdvertiseEntry e : a.entries()) {
                    buffer.set(BE64, at, e.address());
                    buffer.set(BE32, at + 8, e.rkey());
                    buffer.set(BE32, at + 12, (int) e.size());
                    at += ADVERTISE_ENTRY;
                }
            }
            case MrspMessage.Error e -> header(buffer, MrspMessage.TYPE_ERROR, e.code(), e.repeatInPadding() ? e.code() : 0);
        }
        return len;
    }

    /** The encoded bytes of {@code message}. */
    public static byte[] toBytes(MrspMessage message) {
        byte[] b = new byte[message.length()];
        encode(message, MemorySegment.ofArray(b));
        return b;
    }

    /** Decodes {@code bytes}. */
    public static MrspMessage decode(byte[] bytes) {
        return decode(MemorySegment.ofArray(bytes), bytes.length);
    }

    /**
     * Decodes the first {@code length} bytes of {@code buffer} (the byte count of the receive
     * completion). Bytes beyond the entries the count announces are ignored.
     *
     * @throws MalformedMrspException when the message is too short, of an unknown or
     *                                "request only" type, or shorter than its count announces
     */
    public static MrspMessage decode(MemorySegment buffer, int length) {
        if (length < HEADER || buffer.byteSize() < length) {
            throw new MalformedMrspException("an MRSP message has at least " + HEADER + " bytes, got " + length, MALFORMED_MESSAGE);
        }
        int type = Byte.toUnsignedInt(buffer.get(ValueLayout.JAVA_BYTE, 0));
        int count = Byte.toUnsignedInt(buffer.get(ValueLayout.JAVA_BYTE, 1));
        switch (type) {
            case MrspMessage.TYPE_ERROR -> {
                return new MrspMessage.Error(count, buffer.get(ValueLayout.JAVA_BYTE, 3) != 0);
            }
            case MrspMessage.TYPE_REQUEST -> {
                checkLength(length, count, REQUEST_ENTRY, "advertise+request");
                List<MrspMessage.RequestEntry> entries = new ArrayList<>(count);
                long at = HEADER;
                for (int i = 0; i < count; i++) {
                    long first = buffer.get(BE64, at);
                    entries.add(new MrspMessage.RequestEntry((int) (first >>> 56), first & ADDRESS_MASK, buffer.get(BE64, at + 8),
                            buffer.get(BE32, at + 16), Integer.toUnsignedLong(buffer.get(BE32, at + 20))));
                    at += REQUEST_ENTRY;
                }
                return new MrspMessage.Request(entries);
            }
            case MrspMessage.TYPE_ADVERTISE -> {
                checkLength(length, count, ADVERTISE_ENTRY, "advertise");
                List<MrspMessage.AdvertiseEntry> entries = new ArrayList<>(count);
                long at = HEADER;
                for (int i = 0; i < count; i++) {
                    entries.add(new MrspMessage.AdvertiseEntry(buffer.get(BE64, at), buffer.get(BE32, at + 8),
                            Integer.toUnsignedLong(buffer.get(BE32, at + 12))));
                    at += ADVERTISE_ENTRY;
                }
                return new MrspMessage.Advertise(entries);
            }
            default -> throw new MalformedMrspException("MRSP message type 0x" + Integer.toHexString(type)
                    + (type == MrspMessage.TYPE_REQUEST_ONLY ? " (request only) is not used" : " is unknown"), MALFORMED_MESSAGE);
        }
    }

    private static void checkLength(int length, int count, int entry, String what) {
        if (length < HEADER + entry * count) {
            throw new MalformedMrspException(what + " announces " + count + " entries (" + (HEADER + entry * count)
                    + " bytes) but has " + length + " bytes", MALFORMED_MESSAGE);
        }
    }

    private static void header(MemorySegment b, int type, int second, int fourth) {
        b.set(ValueLayout.JAVA_BYTE, 0, (byte) type);
        b.set(ValueLayout.JAVA_BYTE, 1, (byte) second);
        b.set(ValueLayout.JAVA_BYTE, 2, (byte) 0);
        b.set(ValueLayout.JAVA_BYTE, 3, (byte) fourth);
    }

    /** A readable name of MRSP error code {@code code}. */
    public static String errorName(int code) {
        return switch (code) {
            case NOT_ENOUGH_MEMORY -> "not enough memory";
            case INVALID_ADDRESS -> "invalid address";
            case TOO_MANY_REGIONS -> "too many regions";
            case MALFORMED_MESSAGE -> "malformed message";
            case HOST_ABORT -> "the host closed before setting up regions";
            default -> "error 0x" + Integer.toHexString(code);
        };
    }
}
