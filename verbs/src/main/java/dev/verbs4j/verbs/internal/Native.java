package dev.verbs4j.verbs.internal;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;

/**
 * The one place where the verbs layer uses restricted FFM methods: building downcall handles,
 * finding libibverbs' functions, giving native pointers a size and an owner. Everything else goes through these helpers.
 */
public final class Native {

    private static final Linker LINKER = Linker.nativeLinker();

    /** The call-state layout that captures {@code errno}. */
    public static final StructLayout CAPTURE_LAYOUT = Linker.Option.captureStateLayout();

    private static final VarHandle ERRNO = CAPTURE_LAYOUT.varHandle(MemoryLayout.PathElement.groupElement("errno"));

    private static final Linker.Option CAPTURE_ERRNO = Linker.Option.captureCallState("errno");

    private Native() {
    }

    /** libibverbs' and librdmacm's exported functions (loaded once, never unloaded). */
    private static final class Libraries {
        static final SymbolLookup LOOKUP = SymbolLookup.libraryLookup("libibverbs.so.1", Arena.global())
                .or(SymbolLookup.libraryLookup("librdmacm.so.1", Arena.global()));
    }

    /** The address of the exported libibverbs or librdmacm function {@code name}. */
    public static MemorySegment function(String name) {
        return Libraries.LOOKUP.find(name).orElseThrow(() -> new IllegalStateException("libibverbs and librdmacm lack " + name));
    }

    /** A handle on {@code address} whose first parameter is a capture segment receiving errno. */
    public static MethodHandle downcallWithErrno(MemorySegment address, FunctionDescriptor descriptor) {
        return LINKER.downcallHandle(address, descriptor, CAPTURE_ERRNO);
    }


    /** A handle whose first parameter is the function pointer to call (for provider ops tables). */
    public static MethodHandle downcallPointer(FunctionDescriptor descriptor, boolean critical) {
        return critical
                ? LINKER.downcallHandle(descriptor, Linker.Option.critical(false))
                : LINKER.downcallHandle(descriptor);
    }

    /**
     * A handle whose parameters are the function pointer to call, then a capture segment for
     * errno, then the function's own (for provider ops that set errno).
     */
    public static MethodHandle downcallPointerWithErrno(FunctionDescriptor descriptor) {
        return LINKER.downcallHandle(descriptor, CAPTURE_ERRNO);
    }

    /** A fresh capture segment for one errno-reporting call. */
    public static MemorySegment captureSegment(Arena arena) {
        return arena.allocate(CAPTURE_LAYOUT);
    }

    /** The errno a call left in {@code capture}. */
    public static int errno(MemorySegment capture) {
        return (int) ERRNO.get(capture, 0L);
    }

    /**
     * Native memory at {@code address} of {@code byteSize} bytes that belongs to {@code arena}:
     * {@code cleanup} runs once the arena closes (it frees the memory).
     */
    public static MemorySegment owned(long address, long byteSize, Arena arena, Runnable cleanup) {
        return MemorySegment.ofAddress(address).reinterpret(byteSize, arena, s -> cleanup.run());
    }

    /** Gives a native pointer returned by C the size of the object it points to. */
    public static MemorySegment sized(MemorySegment pointer, long byteSize) {
        return pointer.reinterpret(byteSize);
    }

    /**
     * A copy of {@code struct} on the Java heap, 8-byte aligned so that the generated accessors
     * read it as they read native memory: attribute objects outlive the call that filled them.
     */
    public static MemorySegment snapshot(MemorySegment struct) {
        long size = struct.byteSize();
        return MemorySegment.ofArray(new long[(int) ((size + 7) / 8)]).asSlice(0, size).copyFrom(struct);
    }

}
