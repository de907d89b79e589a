/**
 * The VI Provider Library of the VI Architecture on verbs and RDMA CM: see {@link dev.verbs4j.vipl}.
 */
module dev.verbs4j.vipl {
    requires transitive dev.verbs4j.verbs;
    requires dev.verbs4j.rdmacm;

    exports dev.verbs4j.vipl;
}
