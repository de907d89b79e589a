package dev.verbs4j.rdmacm;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The end of an {@link RdmaConnection}: {@link #close} lingers for the sends in flight,
 * disconnects, fails the waiting futures, wakes and waits out the blocked callers, frees the
 * resources ({@link #release}) and only then fails the outstanding buffer operations, whose
 * buffers the device no longer touches once the queue pair is gone. Owns nothing of its own.
 */
record Teardown(RdmaConnection owner, CmId id, Duration lingerTime, Lifecycle life, ConnectionResources res, Waiters waiters,
                SendRing sends, Receives receives, OneSidedOperations operations) {

    private static final System.Logger LOG = System.getLogger(RdmaConnection.class.getName());
    /** How long close waits for the callers still in a call to leave. */
    private static final long CALLERS_NANOS = TimeUnit.SECONDS.toNanos(10);

    /** See {@link RdmaConnection#close()}. */
    void close() {
        waiters.lock.lock();
        try {
            if (life.closing()) {
                return;
            }
            if (life.state() == Lifecycle.State.OPEN && !lingerTime.isZero() && sends.inFlight() > 0) {
                linger();
            }
            life.close();
            life.disconnect();
            waiters.wakeAll();
            waiters.drainFutures(); // every waiting future fails CLOSED
            waiters.cancelWatch();
            waiters.awaitCallers(CALLERS_NANOS);
            release();
            // the queue pair is destroyed: the device no longer touches the buffers of these
            operations.failOutstanding();
        } finally {
            waiters.unlockAndDeliver();
        }
    }

    /** Waits up to the linger time for the sends in flight, as a caller (so that a concurrent close waits for it). */
    private void linger() {
        long deadline = Waiters.deadline(lingerTime);
        waiters.join();
        try {
            while (life.state() == Lifecycle.State.OPEN && sends.inFlight() > 0) {
                waiters.progress();
                if (sends.inFlight() == 0 || !waiters.await(deadline)) {
                    break;
                }
            }
        } catch (RuntimeException | RdmaConnectionException e) {
            LOG.log(System.Logger.Level.DEBUG, "linger ended: {0}", e.getMessage());
        } finally {
            waiters.part();
        }
    }

    /** Frees everything once: the id (and its queue pair), the rings, the queues, the channels. */
    void release() {
        waiters.lock.lock();
        try {
            if (life.release()) {
                res.release(id, waiters.events(), owner, () -> {
                    receives.returnSharedSlots();
                    waiters.recycleInbox();
                });
            }
        } finally {
            waiters.lock.unlock();
        }
    }
}
