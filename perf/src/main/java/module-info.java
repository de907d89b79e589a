/**
 * perftest-style tools and benchmarks.
 */
module dev.verbs4j.perf {
    requires dev.verbs4j.verbs;
    requires dev.verbs4j.rdmacm;
    requires dev.verbs4j.vipl;
    requires dev.verbs4j.naaice;
}
