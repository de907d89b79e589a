package dev.verbs4j.vipl;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * The private data of the RDMA CM messages that carry a VIPL connection (at most 56 bytes, what a
 * connect request has room for): magic {@code 'V'}, version, reliability level, RDMA enable bits,
 * MaxTransferSize and QoS (big-endian), then the target discriminator and the requester's own
 * discriminator with their lengths. A reply (accept) has no discriminators; a reject carries only
 * magic and {@code 'R'}.
 */
record ConnectMessage(VipReliabilityLevel level, boolean rdmaWrite, boolean rdmaRead, long maxTransferSize, long qos,
                      byte[] target, byte[] source) {

    static final byte MAGIC = 'V';
    static final byte VERSION = 1;
    static final int HEADER = 16;
    static final int MAX_PRIVATE_DATA = 56;
    /** MaxDiscriminatorLen: two discriminators and the header fit 56 bytes. */
    static final int MAX_DISCRIMINATOR = (MAX_PRIVATE_DATA - HEADER) / 2;
    static final byte[] REJECT = {MAGIC, 'R'};

    static ConnectMessage of(VipViAttributes a, byte[] target, byte[] source) {
        return new ConnectMessage(a.reliabilityLevel(), a.enableRdmaWrite(), a.enableRdmaRead(), a.maxTransferSize(), a.qos(),
                target, source);
    }

    VipViAttributes attributes() {
        return new VipViAttributes(level, maxTransferSize, qos, null, rdmaWrite, rdmaRead);
    }

    byte[] encode() {
        ByteBuffer b = ByteBuffer.allocate(HEADER + target.length + source.length);
        b.put(MAGIC).put(VERSION).put((byte) level.code()).put((byte) ((rdmaWrite ? 1 : 0) | (rdmaRead ? 2 : 0)));
        b.putInt((int) maxTransferSize).putInt((int) qos);
        b.put((byte) target.length).put((byte) source.length).putShort((short) 0);
        b.put(target).put(source);
        return b.array();
    }

    /** The message in {@code data}, or null when it is not one. */
    static ConnectMessage decode(byte[] data) {
        if (data == null || data.length < HEADER || data[0] != MAGIC || data[1] != VERSION) {
            return null;
        }
        ByteBuffer b = ByteBuffer.wrap(data);
        b.position(2);
        VipReliabilityLevel level = VipReliabilityLevel.ofCode(b.get());
        int flags = b.get();
        long mts = Integer.toUnsignedLong(b.getInt());
        long qos = Integer.toUnsignedLong(b.getInt());
        int tl = Byte.toUnsignedInt(b.get());
        int sl = Byte.toUnsignedInt(b.get());
        if (level == null || HEADER + tl + sl > data.length) {
            return null;
        }
        byte[] target = Arrays.copyOfRange(data, HEADER, HEADER + tl);
        byte[] source = Arrays.copyOfRange(data, HEADER + tl, HEADER + tl + sl);
        return new ConnectMessage(level, (flags & 1) != 0, (flags & 2) != 0, mts, qos, target, source);
    }
}
