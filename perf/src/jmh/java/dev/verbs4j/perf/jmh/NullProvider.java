package dev.verbs4j.perf.jmh;

import dev.verbs4j.verbs.Closeables;
import dev.verbs4j.verbs.CompletionQueue;
import dev.verbs4j.verbs.Context;
import dev.verbs4j.verbs.Device;
import dev.verbs4j.verbs.MemoryRegion;
import dev.verbs4j.verbs.NodeType;
import dev.verbs4j.verbs.Opcode;
import dev.verbs4j.verbs.ProtectionDomain;
import dev.verbs4j.verbs.QpType;
import dev.verbs4j.verbs.QueuePair;
import dev.verbs4j.verbs.QueuePairInit;
import dev.verbs4j.verbs.ReceiveRequests;
import dev.verbs4j.verbs.SendFlags;
import dev.verbs4j.verbs.SendOps;
import dev.verbs4j.verbs.SendRequests;
import dev.verbs4j.verbs.TransportType;
import dev.verbs4j.verbs.Borrowed;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The null provider, a benchmark fixture: verbs objects over the fake {@code ibv_context} of
 * {@code perf/src/jmh/c/null_provider.c}, whose post and poll operations are C functions that
 * return at once (one successful completion per signaled send). {@link QueuePair#postSend} and
 * {@link CompletionQueue#poll} run their ordinary code on it, so a loop over them measures what
 * the binding itself costs; the C twin ({@code null_bench.c}) runs the same loop through the same
 * functions. The objects are borrowed ({@link Borrowed}, test code): closing this closes the Java
 * objects and leaves the static C ones alone. Not part of the library.
 */
public final class NullProvider implements AutoCloseable {

    /** The system property, or else environment variable, naming the built shared library. */
    public static final String LIBRARY_PROPERTY = "verbs4j.nullprovider";
    /** The environment variable read when the property is not set. */
    public static final String LIBRARY_ENV = "VERBS4J_NULLPROVIDER";
    /** {@code NP_DEPTH}: completions the fake queue pair holds. */
    public static final int DEPTH = 1024;
    /**
     * The baselines' bare downcalls through a provider's function pointer: {@code int
     * post_send(qp, wr, bad_wr)} (and {@code post_recv}, the same shape) and {@code int
     * poll_cq(cq, n, wc)}, built once, {@code critical(false)}.
     */
    public static final MethodHandle POST = Linker.nativeLinker().downcallHandle(
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.ADDRESS),
            Linker.Option.critical(false));
    public static final MethodHandle POLL_CQ = Linker.nativeLinker().downcallHandle(
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT, ValueLayout.ADDRESS),
            Linker.Option.critical(false));
    /**
     * The extended API's bare downcalls through the {@code ibv_qp_ex} function pointers: {@code
     * void wr_start(qpx)} and {@code wr_send(qpx)}, {@code void wr_set_sge(qpx, lkey, addr,
     * length)}, {@code int wr_complete(qpx)}; {@code critical(false)}.
     */
    public static final MethodHandle WR_VOID = Linker.nativeLinker().downcallHandle(
            FunctionDescriptor.ofVoid(ValueLayout.ADDRESS), Linker.Option.critical(false));
    public static final MethodHandle WR_SET_SGE = Linker.nativeLinker().downcallHandle(
            FunctionDescriptor.ofVoid(ValueLayout.ADDRESS, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT),
            Linker.Option.critical(false));
    public static final MethodHandle WR_COMPLETE = Linker.nativeLinker().downcallHandle(
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS), Linker.Option.critical(false));
    /** {@code struct ibv_wc}: 48 bytes, {@code wr_id} at 0, {@code status} at 8 (the ABI of verbs.h). */
    public static final long WC_SIZE = 48;
    public static final long WC_STATUS = 8;
    /** {@code NP_MAX_BATCH}: the linked requests of the batch baselines. */
    public static final int MAX_BATCH = 32;
    /** {@code NP_QP_NUM}, {@code NP_LKEY}: what the fake objects report. */
    public static final int QP_NUM = 0x11;
    public static final int LKEY = 0x1234;

    private final MethodHandle posted;
    private final MethodHandle polled;
    private final MethodHandle received;
    private final MethodHandle reset;
    private final long sendWrSize;
    private final long recvWrSize;
    private final long[] qpExLayout;

    private final Context context;
    private final ProtectionDomain pd;
    private final CompletionQueue cq;
    private final QueuePair qp;
    private final QueuePair extendedQp;
    private final MemoryRegion mr;
    private final MemorySegment objects;

    private NullProvider(Path library) {
        Linker linker = Linker.nativeLinker();
        SymbolLookup lookup = SymbolLookup.libraryLookup(library, Arena.global());
        MethodHandle open = linker.downcallHandle(symbol(lookup, "np_open"), FunctionDescriptor.of(ValueLayout.ADDRESS));
        FunctionDescriptor counter = FunctionDescriptor.of(ValueLayout.JAVA_LONG);
        this.posted = linker.downcallHandle(symbol(lookup, "np_posted"), counter);
        this.polled = linker.downcallHandle(symbol(lookup, "np_polled"), counter);
        this.received = linker.downcallHandle(symbol(lookup, "np_received"), counter);
        this.reset = linker.downcallHandle(symbol(lookup, "np_reset"), FunctionDescriptor.ofVoid());
        FunctionDescriptor size = FunctionDescriptor.of(ValueLayout.JAVA_LONG);
        try {
            this.sendWrSize = (long) linker.downcallHandle(symbol(lookup, "np_send_wr_size"), size).invokeExact();
            this.recvWrSize = (long) linker.downcallHandle(symbol(lookup, "np_recv_wr_size"), size).invokeExact();
        } catch (Throwable t) {
            throw new IllegalStateException("np_send_wr_size/np_recv_wr_size failed", t);
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment offsets = arena.allocate(ValueLayout.JAVA_LONG, 6);
            linker.downcallHandle(symbol(lookup, "np_qp_ex_layout"), FunctionDescriptor.ofVoid(ValueLayout.ADDRESS))
                    .invokeExact(offsets);
            this.qpExLayout = offsets.toArray(ValueLayout.JAVA_LONG);
        } catch (Throwable t) {
            throw new IllegalStateException("np_qp_ex_layout failed", t);
        }
        MemorySegment objects;
        try {
            // np_open returns &np.objects, a static of the loaded library (Arena.global(): never
            // unloaded), so this memory and every object it points to live as long as the process
            objects = ((MemorySegment) open.invokeExact()).reinterpret(12 * ValueLayout.ADDRESS.byteSize());
        } catch (Throwable t) {
            throw new IllegalStateException("np_open failed", t);
        }
        if (objects.equals(MemorySegment.NULL)) {
            throw new IllegalStateException("np_open failed (no eventfd)");
        }
        Device device = new Device("null0", 0, NodeType.CA, TransportType.IB, "");
        this.context = Borrowed.context(pointer(objects, 0), device);
        this.pd = Borrowed.protectionDomain(context, pointer(objects, 1));
        this.cq = Borrowed.completionQueue(context, pointer(objects, 2));
        this.qp = Borrowed.queuePair(pd, pointer(objects, 3),
                QueuePairInit.of(QpType.RC, cq).maxSendWr(DEPTH).maxRecvWr(DEPTH).maxSendSge(1).maxRecvSge(1));
        this.extendedQp = Borrowed.queuePair(pd, pointer(objects, 11), QueuePairInit.of(QpType.RC, cq).maxSendWr(DEPTH)
                .maxRecvWr(DEPTH).maxSendSge(1).maxRecvSge(1).sendOps(SendOps.SEND));
        this.mr = Borrowed.memoryRegion(pd, pointer(objects, 4));
        this.objects = objects;
        resetCounters();
    }

    private static MemorySegment symbol(SymbolLookup lookup, String name) {
        return lookup.find(name).orElseThrow(() -> new IllegalStateException("the null provider library has no " + name));
    }

    private static MemorySegment pointer(MemorySegment objects, int index) {
        return objects.getAtIndex(ValueLayout.ADDRESS, index);
    }

    /**
     * The null provider from the library that {@value #LIBRARY_PROPERTY} (or {@value #LIBRARY_ENV})
     * names; without either, the library is built from the fixture's source with gcc into {@code
     * target/nullprovider} (the source is looked for under {@code src/jmh/c} and {@code
     * perf/src/jmh/c} of the working directory). One per process at a time.
     */
    public static NullProvider open() {
        String named = System.getProperty(LIBRARY_PROPERTY, System.getenv(LIBRARY_ENV));
        if (named != null && !named.isEmpty()) {
            return open(Path.of(named));
        }
        for (Path base : List.of(Path.of(""), Path.of("perf"))) {
            Path source = base.resolve("src/jmh/c/null_provider.c");
            if (Files.isRegularFile(source)) {
                return open(compile(source, base.resolve("target/nullprovider")));
            }
        }
        throw new IllegalStateException("the null provider's library is not built: set -D" + LIBRARY_PROPERTY
                + " (or " + LIBRARY_ENV + ") to libverbs4j_nullprovider.so, or run from the repository or perf/");
    }

    /** The null provider from {@code library}, a build of {@code null_provider.c}. */
    public static NullProvider open(Path library) {
        if (!Files.isRegularFile(library)) {
            throw new IllegalStateException("no null provider library at " + library.toAbsolutePath());
        }
        return new NullProvider(library.toAbsolutePath());
    }

    /**
     * Builds {@code source} ({@code null_provider.c}) with gcc into {@code outDir} as {@code
     * libverbs4j_nullprovider.so} unless that is newer already, and returns the library.
     *
     * @throws IllegalStateException when gcc is missing or fails (with its output)
     */
    public static Path compile(Path source, Path outDir) {
        Path lib = outDir.resolve("libverbs4j_nullprovider.so");
        try {
            if (Files.isRegularFile(lib) && Files.getLastModifiedTime(lib).compareTo(Files.getLastModifiedTime(source)) > 0) {
                return lib;
            }
            Files.createDirectories(outDir);
            List<String> command = List.of("gcc", "-O2", "-Wall", "-shared", "-fPIC", "-o", lib.toString(), source.toString());
            Process gcc;
            try {
                gcc = new ProcessBuilder(command).redirectErrorStream(true).start();
            } catch (IOException e) {
                throw new IllegalStateException("the null provider is C built at run time and needs gcc, which is not"
                        + " on PATH (" + e.getMessage() + "); install gcc (apt-get install gcc)", e);
            }
            String output = new String(gcc.getInputStream().readAllBytes());
            if (gcc.waitFor() != 0) {
                throw new IllegalStateException(String.join(" ", command) + " failed:\n" + output);
            }
            return lib;
        } catch (IOException e) {
            throw new IllegalStateException("building the null provider into " + outDir + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while building the null provider", e);
        }
    }

    /** The context (borrowed; its device is reported as {@code null0}). */
    public Context context() {
        return context;
    }

    /** The protection domain of the queue pair and memory region. */
    public ProtectionDomain protectionDomain() {
        return pd;
    }

    /** The completion queue, for sends and receives alike. */
    public CompletionQueue completionQueue() {
        return cq;
    }

    /** An RC queue pair in RTS, holding {@value #DEPTH} outstanding signaled sends. */
    public QueuePair queuePair() {
        return qp;
    }

    /** The second queue pair, an extended one ({@link QueuePair#extended()}: SEND), on the same queue. */
    public QueuePair extendedQueuePair() {
        return extendedQp;
    }

    /** A region of 4096 bytes with local key {@value #LKEY}. */
    public MemoryRegion memoryRegion() {
        return mr;
    }

    /**
     * The native objects by their index in {@code struct np_objects}, for a baseline without the
     * verbs layer: 2 the {@code ibv_cq}, 3 the {@code ibv_qp}, 5 the post_send function, 6 the
     * poll_cq function, 7 a signaled SEND work request ({@code wr_id} at offset 0) of 64 bytes,
     * 8 {@value #MAX_BATCH} such requests linked in an array ({@link #sendWrSize()} apart), 9
     * {@value #MAX_BATCH} linked receive requests ({@link #recvWrSize()} apart), 10 the post_recv
     * function, 11 the extended queue pair's {@code ibv_qp} (its {@code ibv_qp_ex} lies at the same
     * address).
     */
    public MemorySegment nativeObject(int index) {
        return pointer(objects, index);
    }

    /**
     * Where {@code struct ibv_qp_ex} has {@code wr_id}, {@code wr_flags}, {@code wr_start}, {@code
     * wr_send}, {@code wr_set_sge} and {@code wr_complete}, in that order.
     */
    public long[] qpExLayout() {
        return qpExLayout.clone();
    }

    /** {@code sizeof(struct ibv_send_wr)}: the stride of {@link #nativeObject nativeObject(8)}. */
    public long sendWrSize() {
        return sendWrSize;
    }

    /** {@code sizeof(struct ibv_recv_wr)}: the stride of {@link #nativeObject nativeObject(9)}. */
    public long recvWrSize() {
        return recvWrSize;
    }

    /** Receives the provider's post_recv accepted since the last {@link #resetCounters()}. */
    public long received() {
        return counter(received);
    }

    /** Work requests the provider's post_send accepted since the last {@link #resetCounters()}. */
    public long posted() {
        return counter(posted);
    }

    /** Completions its poll_cq returned since the last {@link #resetCounters()}. */
    public long polled() {
        return counter(polled);
    }

    /** Drops pending completions and zeroes the counters. */
    public void resetCounters() {
        try {
            reset.invokeExact();
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    private static long counter(MethodHandle handle) {
        try {
            return (long) handle.invokeExact();
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** Makes every request of {@code list} a signaled SEND of the region's first 64 bytes; returns {@code list}. */
    public SendRequests signaledSends(SendRequests list) {
        for (int i = 0; i < list.capacity(); i++) {
            list.reset(i).opcode(Opcode.SEND).flags(SendFlags.SIGNALED).sge(memoryRegion(), 0, 64);
        }
        return list;
    }

    /** Makes every request of {@code list} a receive into the region's first 64 bytes; returns {@code list}. */
    public ReceiveRequests receives(ReceiveRequests list) {
        for (int i = 0; i < list.capacity(); i++) {
            list.reset(i).sge(memoryRegion(), 0, 64);
        }
        return list;
    }

    /**
     * A benchmark's tear-down: closes {@code resources}, then this provider, and throws when the
     * provider did not count {@code id} posts and polls, the benchmark's own count.
     */
    public void closeCounted(long id, AutoCloseable... resources) {
        long posted = posted();
        long polled = polled();
        Closeables.closeAll(resources);
        close();
        if (posted != id || polled != id) {
            throw new IllegalStateException("the provider counted " + posted + " posted and " + polled
                    + " polled, the benchmark " + id);
        }
    }

    /** Closes the Java objects; the C objects stay, for a later {@link #open}. */
    @Override
    public void close() {
        context.close();
    }
}
