package dev.verbs4j.vipl;

import dev.verbs4j.verbs.MemoryRegion;

import java.lang.foreign.MemorySegment;

/**
 * A registered memory region and its memory handle ({@code VIP_MEM_HANDLE}, §3.2.1, §9.5.3): a
 * verbs memory region whose key is the 32-bit handle value that descriptors carry. The memory
 * stays the application's, allocated from an {@link dev.verbs4j.verbs.RdmaArena} (or the global
 * arena); the registration (the verbs region) belongs to this object. {@link #close()} is
 * VipDeregisterMem.
 *
 * <p>Closing the memory's RdmaArena deregisters the region before it frees the memory, so that
 * neither the NIC nor a peer can reach freed memory: the handle is then invalid, as if
 * deregistered. Descriptors naming it complete with PROTECTION_ERROR, and the functions taking it
 * return (or throw with) INVALID_PARAMETER.
 *
 * <p>The handle value is fixed at VipRegisterMem; VipSetMemAttributes may replace the verbs region
 * behind it (D20), after which {@link #remoteKey()} is what a peer must put in its address segments.
 */
public final class VipMemHandle implements AutoCloseable {

    final VipNic nic;
    final int value;
    MemoryRegion mr;
    final MemorySegment memory;
    VipMemAttributes attributes;
    boolean destroyed;

    VipMemHandle(VipNic nic, MemoryRegion mr, MemorySegment memory, VipMemAttributes attributes) {
        this.nic = nic;
        this.value = mr.lkey();
        this.mr = mr;
        this.memory = memory;
        this.attributes = attributes;
    }

    /**
     * The handle value: the region's local key at registration, which is also its remote key on the
     * providers this library runs on (registration checks it), so a peer puts it in an address
     * segment. It stays the same for the life of the handle (D20).
     */
    public int value() {
        return value;
    }

    /**
     * The key a peer must use for RDMA to this region now: the handle value, unless
     * VipSetMemAttributes re-registered the region under new keys (D20).
     */
    public int remoteKey() {
        return mr.rkey();
    }

    /** The registered memory. */
    public MemorySegment memory() {
        return memory;
    }

    /** The start address of the registration. */
    public long address() {
        return memory.address();
    }

    /** Whether it is no longer valid: deregistered, its NIC closed, or its memory's RdmaArena closed. */
    public boolean isDestroyed() {
        return invalid();
    }

    /** Whether the handle may no longer be used: deregistered, or its region deregistered by the close of its RdmaArena. */
    boolean invalid() {
        return destroyed || mr.isClosed();
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
        return "VipMemHandle[0x" + Integer.toHexString(value) + " at 0x" + Long.toHexString(memory.address()) + "+"
                + memory.byteSize() + (invalid() ? ", deregistered]" : "]");
    }
}
