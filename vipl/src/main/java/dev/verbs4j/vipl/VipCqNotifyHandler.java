package dev.verbs4j.vipl;

/**
 * The one-shot handler of VipCQNotify (§9.6.11): called once with the completion queue entry it
 * took (the VI and which of its queues); the descriptor is still dequeued with
 * VipSendDone/VipRecvDone. Runs on the calling thread when an entry was already there, otherwise
 * on a notification thread of the library.
 */
@FunctionalInterface
public interface VipCqNotifyHandler {

    /** Handles one entry; {@code context} is the value given with the handler. */
    void handle(Object context, VipNic nic, VipVi vi, boolean recvQueue);
}
