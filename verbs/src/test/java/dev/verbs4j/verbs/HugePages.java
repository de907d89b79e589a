package dev.verbs4j.verbs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The machine's reserved huge pages ({@code /proc/sys/vm/nr_hugepages}) set for a device test and
 * put back when closed; the test bed's VM runs its tests as root and reserves none by itself.
 */
public final class HugePages implements AutoCloseable {

    private static final Path NR = Path.of("/proc/sys/vm/nr_hugepages");
    private final long before;

    private HugePages(long pages) throws IOException {
        before = reserved();
        try {
            set(pages);
        } catch (IOException e) {
            try {
                set(before);
            } catch (IOException again) {
                e.addSuppressed(again);
            }
            throw e;
        }
    }

    /** Reserves {@code pages} huge pages (of the default size) until closed; 0 releases them all. */
    public static HugePages reserve(long pages) throws IOException {
        return new HugePages(pages);
    }

    /** The huge pages reserved now. */
    public static long reserved() throws IOException {
        return Long.parseLong(Files.readString(NR).trim());
    }

    /** The huge pages neither in use nor promised to a mapping: {@code HugePages_Free - HugePages_Rsvd}. */
    public static long available() throws IOException {
        long free = 0;
        long rsvd = 0;
        for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
            String[] w = line.trim().split("\\s+");
            if (w[0].equals("HugePages_Free:")) {
                free = Long.parseLong(w[1]);
            } else if (w[0].equals("HugePages_Rsvd:")) {
                rsvd = Long.parseLong(w[1]);
            }
        }
        return free - rsvd;
    }

    private static void set(long pages) throws IOException {
        Files.writeString(NR, Long.toString(pages));
        if (reserved() < pages) {
            // after a JVM or two have run, free 2 MiB blocks are scarce: drop the page cache, compact, again
            Files.writeString(Path.of("/proc/sys/vm/drop_caches"), "3");
            Files.writeString(Path.of("/proc/sys/vm/compact_memory"), "1");
            Files.writeString(NR, Long.toString(pages));
        }
        if (reserved() != pages) {
            throw new IOException("the kernel reserved " + reserved() + " huge pages of the " + pages + " asked for");
        }
    }

    @Override
    public void close() throws IOException {
        set(before);
    }
}
