package dev.verbs4j.rdmacm;

import dev.verbs4j.verbs.AddressVector;

/**
 * What a datagram event ({@code struct rdma_ud_param}) reports: where to send (the address of
 * the remote queue pair or multicast group), its queue pair number and Q_Key. Immutable.
 *
 * @param destination the address vector to create an address handle from
 * @param qpNum       the remote queue pair number (0xFFFFFF for a multicast group)
 * @param qkey        the Q_Key to send with
 */
public record UdParameters(AddressVector destination, int qpNum, int qkey) {
}
