/**
 * The command-line tools of verbs4j, run by {@code bin/verbs4j}: {@code devinfo} and the pingpongs
 * on verbs ({@code dev.verbs4j.tools.verbs}), {@code rping}, {@code udaddy}, {@code mckey} and the
 * RDMA CM examples ({@code dev.verbs4j.tools.rdmacm}), {@code vipl-pingpong} and {@code vipl-bw}
 * ({@code dev.verbs4j.tools.vipl}), and the {@code naaice-*} tools ({@code dev.verbs4j.tools.naaice});
 * {@code dev.verbs4j.tools} holds their shared option parser, size parser, entry-point and logging
 * conventions.
 */
module dev.verbs4j.tools {
    requires dev.verbs4j.verbs;
    requires dev.verbs4j.rdmacm;
    requires dev.verbs4j.vipl;
    requires dev.verbs4j.naaice;
    requires java.logging;

    exports dev.verbs4j.tools to dev.verbs4j.perf;
}
