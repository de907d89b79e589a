package dev.verbs4j.tools.rdmacm;

import dev.verbs4j.verbs.Access;
import dev.verbs4j.verbs.MemoryRegion;
import dev.verbs4j.verbs.Opcode;
import dev.verbs4j.verbs.ProtectionDomain;
import dev.verbs4j.verbs.RdmaArena;
import dev.verbs4j.verbs.ReceiveRequests;
import dev.verbs4j.verbs.SendFlags;
import dev.verbs4j.verbs.SendRequests;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;

/**
 * One rping connection's registered memory and the work requests over it: the receive and send
 * buffers of the {@link RdmaInfo} messages, the RDMA buffer the server reads into and the client's
 * data comes back to, and (client only) the start buffer each ping is written to.
 */
final class PingBuffers implements AutoCloseable {

    private static final int RDMA_ACCESS = Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE;

    private final RdmaArena arena = RdmaArena.ofShared();
    final ReceiveRequests recvWr = new ReceiveRequests(1, 1);
    final SendRequests sendWr = new SendRequests(1, 1);
    final SendRequests rdmaWr = new SendRequests(1, 1);
    MemorySegment recv;
    MemorySegment send;
    MemorySegment rdma;
    MemorySegment start;
    private MemoryRegion recvMr;
    private MemoryRegion sendMr;
    MemoryRegion rdmaMr;
    MemoryRegion startMr;

    private PingBuffers() {
    }

    /**
     * Allocates and registers the buffers in {@code pd}, each ping {@code size} bytes, and the
     * start buffer when {@code client}; on a failure frees what it made and throws.
     */
    static PingBuffers register(ProtectionDomain pd, int size, boolean client) {
        PingBuffers b = new PingBuffers();
        try {
            b.recv = b.arena.allocate(RdmaInfo.SIZE, 8);
            b.recvMr = pd.register(b.recv, Access.LOCAL_WRITE);
            b.send = b.arena.allocate(RdmaInfo.SIZE, 8);
            b.sendMr = pd.register(b.send, 0);
            b.rdma = b.arena.allocate(size, 16);
            b.rdmaMr = pd.register(b.rdma, RDMA_ACCESS);
            if (client) {
                b.start = b.arena.allocate(size, 16);
                b.startMr = pd.register(b.start, RDMA_ACCESS);
            }
        } catch (RuntimeException e) {
            b.close();
            throw e;
        }
        b.recvWr.get(0).sge(b.recvMr, 0, RdmaInfo.SIZE);
        b.sendWr.reset(0).opcode(Opcode.SEND).flags(SendFlags.SIGNALED).sge(b.sendMr, 0, RdmaInfo.SIZE);
        b.rdmaWr.reset(0).flags(SendFlags.SIGNALED).sge(b.rdmaMr, 0, size);
        return b;
    }

    /** Points the RDMA work request at {@code length} bytes of the remote buffer {@code remote}. */
    void aimRdma(Opcode opcode, RdmaInfo remote, int length) {
        rdmaWr.get(0).opcode(opcode).rdma(remote.address(), remote.rkey());
        rdmaWr.get(0).sge(rdmaMr, 0, length);
    }

    /** The length of the C string in the RDMA buffer. */
    int rdmaLength() {
        for (long i = 0; i < rdma.byteSize(); i++) {
            if (rdma.get(ValueLayout.JAVA_BYTE, i) == 0) {
                return (int) i;
            }
        }
        return (int) rdma.byteSize();
    }

    /** The C string in the RDMA buffer, as {@code %s} prints it. */
    String rdmaText() {
        byte[] b = rdma.asSlice(0, rdmaLength()).toArray(ValueLayout.JAVA_BYTE);
        return new String(b, StandardCharsets.ISO_8859_1);
    }

    @Override
    public void close() {
        for (MemoryRegion mr : new MemoryRegion[]{recvMr, sendMr, rdmaMr, startMr}) {
            if (mr != null) {
                mr.close();
            }
        }
        arena.close();
        recvWr.close();
        sendWr.close();
        rdmaWr.close();
    }
}
