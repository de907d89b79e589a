/**
 * perftest-style tools and benchmarks: the eight perftest tools ({@code ib_send_lat} ...
 * {@code ib_atomic_bw}) in {@link dev.verbs4j.perf.tools}, interoperable with perftest's C tools;
 * {@code compare} (C against Java, tool by tool and size by size) in {@code dev.verbs4j.perf.compare}.
 */
module dev.verbs4j.perf {
    requires dev.verbs4j.verbs;
    requires dev.verbs4j.rdmacm;
    requires dev.verbs4j.tools;
    requires java.desktop;
    requires org.jfree.jfreechart;

    exports dev.verbs4j.perf.tools;
}
