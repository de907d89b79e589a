/**
 * The RDMA connection manager (librdmacm) on the verbs layer: event channels, connection ids,
 * address resolution, and a socket-like connection API.
 */
module dev.verbs4j.rdmacm {
    requires dev.verbs4j.bindings;
    requires transitive dev.verbs4j.verbs;

    exports dev.verbs4j.rdmacm;
}
