package dev.verbs4j.perf.compare;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

/**
 * What {@code compare} does on an emulated CPU (qemu's TCG, as in the Soft-RoCE test bed, which
 * says so in {@code VERBS4J_ACCEL}): there C perftest's busy polling (a spin without PAUSE) and its
 * timer reads cost what they cost the emulator, not what they cost a CPU, so polling figures
 * compare the two emulations rather than Java with C. Both sides then sleep on completion events
 * ({@code -e}), which puts the waiting in the kernel for both, and {@code ib_write_lat}, which
 * polls the receive buffer in memory whatever the options, is left out. {@code --polling} runs
 * everything as asked. The Java side's JIT compilers need minutes of emulated CPU after a JVM
 * starts, and while they work the other CPU's wake-ups wait for the tick: a short latency run
 * measures that, so a run with fewer than {@link #STEADY_ITERS} iterations gets a note.
 */
final class Emulation {

    private Emulation() {
    }

    /** The emulator in use (qemu's accelerator string), or null on real hardware or under KVM. */
    static String detect() {
        String accel = System.getenv("VERBS4J_ACCEL");
        return accel != null && accel.startsWith("tcg") ? accel : null;
    }

    /**
     * Adapts {@code o} to an emulated CPU unless {@code --polling} was given, and says why on
     * {@code out}; does nothing on real hardware.
     */
    static void apply(CompareOptions o, String accel, PrintStream out) {
        if (accel == null) {
            return;
        }
        if (o.polling) {
            out.println("compare: the CPU is emulated (qemu " + accel + "); polling as asked (--polling): the ratios"
                    + " compare two emulations (C perftest's busy loops and timer reads cost what they cost qemu),"
                    + " not Java with C");
            return;
        }
        o.events = true;
        List<Tool> kept = new ArrayList<>(o.tools);
        boolean dropped = kept.remove(Tool.IB_WRITE_LAT);
        out.println("compare: the CPU is emulated (qemu " + accel + "): C perftest's busy polling and timer reads"
                + " cost what they cost the emulator, so both sides sleep on completion events (-e), which puts the"
                + " waiting in the kernel for both" + (dropped ? ", and ib_write_lat (it polls memory whatever the"
                + " options) is left out" : "") + "; --polling runs everything as asked. The Java figures are a"
                + " young JVM's: emulated, its JIT compilers keep a CPU busy for minutes, and the other CPU's"
                + " wake-ups wait for the 4 ms tick meanwhile (README, \"Perf tools\"). Absolute figures mean"
                + " something on real hardware only.");
        if (kept.isEmpty()) {
            throw new Compare.SetupException("nothing left to compare on an emulated CPU: ib_write_lat polls memory"
                    + " (use --polling to run it anyway)");
        }
        o.tools = List.copyOf(kept);
        if (o.iters < STEADY_ITERS && kept.stream().anyMatch(Tool::latency)) {
            out.println("compare: -n " + o.iters + ": the Java side's median latency may fall while its JIT compilers"
                    + " still work; -n " + STEADY_ITERS + " puts it after them here.");
        }
    }

    /**
     * Iterations of a latency run after which, on the emulated CPU, most of a Java run's samples
     * come after its JIT compilers have finished, so that its median is the steady state's.
     */
    static final int STEADY_ITERS = 20_000;
}
