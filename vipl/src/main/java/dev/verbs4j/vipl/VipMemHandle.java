package dev.verbs4j.vipl;

import dev.verbs4j.verbs.MemoryRegion;

import java.lang.foreign.MemorySegment;

/**
 * A registered memory region and its memory handle ({@code VIP_MEM_HANDLE}, §3.2.1, §9.5.3): a
 * verbs memory region whose key is the 32-bit handle value that descriptors carry. The memory
 * stays the application's; the registration (the verbs region) belongs to this object. {@link
 * #close()} is VipDeregisterMem.
 */
public final class VipMemHandle implements AutoCloseable {

    final VipNic nic;
    final MemoryRegion mr;
    final MemorySegment memory;
    VipMemAttributes attributes;
    boolean destroyed;

    VipMemHandle(VipNic nic, MemoryRegion mr, MemorySegment memory, VipMemAttributes attributes) {
        this.nic = nic;
        this.mr = mr;
        this.memory = memory;
        this.attributes = attributes;
    }

    /**
     * The handle value: the region's local key, which is also its remote key on the providers this
     * library runs on (registration checks it), so a peer puts it in an address segment.
     */
    public int value() {
        return mr.lkey();
    }

    /** The registered memory. */
    public MemorySegment memory() {
        return memory;
    }

    /** The start address of the registration. */
    public long address() {
        return memory.address();
    }

    /** Whether it was deregistered. */
    public boolean isDestroyed() {
        return destroyed;
    }

    boolean covers(long address, long length) {
        long start = memory.address();
        return address >= start && length >= 0 && address - start <= memory.byteSize() - length;
    }

    /** VipDeregisterMem. @throws VipException unless it returns VIP_SUCCESS */
    @Override
    public void close() {
        Vipl.check(Vipl.deregisterMem(nic, address(), this), "VipDeregisterMem");
    }

    @Override
    public String toString() {
        return "VipMemHandle[0x" + Integer.toHexString(mr.lkey()) + " at 0x" + Long.toHexString(memory.address()) + "+"
                + memory.byteSize() + (destroyed ? ", deregistered]" : "]");
    }
}
