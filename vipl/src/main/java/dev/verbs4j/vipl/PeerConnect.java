package dev.verbs4j.vipl;

import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * VipConnectPeerRequest, VipConnectPeerDone and VipConnectPeerWait (later VIPL, §13), written on
 * the client-server functions: of two peers the lower address waits and accepts, the higher one
 * requests (D21). An attempt runs on a virtual thread of its own (VipConnectPeerRequest returns at
 * once; the thread is the caller the blocking client-server functions need) and ends with one
 * outcome. Its waits are the listener's and the connector's, on their channels, and the pause
 * between requests; a cancellation wakes each at once.
 */
final class PeerConnect {

    private static final System.Logger LOG = System.getLogger("dev.verbs4j.vipl");

    /** The pause between two requests of the higher peer while nobody listens yet. */
    private static final long RETRY_NANOS = 50_000_000L;

    private PeerConnect() {
    }

    /**
     * A VipConnectPeerRequest: the outcome its thread (or a VipDestroyVi, VipCloseNic that
     * cancels it) completes, and whether it was cancelled, which the thread checks before each
     * wait; {@link #cancel} wakes the wait in progress.
     */
    static final class Attempt {
        final CompletableFuture<VipReturn> outcome = new CompletableFuture<>();
        volatile boolean cancelled;
        /** The attempt's (virtual) thread. */
        volatile Thread thread;
        /** The listener the lower peer waits on, which a cancellation wakes; set before the wait looks at {@link #cancelled}. */
        private volatile VipListener listener;
        private final ReentrantLock lock = new ReentrantLock();
        /** Signalled by {@link #cancel}: ends the pause between requests. */
        private final Condition cancelledNow = lock.newCondition();

        /** Cancels the attempt with {@code code} as its outcome; may be called under the NIC lock. */
        void cancel(VipReturn code) {
            cancelled = true;
            outcome.complete(code);
            lock.lock();
            try {
                cancelledNow.signalAll();
            } finally {
                lock.unlock();
            }
            VipListener l = listener;
            if (l != null) {
                l.wake();
            }
        }

        boolean isCancelled() {
            return cancelled;
        }

        /** From now on a cancellation wakes the waits on {@code l} (written before the wait reads {@link #cancelled}). */
        void wakes(VipListener l) {
            listener = l;
        }

        /**
         * Sleeps {@code nanos} unless cancelled first (or before).
         *
         * @return false when cancelled or interrupted (the status kept)
         */
        boolean pause(long nanos) {
            lock.lock();
            try {
                long left = nanos;
                while (!cancelled && left > 0) {
                    left = cancelledNow.awaitNanos(left);
                }
                return !cancelled;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            } finally {
                lock.unlock();
            }
        }
    }

    /** One try of a peer attempt, given the milliseconds left: the result, or null to try again. */
    private interface PeerTry {
        VipReturn attempt(long leftMillis);
    }

    /** VipConnectPeerRequest on a VI and addresses already checked: starts the attempt, or says why not. */
    static VipReturn start(VipVi vi, VipNetAddress localAddr, VipNetAddress remoteAddr, long timeoutMillis) {
        int order = comparePeers(localAddr, remoteAddr);
        if (order == 0) {
            return VipReturn.INVALID_PARAMETER;
        }
        vi.nic.lock.lock();
        try {
            if (vi.destroyed) {
                return VipReturn.INVALID_PARAMETER;
            }
            if (vi.state() != VipViState.IDLE || vi.peerConnect != null) {
                return VipReturn.INVALID_STATE;
            }
            if (timeoutMillis == 0) {
                return VipReturn.TIMEOUT;
            }
            Attempt attempt = new Attempt();
            vi.peerConnect = attempt;
            long deadline = timeoutMillis == Vipl.INFINITE ? Long.MAX_VALUE : System.nanoTime() + timeoutMillis * 1_000_000;
            attempt.thread = Thread.ofVirtual().name("VIPL peer connect " + vi.nic.name).start(() -> {
                VipReturn rc;
                try {
                    rc = order < 0 ? peerAccept(vi, attempt, localAddr, remoteAddr, deadline)
                            : peerRequest(vi, attempt, localAddr, remoteAddr, deadline);
                } catch (RuntimeException e) {
                    LOG.log(System.Logger.Level.DEBUG, "VipConnectPeerRequest failed", e);
                    rc = VipReturn.ERROR_RESOURCE;
                }
                attempt.outcome.complete(rc); // (a cancellation completed it first: its code stands)
            });
            return VipReturn.SUCCESS;
        } finally {
            vi.nic.lock.unlock();
        }
    }

    /**
     * VipConnectPeerDone ({@code wait} false: NOT_DONE while under way) and VipConnectPeerWait
     * ({@code wait} true: parks until the outcome is known) on a VI whose handle was checked.
     */
    static VipReturn outcome(VipVi vi, boolean wait) {
        Attempt attempt = vi.peerConnect;
        if (attempt == null) {
            return VipReturn.INVALID_STATE;
        }
        if (!wait) {
            return attempt.outcome.isDone() ? collect(vi, attempt) : VipReturn.NOT_DONE;
        }
        // parks until the outcome is known: the attempt's thread, or a VipDestroyVi or VipCloseNic
        // that cancels the attempt, completes it
        try {
            attempt.outcome.get();
            return collect(vi, attempt);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return VipReturn.TIMEOUT;
        } catch (ExecutionException e) {
            return VipReturn.ERROR_RESOURCE; // (never: the outcome is only ever completed normally)
        }
    }

    /** The outcome of a finished attempt; the attempt is over (the first caller to collect it clears it). */
    private static VipReturn collect(VipVi vi, Attempt attempt) {
        vi.nic.lock.lock();
        try {
            if (vi.peerConnect == attempt) {
                vi.peerConnect = null;
            }
        } finally {
            vi.nic.lock.unlock();
        }
        return attempt.outcome.join();
    }

    /** Host address bytes, then discriminator bytes, unsigned; the shorter first on a common prefix. */
    static int comparePeers(VipNetAddress x, VipNetAddress y) {
        int c = Arrays.compareUnsigned(x.hostAddress(), y.hostAddress());
        return c != 0 ? c : Arrays.compareUnsigned(x.discriminator(), y.discriminator());
    }

    private static long millisLeft(long deadline) {
        if (deadline == Long.MAX_VALUE) {
            return Vipl.INFINITE;
        }
        return Math.max(0, (deadline - System.nanoTime()) / 1_000_000);
    }

    /** Runs {@code step} until it has a result, the attempt is cancelled or the deadline passed. */
    private static VipReturn peerTries(Attempt attempt, long deadline, PeerTry step) {
        while (true) {
            if (attempt.cancelled) {
                return VipReturn.INVALID_PARAMETER;
            }
            long left = millisLeft(deadline);
            if (left == 0) {
                return VipReturn.TIMEOUT;
            }
            VipReturn rc = step.attempt(left);
            if (rc != null) {
                return rc;
            }
        }
    }

    /** The lower peer: waits for the other's request and accepts it. */
    private static VipReturn peerAccept(VipVi vi, Attempt attempt, VipNetAddress local, VipNetAddress remote, long deadline) {
        return peerTries(attempt, deadline, left -> {
            VipConnHandle h;
            try {
                // the whole time left: a cancellation wakes the wait (a VipCloseNic closes the listener)
                h = ViConnector.await(vi.nic, local, left, attempt);
            } catch (VipException e) {
                return e.code() == VipReturn.TIMEOUT ? null : e.code();
            }
            if (attempt.cancelled) {
                Vipl.connectReject(h);
                return VipReturn.INVALID_PARAMETER;
            }
            if (h.remoteAddress().inetAddress().equals(remote.inetAddress())) {
                return Vipl.connectAccept(h, vi);
            }
            Vipl.connectReject(h);
            return null;
        });
    }

    /** The higher peer: requests until the other listens, within the deadline. */
    private static VipReturn peerRequest(VipVi vi, Attempt attempt, VipNetAddress local, VipNetAddress remote, long deadline) {
        return peerTries(attempt, deadline, left -> {
            VipReturn rc = Vipl.connectRequest(vi, local, remote, left);
            if (rc != VipReturn.NOT_REACHABLE) {
                return rc;
            }
            // Nobody listens there yet: the peer's listener comes with its own VipConnectPeerRequest,
            // and no event here tells when, so D21 asks again after a pause, which a cancellation ends
            long pause = deadline == Long.MAX_VALUE ? RETRY_NANOS : Math.min(RETRY_NANOS, deadline - System.nanoTime());
            if (!attempt.pause(pause) && !attempt.cancelled) {
                return VipReturn.TIMEOUT; // interrupted: the attempt ends, the interrupt status kept
            }
            return null;
        });
    }
}
