package dev.verbs4j.tools.vipl;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * What the client asks the server to do, sent in its first message after connecting: the tool,
 * the sizes, iterations, warm-up, window and whether to verify. A value; {@link #write} and
 * {@link #read} use caller-owned registered memory.
 */
record Plan(int tool, int[] sizes, int iters, int warmup, int window, boolean verify) {

    static final int PINGPONG = 1;
    static final int BW = 2;
    /** The largest encoded plan: header, five words, the sizes. */
    static final int MAX_BYTES = 16 + 20 + 4 * ToolOptions.MAX_SIZES;

    static Plan of(ToolOptions o) {
        return new Plan(o.bw ? BW : PINGPONG, o.sizes.clone(), o.iters, o.warmup(), o.window, o.verify);
    }

    /** Encodes at {@code m}'s start; returns the length in bytes. */
    int write(MemorySegment m) {
        Endpoint.putControl(m, 0, Endpoint.PLAN, tool);
        m.set(ValueLayout.JAVA_INT_UNALIGNED, 16, iters);
        m.set(ValueLayout.JAVA_INT_UNALIGNED, 20, warmup);
        m.set(ValueLayout.JAVA_INT_UNALIGNED, 24, window);
        m.set(ValueLayout.JAVA_INT_UNALIGNED, 28, verify ? 1 : 0);
        m.set(ValueLayout.JAVA_INT_UNALIGNED, 32, sizes.length);
        for (int i = 0; i < sizes.length; i++) {
            m.set(ValueLayout.JAVA_INT_UNALIGNED, 36 + 4L * i, sizes[i]);
        }
        return 36 + 4 * sizes.length;
    }

    /**
     * Decodes {@code length} received bytes at {@code m}'s start and checks them against what
     * {@code expectedTool} can do.
     *
     * @throws IllegalArgumentException saying what is wrong
     */
    static Plan read(MemorySegment m, int length, int expectedTool) {
        if (length < 36 || Endpoint.controlType(m, 0) != Endpoint.PLAN) {
            throw new IllegalArgumentException("the client's first message is not a plan (" + length + " bytes)");
        }
        int tool = (int) Endpoint.controlValue(m, 0);
        if (tool != expectedTool) {
            throw new IllegalArgumentException("the client is " + (tool == BW ? "vipl-bw" : tool == PINGPONG ? "vipl-pingpong"
                    : "unknown (" + tool + ")") + ", this server is " + (expectedTool == BW ? "vipl-bw" : "vipl-pingpong"));
        }
        int iters = m.get(ValueLayout.JAVA_INT_UNALIGNED, 16);
        int warmup = m.get(ValueLayout.JAVA_INT_UNALIGNED, 20);
        int window = m.get(ValueLayout.JAVA_INT_UNALIGNED, 24);
        boolean verify = m.get(ValueLayout.JAVA_INT_UNALIGNED, 28) != 0;
        int n = m.get(ValueLayout.JAVA_INT_UNALIGNED, 32);
        if (n < 1 || n > ToolOptions.MAX_SIZES || length < 36 + 4 * n || iters < 1 || warmup < 0 || window < 1
                || window > ToolOptions.MAX_WINDOW) {
            throw new IllegalArgumentException("a malformed plan");
        }
        int[] sizes = new int[n];
        long biggest = 0;
        for (int i = 0; i < n; i++) {
            sizes[i] = m.get(ValueLayout.JAVA_INT_UNALIGNED, 36 + 4L * i);
            if (sizes[i] < 1 || sizes[i] > ToolOptions.MAX_SIZE) {
                throw new IllegalArgumentException("size " + sizes[i] + " in the plan is out of range");
            }
            biggest = Math.max(biggest, sizes[i]);
        }
        if (tool == BW && biggest * window > ToolOptions.MAX_WINDOW_BYTES) {
            throw new IllegalArgumentException("window × size is too large");
        }
        return new Plan(tool, sizes, iters, warmup, window, verify);
    }

    int maxSize() {
        int m = 0;
        for (int s : sizes) {
            m = Math.max(m, s);
        }
        return m;
    }
}
