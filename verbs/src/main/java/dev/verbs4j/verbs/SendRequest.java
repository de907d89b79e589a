package dev.verbs4j.verbs;

import dev.verbs4j.bindings.ibv_send_wr;
import dev.verbs4j.bindings.ibv_mw_bind_info;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A view of one {@code struct ibv_send_wr} in a {@link SendRequests} batch: setters write the
 * native fields in place and return this view for chaining. The objects a request names (its
 * memory regions, address handle, memory window) are remembered by the batch and checked and held
 * while it is posted; the native pointers to them are written by the post itself. Owns no memory.
 */
public final class SendRequest extends WorkRequest {

    private static final long OPCODE = ibv_send_wr.opcode$offset();
    private static final long SEND_FLAGS = ibv_send_wr.send_flags$offset();
    private static final long IMM_DATA = ibv_send_wr.imm_data$offset();
    private static final long WR = ibv_send_wr.wr$offset();
    private static final long RDMA_REMOTE_ADDR = WR + ibv_send_wr.wr.rdma$offset() + ibv_send_wr.wr.rdma.remote_addr$offset();
    private static final long RDMA_RKEY = WR + ibv_send_wr.wr.rdma$offset() + ibv_send_wr.wr.rdma.rkey$offset();
    private static final long ATOMIC_REMOTE_ADDR =
            WR + ibv_send_wr.wr.atomic$offset() + ibv_send_wr.wr.atomic.remote_addr$offset();
    private static final long ATOMIC_COMPARE_ADD =
            WR + ibv_send_wr.wr.atomic$offset() + ibv_send_wr.wr.atomic.compare_add$offset();
    private static final long ATOMIC_SWAP = WR + ibv_send_wr.wr.atomic$offset() + ibv_send_wr.wr.atomic.swap$offset();
    private static final long ATOMIC_RKEY = WR + ibv_send_wr.wr.atomic$offset() + ibv_send_wr.wr.atomic.rkey$offset();
    private static final long UD_AH = WR + ibv_send_wr.wr.ud$offset() + ibv_send_wr.wr.ud.ah$offset();
    private static final long UD_REMOTE_QPN = WR + ibv_send_wr.wr.ud$offset() + ibv_send_wr.wr.ud.remote_qpn$offset();
    private static final long UD_REMOTE_QKEY = WR + ibv_send_wr.wr.ud$offset() + ibv_send_wr.wr.ud.remote_qkey$offset();
    private static final long XRC_REMOTE_SRQN = ibv_send_wr.qp_type$offset() + ibv_send_wr.qp_type.xrc$offset()
            + ibv_send_wr.qp_type.xrc.remote_srqn$offset();
    private static final long BIND_MW = ibv_send_wr.bind_mw$offset();
    private static final long BIND_MW_MW = BIND_MW + ibv_send_wr.bind_mw.mw$offset();
    private static final long BIND_MW_RKEY = BIND_MW + ibv_send_wr.bind_mw.rkey$offset();
    private static final long BIND_INFO = BIND_MW + ibv_send_wr.bind_mw.bind_info$offset();
    private static final long BIND_INFO_MR = BIND_INFO + ibv_mw_bind_info.mr$offset();
    private static final long BIND_INFO_ADDR = BIND_INFO + ibv_mw_bind_info.addr$offset();
    private static final long BIND_INFO_LENGTH = BIND_INFO + ibv_mw_bind_info.length$offset();
    private static final long BIND_INFO_ACCESS = BIND_INFO + ibv_mw_bind_info.mw_access_flags$offset();
    /** The zeros {@link #clear()} copies over a request. */
    private static final MemorySegment ZEROS = MemorySegment.ofArray(new byte[(int) SendRequests.WR_SIZE]);

    private final SendRequests batch;

    SendRequest(SendRequests batch) {
        super(batch);
        this.batch = batch;
    }

    SendRequest moveTo(int index) {
        position(index);
        return this;
    }

    SendRequest clear() {
        clearFields(ZEROS);
        return this;
    }

    /** The batch this view belongs to. */
    public SendRequests batch() {
        return batch;
    }

    /** Sets the id reported back in the work completion. */
    public SendRequest wrId(long id) {
        writeWrId(id);
        return this;
    }

    /** Sets the operation. */
    public SendRequest opcode(Opcode opcode) {
        if (opcode == Opcode.BIND_MW) {
            throw new IllegalArgumentException("a BIND_MW request is made by bindMemoryWindow, which names the window and region");
        }
        batch.checkNotPosting();
        wrs.set(ValueLayout.JAVA_INT, base + OPCODE, opcode.code());
        return this;
    }

    /** Sets the {@link SendFlags}. */
    public SendRequest flags(int sendFlags) {
        batch.checkNotPosting();
        if ((sendFlags & SendFlags.INLINE) != 0) {
            batch.inlineUsed();
        }
        wrs.set(ValueLayout.JAVA_INT, base + SEND_FLAGS, sendFlags);
        return this;
    }

    /** Sets the immediate data (host order; sent in network order) for the *_WITH_IMM opcodes. */
    public SendRequest immediateData(int value) {
        wrs.set(ValueLayout.JAVA_INT, base + IMM_DATA, Integer.reverseBytes(value));
        return this;
    }

    /** Sets the remote key to invalidate (SEND_WITH_INV) or the local key to invalidate (LOCAL_INV). */
    public SendRequest invalidateRkey(int rkey) {
        wrs.set(ValueLayout.JAVA_INT, base + IMM_DATA, rkey);
        return this;
    }

    /**
     * Sets scatter/gather entry {@code index} to {@code length} bytes at {@code offset} in {@code mr}
     * and the entry count to {@code index + 1}: set entries in order.
     *
     * @throws IndexOutOfBoundsException when the range is outside the region or index is not below maxSge
     * @throws IllegalStateException when the region's memory is no longer alive
     */
    public SendRequest sge(int index, MemoryRegion mr, long offset, int length) {
        writeSge(index, mr, offset, length);
        return this;
    }

    /** Sets scatter/gather entry 0 to {@code length} bytes at {@code offset} in {@code mr}, one entry in all. */
    public SendRequest sge(MemoryRegion mr, long offset, int length) {
        return sge(0, mr, offset, length);
    }

    /**
     * Makes this an INLINE send of {@code data} (no memory region needed): the bytes are copied
     * into memory of the batch now, so {@code data} may change or be freed afterwards, and entry 0
     * points at the copy; adds the INLINE flag. Any memory segment will do, heap ones too.
     *
     * @throws IllegalArgumentException when {@code data} is longer than {@link SendRequests#MAX_INLINE} bytes
     */
    public SendRequest inline(MemorySegment data) {
        MemorySegment copy = batch.inlineCopy(this.index, data);
        batch.inlineUsed();
        batch.region(this.index, 0, null);
        writeSge(0, copy.address(), (int) copy.byteSize(), 0);
        int flags = wrs.get(ValueLayout.JAVA_INT, base + SEND_FLAGS);
        wrs.set(ValueLayout.JAVA_INT, base + SEND_FLAGS, flags | SendFlags.INLINE);
        return this;
    }

    /** Sets the remote address and key of an RDMA write or read. */
    public SendRequest rdma(long remoteAddress, int rkey) {
        batch.addressHandle(index, null); // the same union as the UD destination
        wrs.set(ValueLayout.JAVA_LONG, base + RDMA_REMOTE_ADDR, remoteAddress);
        wrs.set(ValueLayout.JAVA_INT, base + RDMA_RKEY, rkey);
        return this;
    }

    /** Sets the 8-byte remote target, compare (or add) value and swap value of an atomic. */
    public SendRequest atomic(long remoteAddress, int rkey, long compareAdd, long swap) {
        batch.addressHandle(index, null); // the same union as the UD destination
        wrs.set(ValueLayout.JAVA_LONG, base + ATOMIC_REMOTE_ADDR, remoteAddress);
        wrs.set(ValueLayout.JAVA_INT, base + ATOMIC_RKEY, rkey);
        wrs.set(ValueLayout.JAVA_LONG, base + ATOMIC_COMPARE_ADD, compareAdd);
        wrs.set(ValueLayout.JAVA_LONG, base + ATOMIC_SWAP, swap);
        return this;
    }

    /**
     * Sets the destination of a UD send: {@code ah} is held while the request is posted (closing it
     * before the post makes the post fail); every request posted on a UD queue pair needs one.
     */
    public SendRequest ud(AddressHandle ah, int remoteQpn, int remoteQkey) {
        if (ah.isClosed()) {
            throw new IllegalStateException(ah + " is closed");
        }
        batch.addressHandle(index, ah);
        wrs.set(ValueLayout.JAVA_INT, base + UD_REMOTE_QPN, remoteQpn);
        wrs.set(ValueLayout.JAVA_INT, base + UD_REMOTE_QKEY, remoteQkey);
        return this;
    }

    /**
     * Sets the XRC shared receive queue this request goes to on the peer ({@code
     * qp_type.xrc.remote_srqn}): its {@link SharedReceiveQueue#srqNumber()}. Needed by every request
     * posted on an {@link QpType#XRC_SEND} queue pair; other queue pairs ignore it.
     *
     * @throws IllegalArgumentException when {@code srqNumber} does not fit the 24 bits of an SRQ number
     */
    public SendRequest xrcRemoteSrqNumber(int srqNumber) {
        if ((srqNumber & ~0xffffff) != 0) {
            throw new IllegalArgumentException("an SRQ number has 24 bits, got 0x" + Integer.toHexString(srqNumber));
        }
        wrs.set(ValueLayout.JAVA_INT, base + XRC_REMOTE_SRQN, srqNumber);
        return this;
    }

    /**
     * Makes this a {@link Opcode#BIND_MW} request binding type 2 window {@code mw} with the new key
     * {@code newRkey} (usually {@link MemoryWindow#nextRkey}) to {@code length} bytes at {@code
     * offset} of {@code mr}, with remote {@code access}.
     */
    public SendRequest bindMemoryWindow(MemoryWindow mw, int newRkey, MemoryRegion mr, long offset, long length, int access) {
        if (mw.isClosed() || mr.isClosed()) {
            throw new IllegalStateException((mw.isClosed() ? mw : mr) + " is closed");
        }
        if (!mr.covers(offset, length)) {
            throw new IndexOutOfBoundsException("[" + offset + ", " + offset + " + " + length + ") is outside the memory region");
        }
        batch.window(index, mw, mr);
        wrs.set(ValueLayout.JAVA_INT, base + OPCODE, Opcode.BIND_MW.code());
        wrs.set(ValueLayout.JAVA_INT, base + BIND_MW_RKEY, newRkey);
        wrs.set(ValueLayout.JAVA_LONG, base + BIND_INFO_ADDR, mr.remoteAddress() + offset);
        wrs.set(ValueLayout.JAVA_LONG, base + BIND_INFO_LENGTH, length);
        wrs.set(ValueLayout.JAVA_INT, base + BIND_INFO_ACCESS, access);
        return this;
    }

    /** Writes the native pointers of request {@code i} from the objects the post holds. */
    static void writeHandles(MemorySegment wrs, int i, AddressHandle ah, MemoryWindow mw, MemoryRegion bindMr) {
        long at = i * SendRequests.WR_SIZE;
        if (ah != null) {
            wrs.set(ValueLayout.ADDRESS, at + UD_AH, ah.handle());
        }
        if (mw != null) {
            wrs.set(ValueLayout.ADDRESS, at + BIND_MW_MW, mw.handle());
            wrs.set(ValueLayout.ADDRESS, at + BIND_INFO_MR, bindMr.handle());
        }
    }

    static int flagsOf(MemorySegment wrs, int i) {
        return wrs.get(ValueLayout.JAVA_INT, i * SendRequests.WR_SIZE + SEND_FLAGS);
    }

    String describe() {
        int opcode = wrs.get(ValueLayout.JAVA_INT, base + OPCODE);
        Opcode op = Opcode.of(opcode);
        int numSge = wrs.get(ValueLayout.JAVA_INT, base + NUM_SGE);
        long bytes = 0;
        for (int i = 0; i < Math.min(numSge, maxSge); i++) {
            bytes += sgeLength(sges, (long) index * maxSge + i);
        }
        return "opcode " + (op == null ? String.valueOf(opcode) : op.name()) + ", flags 0x"
                + Integer.toHexString(wrs.get(ValueLayout.JAVA_INT, base + SEND_FLAGS)) + ", " + numSge + " SGE(s), "
                + bytes + " bytes";
    }
}
