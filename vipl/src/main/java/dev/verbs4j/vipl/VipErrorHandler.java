package dev.verbs4j.vipl;

/**
 * The asynchronous error handler of a NIC (the {@code Handler} of VipErrorCallback, §9.9.1); it
 * may run on any thread that drives the NIC.
 */
@FunctionalInterface
public interface VipErrorHandler {

    /** Handles {@code error}; {@code context} is the value given with the handler. */
    void handle(Object context, VipErrorDescriptor error);
}
