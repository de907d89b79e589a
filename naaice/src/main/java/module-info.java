/**
 * The NAAICE client and software NAA server.
 */
module dev.verbs4j.naaice {
    requires dev.verbs4j.verbs;
    requires dev.verbs4j.rdmacm;
}
