package dev.verbs4j.naaice;

import java.util.List;

/**
 * One message of the Memory Region Setup Protocol, as a Java value (heap only, owns no native
 * memory). {@link Mrsp} encodes and decodes the byte-exact wire form.
 */
public sealed interface MrspMessage {

    /** Wire type of {@link Error}. */
    int TYPE_ERROR = 0x00;
    /** Wire type of {@link Request} (advertise+request, host → NAA). */
    int TYPE_REQUEST = 0x01;
    /** Wire type of {@link Advertise} (NAA → host). */
    int TYPE_ADVERTISE = 0x02;
    /** Wire type "request only": defined by the C library, never sent or handled. */
    int TYPE_REQUEST_ONLY = 0x03;

    /** The wire type. */
    int type();

    /** The bytes of the encoded message. */
    int length();

    /** An unmodifiable copy of a message's {@code entries}, at most 255 (the count is one byte on the wire). */
    private static <E> List<E> entryList(List<E> entries) {
        List<E> copy = List.copyOf(entries);
        if (copy.size() > 255) {
            throw new IllegalArgumentException("at most 255 entries fit the 8-bit count, got " + copy.size());
        }
        return copy;
    }

    /**
     * One 24-byte entry of an advertise+request.
     *
     * @param flags            {@link RegionFlags}, 0..255
     * @param requestedAddress the NAA address the host asks for (56 bits are sent; higher bits are dropped)
     * @param hostAddress      the host region's virtual address (0 for internal regions)
     * @param rkey             the host region's remote key (0 for internal regions)
     * @param size             the region's size in bytes, 0 .. 2^32 − 1
     */
    record RequestEntry(int flags, long requestedAddress, long hostAddress, int rkey, long size) {
        public RequestEntry {
            if (flags < 0 || flags > 255) {
                throw new IllegalArgumentException("flags are one byte, got " + flags);
            }
            if (size < 0 || size > 0xffff_ffffL) {
                throw new IllegalArgumentException("a region size is 0 .. 2^32-1, got " + size);
            }
        }

        /** Whether this entry is an NAA-only scratch region. */
        public boolean internal() {
            return (flags & RegionFlags.INTERNAL) != 0;
        }
    }

    /**
     * One 16-byte entry of an advertise.
     *
     * @param address the NAA-side remote address to write to
     * @param rkey    the NAA-side remote key
     * @param size    the region size, 0 .. 2^32 − 1
     */
    record AdvertiseEntry(long address, int rkey, long size) {
        public AdvertiseEntry {
            if (size < 0 || size > 0xffff_ffffL) {
                throw new IllegalArgumentException("a region size is 0 .. 2^32-1, got " + size);
            }
        }
    }

    /** Advertise+request (type 0x01): the host's regions and its requests, 0..255 entries. */
    record Request(List<RequestEntry> entries) implements MrspMessage {
        public Request {
            entries = entryList(entries);
        }

        @Override
        public int type() {
            return TYPE_REQUEST;
        }

        @Override
        public int length() {
            return Mrsp.HEADER + Mrsp.REQUEST_ENTRY * entries.size();
        }
    }

    /** Advertise (type 0x02): the NAA's regions for the request's non-internal entries, in order. */
    record Advertise(List<AdvertiseEntry> entries) implements MrspMessage {
        public Advertise {
            entries = entryList(entries);
        }

        @Override
        public int type() {
            return TYPE_ADVERTISE;
        }

        @Override
        public int length() {
            return Mrsp.HEADER + Mrsp.ADVERTISE_ENTRY * entries.size();
        }
    }

    /**
     * Error (type 0x00) with its code at offset 1.
     *
     * @param code         the error code, 0..255 ({@link Mrsp#NOT_ENOUGH_MEMORY} …)
     * @param repeatInPadding whether the code is repeated at offset 3 (what a host sends, so that the
     *                     C NAA, which reads offset 3, logs the right value); an NAA sends zero there
     */
    record Error(int code, boolean repeatInPadding) implements MrspMessage {
        public Error {
            if (code < 0 || code > 255) {
                throw new IllegalArgumentException("an error code is one byte, got " + code);
            }
        }

        /** An error as the NAA sends it: {@code 00 code 00 00}. */
        public Error(int code) {
            this(code, false);
        }

        @Override
        public int type() {
            return TYPE_ERROR;
        }

        @Override
        public int length() {
            return Mrsp.HEADER;
        }
    }
}
