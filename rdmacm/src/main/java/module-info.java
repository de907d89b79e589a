/**
 * The RDMA connection manager (librdmacm) on the verbs layer.
 */
module dev.verbs4j.rdmacm {
    requires dev.verbs4j.bindings;
    requires dev.verbs4j.verbs;
}
