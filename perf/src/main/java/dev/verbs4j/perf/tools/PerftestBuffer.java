package dev.verbs4j.perf.tools;

import dev.verbs4j.tools.ToolExit;
import dev.verbs4j.verbs.RdmaArena;

import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Where the buffer of a perftest run comes from when it is not plain memory: a file mapped with
 * {@code --mmap}, or huge pages ({@code --use_hugepages}); with perftest's messages when that fails.
 * The mappings belong to the run's {@link RdmaArena}, which frees them when the resources close.
 *
 * @param o     the run's options ({@code --mmap}, {@code --mmap-offset})
 * @param out   where perftest's lines about the mapping go
 * @param err   where its failures go
 * @param arena the arena the mappings belong to
 */
record PerftestBuffer(PerfOptions o, PrintStream out, PrintStream err, RdmaArena arena) {

    static ToolExit noRegion(PrintStream err, String message) {
        if (message != null) {
            err.print(message + "\n");
        }
        err.print("failed to create mr\n");
        err.print("Failed to create MR\n");
        return ToolExit.printed(err, " Couldn't create IB resources", 1);
    }

    /**
     * --mmap: {@code size} bytes of the file from --mmap-offset, shared with the file, as perftest
     * maps them (and says so); its messages when the file cannot be opened or mapped, and those of
     * its failed registration when the file ends before the buffer does (the file is not grown).
     */
    MemorySegment mapFile(long size) throws ToolExit {
        java.nio.file.Path file = java.nio.file.Path.of(o.mmapFile);
        java.nio.channels.FileChannel ch;
        try {
            ch = java.nio.channels.FileChannel.open(file, java.nio.file.StandardOpenOption.READ,
                    java.nio.file.StandardOpenOption.WRITE);
        } catch (java.io.IOException | RuntimeException e) {
            out.print("Unable to open '" + o.mmapFile + "': " + strerror(e, file) + "\n");
            err.print("Couldn't allocate work buf.\n");
            throw noRegion(err, null);
        }
        try (ch) {
            if (o.mmapOffset % 4096 != 0 || o.mmapOffset < 0) {
                throw new java.io.IOException("Invalid argument");
            }
            long inFile = ch.size() - o.mmapOffset;
            if (inFile < size) {
                // mmap(2) maps past the end of a file and perftest's ibv_reg_mr then fails on the
                // pages there (EFAULT), before anything touches them; FileChannel.map would grow
                // the file instead. The part the file has is mapped, nothing is registered.
                MemorySegment part = inFile > 0
                        ? ch.map(java.nio.channels.FileChannel.MapMode.READ_WRITE, o.mmapOffset, inFile, arena)
                        : MemorySegment.NULL;
                // the address is only printed, as perftest prints it; the mapping belongs to arena,
                // which unmaps it when the tool's resources close
                out.print("allocated mmap buffer of size " + size + " at 0x" + Long.toHexString(part.address()) + "\n");
                err.print("Couldn't allocate MR\n");
                throw noRegion(err, null);
            }
            MemorySegment m = ch.map(java.nio.channels.FileChannel.MapMode.READ_WRITE, o.mmapOffset, size, arena);
            out.print("allocated mmap buffer of size " + size + " at 0x" + Long.toHexString(m.address()) + "\n");
            return m;
        } catch (java.io.IOException | RuntimeException e) {
            out.print("Unable to mmap '" + o.mmapFile + "': " + (e.getMessage() != null && e.getMessage().equals("Invalid argument")
                    ? "Invalid argument" : "No such device") + "\n");
            err.print("Couldn't allocate work buf.\n");
            throw noRegion(err, null);
        }
    }

    /** strerror of open(2)'s failure on {@code file}, from Java's exception. */
    private static String strerror(Exception e, java.nio.file.Path file) {
        if (e instanceof java.nio.file.NoSuchFileException) {
            return "No such file or directory";
        }
        if (e instanceof java.nio.file.AccessDeniedException) {
            return "Permission denied";
        }
        if (java.nio.file.Files.isDirectory(file)) {
            return "Is a directory";
        }
        return "Input/output error";
    }

    /** --use_hugepages: {@code size} bytes in huge pages, or perftest's messages when there are not enough free. */
    MemorySegment hugePages(long size) throws ToolExit {
        try {
            return arena.allocateHugePages(size);
        } catch (RuntimeException e) {
            err.print("Failed to allocate hugepages. Please configure hugepages\n");
            throw noRegion(err, "Failed to allocate hugepage region.");
        }
    }

    /** perftest's fill of a buffer that is not in huge pages: random bytes. */
    static void fillRandom(MemorySegment s) {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        long n = s.byteSize();
        long i = 0;
        for (; i + 8 <= n; i += 8) {
            s.set(ValueLayout.JAVA_LONG_UNALIGNED, i, r.nextLong());
        }
        for (; i < n; i++) {
            s.set(ValueLayout.JAVA_BYTE, i, (byte) r.nextInt());
        }
    }
}
