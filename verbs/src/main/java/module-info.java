/**
 * The verbs layer of verbs4j: libibverbs as AutoCloseable, Arena-scoped Java objects; see the
 * package documentation of {@link dev.verbs4j.verbs} for the lifetime model.
 */
module dev.verbs4j.verbs {
    requires dev.verbs4j.bindings;

    exports dev.verbs4j.verbs;
    exports dev.verbs4j.verbs.event;
    exports dev.verbs4j.verbs.internal to dev.verbs4j.rdmacm, dev.verbs4j.vipl;
}
