package dev.verbs4j.vipl;

/**
 * The one-shot completion handler of VipSendNotify and VipRecvNotify (§9.6.9, §9.6.10): called
 * once with the descriptor that completed, already dequeued. It runs on the thread that called the
 * Notify function when the queue's head was already done, otherwise on a notification thread of
 * the library.
 */
@FunctionalInterface
public interface VipNotifyHandler {

    /**
     * Handles the completed descriptor of {@code vi}'s queue; {@code context} is the value given
     * with the handler. The descriptor flyweight is the handler's to keep.
     */
    void handle(Object context, VipNic nic, VipVi vi, VipDescriptor descriptor);
}
