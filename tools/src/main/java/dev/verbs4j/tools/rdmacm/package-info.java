/**
 * The tools on the RDMA CM API, twins of librdmacm's: {@code rping}, {@code udaddy}, {@code mckey},
 * {@code rdma_server} / {@code rdma_client} (interoperable with them), and the manual's multicast
 * ({@code mc}) and SRQ ({@code srq}) examples.
 */
package dev.verbs4j.tools.rdmacm;
