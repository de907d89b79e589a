/**
 * The tools on the verbs API, twins of rdma-core's: {@code devinfo} ({@code ibv_devinfo}), the
 * RC, UC, UD and SRQ pingpongs ({@code ibv_*_pingpong}, interoperable with them) and the RDMA Aware
 * Networks Programming manual's RC example.
 */
package dev.verbs4j.tools.verbs;
