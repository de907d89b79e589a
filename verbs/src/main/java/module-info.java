/**
 * The verbs layer of verbs4j: libibverbs as AutoCloseable, Arena-scoped Java objects.
 */
module dev.verbs4j.verbs {
    requires dev.verbs4j.bindings;

    exports dev.verbs4j.verbs;
    exports dev.verbs4j.verbs.internal to dev.verbs4j.rdmacm, dev.verbs4j.perf;
    exports dev.verbs4j.verbs.tools to dev.verbs4j.rdmacm, dev.verbs4j.vipl, dev.verbs4j.naaice, dev.verbs4j.perf;
}
