package dev.verbs4j.vipl;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * A flyweight over one descriptor in the VIPL binary layout (§9.10.2, Appendix B), little-endian
 * and 64-byte aligned: a 32-byte control segment, then 16-byte segments, the first of which is
 * the address segment for RDMA operations, the rest data segments. The memory belongs to the
 * application: it lies in a region the application registered and is carved out with {@link
 * #at}; the flyweight only reads and writes fields in place and owns nothing.
 *
 * <p>Between VipPostSend/VipPostRecv and the Done/Wait call that hands it back, the descriptor
 * belongs to the provider (§6.1): the library writes Next/NextHandle while it is queued and, at
 * completion, Length, ImmediateData and then Status with release semantics (§6.4).
 *
 * <p>A flyweight is also the OUT parameter of the Done and Wait functions, which point it at the
 * descriptor they dequeued.
 */
public final class VipDescriptor {

    /** {@code VIP_DESCRIPTOR_ALIGNMENT}. */
    public static final int ALIGNMENT = 64;

    /** The control segment ({@code VIP_CONTROL_SEGMENT}, 32 bytes). */
    public static final StructLayout CONTROL_SEGMENT = MemoryLayout.structLayout(
            ValueLayout.JAVA_LONG.withName("Next"),
            ValueLayout.JAVA_INT.withName("NextHandle"),
            ValueLayout.JAVA_SHORT.withName("SegCount"),
            ValueLayout.JAVA_SHORT.withName("Control"),
            ValueLayout.JAVA_INT.withName("Reserved"),
            ValueLayout.JAVA_INT.withName("ImmediateData"),
            ValueLayout.JAVA_INT.withName("Length"),
            ValueLayout.JAVA_INT.withName("Status")).withName("VIP_CONTROL_SEGMENT");

    /** The address segment ({@code VIP_ADDRESS_SEGMENT}, 16 bytes). */
    public static final StructLayout ADDRESS_SEGMENT = MemoryLayout.structLayout(
            ValueLayout.JAVA_LONG.withName("Data"),
            ValueLayout.JAVA_INT.withName("Handle"),
            ValueLayout.JAVA_INT.withName("Reserved")).withName("VIP_ADDRESS_SEGMENT");

    /** A data segment ({@code VIP_DATA_SEGMENT}, 16 bytes). */
    public static final StructLayout DATA_SEGMENT = MemoryLayout.structLayout(
            ValueLayout.JAVA_LONG.withName("Data"),
            ValueLayout.JAVA_INT.withName("Handle"),
            ValueLayout.JAVA_INT.withName("Length")).withName("VIP_DATA_SEGMENT");

    /** Bytes of the control segment. */
    public static final int CONTROL_SIZE = 32;
    /** Bytes of each following segment. */
    public static final int SEGMENT_SIZE = 16;

    static final long NEXT = 0;
    static final long NEXT_HANDLE = 8;
    static final long SEG_COUNT = 12;
    static final long CONTROL = 14;
    static final long RESERVED = 16;
    static final long IMMEDIATE_DATA = 20;
    static final long LENGTH = 24;
    static final long STATUS = 28;
    static final long SEG_DATA = 0;
    static final long SEG_HANDLE = 8;
    static final long SEG_LENGTH = 12;

    private static final VarHandle STATUS_HANDLE = ValueLayout.JAVA_INT.varHandle();

    private MemorySegment segment;

    private VipDescriptor(MemorySegment segment) {
        this.segment = segment;
    }

    /** Bytes of a descriptor with {@code segments} segments after the control segment. */
    public static long size(int segments) {
        return CONTROL_SIZE + (long) SEGMENT_SIZE * segments;
    }

    /**
     * A flyweight over the descriptor of room for {@code segments} segments at {@code offset} in
     * {@code memory} (which the application owns and registers).
     *
     * @throws IllegalArgumentException when {@code memory} is not native or the address is not 64-byte aligned
     * @throws IndexOutOfBoundsException when the descriptor does not fit
     */
    public static VipDescriptor at(MemorySegment memory, long offset, int segments) {
        if (!memory.isNative()) {
            throw new IllegalArgumentException("a descriptor lives in native (registrable) memory");
        }
        MemorySegment s = memory.asSlice(offset, size(segments));
        if (s.address() % ALIGNMENT != 0) {
            throw new IllegalArgumentException("descriptor at 0x" + Long.toHexString(s.address()) + " is not 64-byte aligned");
        }
        return new VipDescriptor(s);
    }

    /** A flyweight over {@code memory} as it is, aligned or not (the post functions check it). */
    public static VipDescriptor wrap(MemorySegment memory) {
        return new VipDescriptor(memory);
    }

    /** An unset flyweight, to be pointed at a descriptor by a Done or Wait function. */
    public static VipDescriptor empty() {
        return new VipDescriptor(MemorySegment.NULL);
    }

    void point(MemorySegment memory) {
        this.segment = memory;
    }

    /** The descriptor's memory. */
    public MemorySegment segment() {
        return segment;
    }

    /** The descriptor's virtual address (the C {@code VIP_DESCRIPTOR *}). */
    public long address() {
        return segment.address();
    }

    /** Room for segments after the control segment. */
    public int capacity() {
        return (int) ((segment.byteSize() - CONTROL_SIZE) / SEGMENT_SIZE);
    }

    /** Zeroes the control segment; the segments are left as they are. */
    public VipDescriptor clear() {
        segment.asSlice(0, CONTROL_SIZE).fill((byte) 0);
        return this;
    }

    // ---- control segment ----

    /** {@code CS.Next}: the next descriptor's address on the queue (written by the library). */
    public long next() {
        return segment.get(ValueLayout.JAVA_LONG, NEXT);
    }

    /** {@code CS.NextHandle}: the memory handle of the next descriptor. */
    public int nextHandle() {
        return segment.get(ValueLayout.JAVA_INT, NEXT_HANDLE);
    }

    /** {@code CS.SegCount}: the address segment (if any) plus the data segments. */
    public int segCount() {
        return Short.toUnsignedInt(segment.get(ValueLayout.JAVA_SHORT, SEG_COUNT));
    }

    /** Sets {@code CS.SegCount}. */
    public VipDescriptor segCount(int count) {
        segment.set(ValueLayout.JAVA_SHORT, SEG_COUNT, (short) count);
        return this;
    }

    /** {@code CS.Control} (see {@link VipControl}). */
    public int control() {
        return Short.toUnsignedInt(segment.get(ValueLayout.JAVA_SHORT, CONTROL));
    }

    /** Sets {@code CS.Control}. */
    public VipDescriptor control(int control) {
        segment.set(ValueLayout.JAVA_SHORT, CONTROL, (short) control);
        return this;
    }

    /** {@code CS.Reserved}: must be zero. */
    public int reserved() {
        return segment.get(ValueLayout.JAVA_INT, RESERVED);
    }

    /** Sets {@code CS.Reserved} (anything but zero is a format error). */
    public VipDescriptor reserved(int value) {
        segment.set(ValueLayout.JAVA_INT, RESERVED, value);
        return this;
    }

    /** {@code CS.ImmediateData} in host order. */
    public int immediateData() {
        return segment.get(ValueLayout.JAVA_INT, IMMEDIATE_DATA);
    }

    /** Sets {@code CS.ImmediateData}. */
    public VipDescriptor immediateData(int value) {
        segment.set(ValueLayout.JAVA_INT, IMMEDIATE_DATA, value);
        return this;
    }

    /** {@code CS.Length}: Σ data segment lengths when posted on the send queue, bytes transferred once done. */
    public int length() {
        return segment.get(ValueLayout.JAVA_INT, LENGTH);
    }

    /** Sets {@code CS.Length}. */
    public VipDescriptor length(int value) {
        segment.set(ValueLayout.JAVA_INT, LENGTH, value);
        return this;
    }

    /** {@code CS.Status} read with acquire semantics (see {@link VipStatus}). */
    public int status() {
        return (int) STATUS_HANDLE.getAcquire(segment, STATUS);
    }

    /** Sets {@code CS.Status} (the consumer zeroes it before posting). */
    public VipDescriptor status(int value) {
        STATUS_HANDLE.setRelease(segment, STATUS, value);
        return this;
    }

    /** Whether the Done bit is set. */
    public boolean isDone() {
        return VipStatus.isDone(status());
    }

    // ---- segments by slot ----

    private long slot(int index) {
        return CONTROL_SIZE + (long) SEGMENT_SIZE * index;
    }

    /** The address field of segment slot {@code index} (0 is the first after the control segment). */
    public long segmentData(int index) {
        return segment.get(ValueLayout.JAVA_LONG, slot(index) + SEG_DATA);
    }

    /** The memory handle field of segment slot {@code index}. */
    public int segmentHandle(int index) {
        return segment.get(ValueLayout.JAVA_INT, slot(index) + SEG_HANDLE);
    }

    /** The last word of slot {@code index}: the Length of a data segment, the Reserved word of an address segment. */
    public int segmentLength(int index) {
        return segment.get(ValueLayout.JAVA_INT, slot(index) + SEG_LENGTH);
    }

    /** Writes segment slot {@code index}: address, handle and the last word. */
    public VipDescriptor segment(int index, long data, int handle, int lengthOrReserved) {
        long at = slot(index);
        segment.set(ValueLayout.JAVA_LONG, at + SEG_DATA, data);
        segment.set(ValueLayout.JAVA_INT, at + SEG_HANDLE, handle);
        segment.set(ValueLayout.JAVA_INT, at + SEG_LENGTH, lengthOrReserved);
        return this;
    }

    // ---- forming descriptors ----

    /**
     * Forms a Send (send queue) or Receive (receive queue): control {@code OP_SENDRECV} (plus
     * {@code extraControl}, e.g. {@link VipControl#IMMEDIATE}), no address segment, Status zeroed,
     * SegCount and Length set from the data segments added next with {@link #addData}.
     */
    public VipDescriptor sendReceive(int extraControl) {
        clear();
        return control(VipControl.OP_SENDRECV | extraControl);
    }

    /**
     * Forms an RDMA Write or Read ({@code op}) to/from {@code remoteAddress} under the remote
     * {@code remoteHandle}: control segment, address segment (slot 0), SegCount 1; add the local
     * data segments with {@link #addData}.
     */
    public VipDescriptor rdma(int op, int extraControl, long remoteAddress, int remoteHandle) {
        clear();
        control(op | extraControl);
        segment(0, remoteAddress, remoteHandle, 0);
        return segCount(1);
    }

    /**
     * Appends a data segment of {@code length} bytes at {@code address} under {@code handle},
     * increments SegCount and adds the length to Length.
     */
    public VipDescriptor addData(long address, int handle, int length) {
        int n = segCount();
        segment(n, address, handle, length);
        segCount(n + 1);
        return length(length() + length);
    }

    /** Appends a data segment over {@code bytes} (which lie in the region of {@code handle}). */
    public VipDescriptor addData(MemorySegment bytes, VipMemHandle handle) {
        return addData(bytes.address(), handle.value(), Math.toIntExact(bytes.byteSize()));
    }

    @Override
    public String toString() {
        if (segment.equals(MemorySegment.NULL)) {
            return "VipDescriptor[unset]";
        }
        return "VipDescriptor[0x" + Long.toHexString(address()) + " control=0x" + Integer.toHexString(control())
                + " segCount=" + segCount() + " length=" + length() + " status=" + VipStatus.describe(status()) + "]";
    }
}
