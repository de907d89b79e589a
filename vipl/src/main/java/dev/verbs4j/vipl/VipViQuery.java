package dev.verbs4j.vipl;

/**
 * What VipQueryVi returns (§9.8.3): the VI's state and attributes, and, as later VIPL adds, whether
 * each work queue is empty. A value.
 *
 * @param state          the VI's state
 * @param attributes     the VI's attributes
 * @param sendQueueEmpty whether no descriptor is on the send queue
 * @param recvQueueEmpty whether no descriptor is on the receive queue
 */
public record VipViQuery(VipViState state, VipViAttributes attributes, boolean sendQueueEmpty, boolean recvQueueEmpty) {
}
