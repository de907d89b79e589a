/**
 * The NAAICE client and software NAA server, wire-compatible with the NAAICE C library
 * (naa-communication-library): the memory region setup protocol, the RPC immediates, the
 * low-level client and the server with its kernels.
 */
module dev.verbs4j.naaice {
    requires transitive dev.verbs4j.verbs;
    requires transitive dev.verbs4j.rdmacm;

    exports dev.verbs4j.naaice;
}
