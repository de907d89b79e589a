package dev.verbs4j.verbs;

/**
 * An asynchronous event of a device ({@code struct ibv_async_event}), copied out and already
 * acknowledged. Immutable value; owns no native memory.
 *
 * @param type   what happened
 * @param source the queue pair, completion queue or shared receive queue it concerns, or null
 *               (port and device events, or an object verbs4j did not create)
 * @param qpNum  the QP number for queue-pair events, else -1
 * @param port   the port number for port events, else 0
 */
public record AsyncEvent(AsyncEventType type, NativeResource source, int qpNum, int port) {
}
