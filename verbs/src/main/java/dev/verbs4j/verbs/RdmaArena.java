package dev.verbs4j.verbs;

import dev.verbs4j.verbs.internal.Libc;
import dev.verbs4j.verbs.internal.Native;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * An {@link Arena} for memory the NIC may read and write: its segments can be registered with
 * {@link ProtectionDomain#register}, and {@link #close()} deregisters every {@link MemoryRegion}
 * over its memory before it frees the memory, so neither the local device nor a remote peer can
 * reach freed memory through a key that is still valid. Shared: any thread may allocate, register
 * and close. The memory belongs to this arena; the regions registered on it belong to their
 * protection domains and may be closed earlier.
 *
 * <p>{@link #allocateHugePages} maps memory in huge pages (as perftest's {@code --use_hugepages}
 * does): fewer page-table and IOMMU entries for large buffers. It is unmapped when the arena
 * closes, after its regions are deregistered.
 *
 * <p>If a region cannot be deregistered (the provider refuses, e.g. while a memory window is still
 * bound to it), {@code close()} throws and the memory stays allocated for the life of the process:
 * leaking it is safe, freeing it is not.
 */
public final class RdmaArena implements Arena {

    /** The open arenas by the scope of their memory: how {@code register} recognises our segments. */
    private static final Map<MemorySegment.Scope, RdmaArena> OPEN = new ConcurrentHashMap<>();

    private final Arena memory;
    private final ReentrantLock lock = new ReentrantLock();
    private final Set<MemoryRegion> regions = new LinkedHashSet<>();
    private boolean closed;
    private boolean leaked;

    private RdmaArena() {
        this.memory = Arena.ofShared();
        OPEN.put(memory.scope(), this);
    }

    /** A new arena whose memory any thread may use. */
    public static RdmaArena ofShared() {
        return new RdmaArena();
    }

    /**
     * Whether {@link ProtectionDomain#register} takes {@code segment}: native memory of an open
     * RdmaArena or of the global arena.
     */
    public static boolean isRegistrable(MemorySegment segment) {
        return segment.isNative() && segment.scope().isAlive()
                && (segment.scope().equals(Arena.global().scope()) || of(segment) != null);
    }

    /** The open arena whose memory {@code segment} is, or null. */
    static RdmaArena of(MemorySegment segment) {
        return OPEN.get(segment.scope());
    }

    @Override
    public MemorySegment allocate(long byteSize, long byteAlignment) {
        return memory.allocate(byteSize, byteAlignment);
    }

    /**
     * A zeroed segment of {@code byteSize} bytes in huge pages of the system's default size
     * ({@code mmap} with {@code MAP_HUGETLB}), starting on a huge page; its mapping, rounded up to
     * whole huge pages, is unmapped when this arena closes. Registrable like the arena's other memory.
     *
     * @throws IllegalArgumentException when {@code byteSize} is not positive
     * @throws IllegalStateException    when this arena is closed
     * @throws VerbsException           ({@code mmap}, {@code ENOMEM}) when not enough huge pages are free,
     *                                  naming how many were needed and how many are free
     */
    public MemorySegment allocateHugePages(long byteSize) {
        if (byteSize <= 0) {
            throw new IllegalArgumentException("byteSize must be positive, got " + byteSize);
        }
        long page = hugePageSize();
        long length = (byteSize + page - 1) / page * page;
        lock.lock();
        try {
            if (closed) {
                throw new IllegalStateException("the RdmaArena is closed");
            }
            long address = Libc.mapHugePages(length, length / page + " huge page(s) of " + page / 1024 + " KiB for "
                    + byteSize + " bytes (HugePages_Free: " + meminfo("HugePages_Free:")
                    + "; reserve them in /proc/sys/vm/nr_hugepages)");
            return Native.owned(address, byteSize, memory, () -> Libc.unmap(address, length));
        } finally {
            lock.unlock();
        }
    }

    /** The default huge page size ({@code Hugepagesize} of /proc/meminfo); 2 MiB when unknown. */
    public static long hugePageSize() {
        long kib = meminfo("Hugepagesize:");
        return kib > 0 ? kib * 1024 : 2L * 1024 * 1024;
    }

    /** A number of /proc/meminfo ({@code field} with its colon), -1 when unknown. */
    private static long meminfo(String field) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
                String[] w = line.trim().split("\\s+");
                if (w.length > 1 && w[0].equals(field)) {
                    return Long.parseLong(w[1]);
                }
            }
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        return -1;
    }

    @Override
    public MemorySegment.Scope scope() {
        return memory.scope();
    }

    /**
     * Registers a region over this arena's memory while holding the arena open: {@code register}
     * runs under the arena's lock, so a concurrent close waits and then deregisters it too.
     */
    MemoryRegion register(java.util.function.Supplier<MemoryRegion> register) {
        lock.lock();
        try {
            if (closed) {
                throw new IllegalStateException("the RdmaArena of the segment is closed");
            }
            MemoryRegion mr = register.get();
            regions.add(mr);
            return mr;
        } finally {
            lock.unlock();
        }
    }

    /** Called by a region once it is deregistered. */
    void deregistered(MemoryRegion mr) {
        lock.lock();
        try {
            regions.remove(mr);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Deregisters every region over this arena's memory (newest first), then frees the memory.
     * Idempotent.
     *
     * @throws VerbsException when a region could not be deregistered; the memory then stays allocated
     * @throws IllegalStateException when a native call still uses the memory (as {@link Arena#close()})
     */
    @Override
    public void close() {
        List<MemoryRegion> toClose;
        lock.lock();
        try {
            if (leaked || (closed && !memory.scope().isAlive())) {
                return;
            }
            closed = true;
            toClose = new ArrayList<>(regions);
        } finally {
            lock.unlock();
        }
        RuntimeException failure = NativeResource.closeNewestFirst(toClose);
        lock.lock();
        try {
            if (!regions.isEmpty()) {
                leaked = true;
                OPEN.remove(memory.scope());
                VerbsException e = new VerbsException("ibv_dereg_mr", failure instanceof VerbsException v ? v.errno() : Errno.EBUSY,
                        regions.size() + " region(s) over this RdmaArena could not be deregistered; its "
                                + memory.scope() + " memory stays allocated");
                if (failure != null) {
                    e.addSuppressed(failure);
                }
                throw e;
            }
        } finally {
            lock.unlock();
        }
        memory.close();
        OPEN.remove(memory.scope());
        if (failure != null) {
            throw failure;
        }
    }

    @Override
    public String toString() {
        return "RdmaArena" + (closed ? " (closed)" : "");
    }
}
