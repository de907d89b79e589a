/**
 * The VI Provider Library of the VI Architecture on verbs and RDMA CM.
 */
module dev.verbs4j.vipl {
    requires dev.verbs4j.verbs;
    requires dev.verbs4j.rdmacm;
}
