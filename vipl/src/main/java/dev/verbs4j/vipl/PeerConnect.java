package dev.verbs4j.vipl;

import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * VipConnectPeerRequest, VipConnectPeerDone and VipConnectPeerWait (later VIPL, §13), written on
 * the client-server functions: of two peers the lower address waits and accepts, the higher one
 * requests (D21). An attempt runs on a virtual thread of its own and ends with one outcome.
 */
final class PeerConnect {

    private static final System.Logger LOG = System.getLogger("dev.verbs4j.vipl");

    /** The longest a peer attempt waits at once before it checks whether it was cancelled. */
    private static final long PEER_SLICE_MILLIS = 200;

    private PeerConnect() {
    }

    /**
     * A VipConnectPeerRequest: the outcome its thread (or a VipDestroyVi, VipCloseNic that
     * cancels it) completes, and whether it was cancelled, which the thread checks between its
     * waits (each at most a slice long).
     */
    static final class Attempt {
        final CompletableFuture<VipReturn> outcome = new CompletableFuture<>();
        volatile boolean cancelled;
        /** The attempt's (virtual) thread. */
        volatile Thread thread;

        void cancel(VipReturn code) {
            cancelled = true;
            outcome.complete(code);
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
                h = Vipl.connectWait(vi.nic, local, Math.min(left, PEER_SLICE_MILLIS));
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
            try {
                Thread.sleep(Math.min(50, Math.max(1, millisLeft(deadline))));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return VipReturn.TIMEOUT;
            }
            return null;
        });
    }
}
