package dev.verbs4j.naaice;

import dev.verbs4j.rdmacm.Failure;

import dev.verbs4j.verbs.WcOpcode;
import dev.verbs4j.verbs.WorkCompletion;
import dev.verbs4j.verbs.event.DescriptorWaiter;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * How a {@link NaaClient} moves: one non-blocking round (the pending connection manager events,
 * then the completions, handed to the {@link RegionSetup MRSP} and {@link RpcExchange RPC}
 * exchanges), the blocking waits (progress, sleep on every channel at once without the lock, until
 * the caller's deadline), and the last waits of a close. Holds the client's lock and its closed
 * mark; owns no native memory.
 */
final class ClientProgress {

    /** How long a close waits for the NAA's answer to a request already sent. */
    private static final long ANSWER_WAIT_NANOS = 2_000_000_000L;
    /** How long a close waits for the completion of its abort message. */
    private static final long ABORT_SEND_WAIT_NANOS = 1_000_000_000L;
    /** How long a close leaves the NAA to take its abort message before disconnecting. */
    private static final long ABORT_GRACE_NANOS = 500_000_000L;

    /** Held by every method of the client: one thread at a time drives it, and close() may come from any. */
    final ReentrantLock lock = new ReentrantLock();
    private final ClientState state;
    private final ClientConnector connector;
    private final ClientResources resources;
    private final RegionSetup regionSetup;
    private final RpcExchange rpcs;
    private final List<ClientRegion> params;
    private boolean closed;

    ClientProgress(ClientState state, ClientConnector connector, ClientResources resources, RegionSetup regionSetup,
                   RpcExchange rpcs, List<ClientRegion> params) {
        this.state = state;
        this.connector = connector;
        this.resources = resources;
        this.regionSetup = regionSetup;
        this.rpcs = rpcs;
        this.params = params;
    }

    /** Under the lock: marks the client closed; false when it already was. */
    boolean close() {
        if (closed) {
            return false;
        }
        closed = true;
        return true;
    }

    /** One non-blocking round; the state afterwards. */
    NaaState progress() {
        lock.lock();
        try {
            if (closed || state.failedForGood()) {
                return state.state();
            }
            try {
                connector.takeEvents(() -> resources.create(connector.id(), connector.fd(), params, state));
                if (resources.created()) {
                    drain();
                }
            } catch (NaaiceException e) {
                // the client is in ERROR
            } catch (RuntimeException e) {
                state.fail(NaaiceException.Reason.LOCAL, 0, "progress failed", e);
            }
            return state.state();
        } finally {
            lock.unlock();
        }
    }

    /** One round, and if the client still works towards a state, a sleep of at most {@code max} and another round. */
    NaaState progress(Duration max) {
        DescriptorWaiter target;
        lock.lock();
        try {
            NaaState before = progress();
            if (closed || before == NaaState.ERROR || before == NaaState.FINISHED || before == NaaState.MRSP_DONE
                    || before == NaaState.CONNECTED || before == NaaState.DISCONNECTED) {
                return before;
            }
            target = sleepTarget();
        } finally {
            lock.unlock();
        }
        if (target != null) {
            sleep(target, max.toNanos());
        }
        return progress();
    }

    /** Progresses and sleeps until the client reaches {@code target}; see {@link NaaClient#await}. */
    void await(NaaState target, Duration timeout, String what) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            DescriptorWaiter sleepOn;
            long left;
            // the lock is held while progressing, not while sleeping: a close() from another thread gets in
            lock.lock();
            try {
                NaaState s = progress();
                if (s == target) {
                    return;
                }
                if (s == NaaState.ERROR) {
                    throw state.failure();
                }
                if (s == NaaState.DISCONNECTED) {
                    throw new IllegalStateException("the context is closed");
                }
                left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw state.fail(NaaiceException.Reason.TIMEOUT, 0, what + " did not finish within " + timeout + " (state "
                            + s + ")", null);
                }
                sleepOn = sleepTarget();
            } finally {
                lock.unlock();
            }
            if (sleepOn != null) {
                sleep(sleepOn, left);
            }
        }
    }

    /**
     * Under the lock: the waiter to sleep on for the next step, with the completion queue armed
     * once connected; null when there is nothing to sleep on (failed, closed) or arming found
     * completions to take first (they are taken).
     */
    private DescriptorWaiter sleepTarget() {
        NaaState s = state.state();
        if (closed || s == NaaState.ERROR || s == NaaState.DISCONNECTED) {
            return null;
        }
        try {
            if (!resources.created() || s == NaaState.INIT || s == NaaState.READY) {
                return resources.waiter();
            }
            // Waiting for the reply: only its write-with-imm (SE) need wake the client (as the C host
            // arms), and it finds the completions of its own writes in the queue; once the reply is
            // in, any completion does. The posted receive's flush on a failure is solicited.
            resources.arm((s == NaaState.DATA_SENDING || s == NaaState.DATA_RECEIVING) && rpcs.awaitingReply());
            return drain() ? null : resources.waiter();
        } catch (NaaiceException e) {
            return null; // in ERROR
        } catch (RuntimeException e) {
            state.fail(NaaiceException.Reason.LOCAL, 0, "waiting for progress failed", e);
            return null;
        }
    }

    /**
     * Without the lock: sleeps on {@code target} for at most {@code nanos}; the next round takes
     * what arrived. A close from another thread wakes the sleep; the next round sees it closed.
     */
    private void sleep(DescriptorWaiter target, long nanos) {
        try {
            ClientResources.sleep(target, nanos);
        } catch (RuntimeException e) {
            lock.lock();
            try {
                if (!closed) {
                    state.fail(NaaiceException.Reason.LOCAL, 0, "waiting for progress failed", e);
                }
            } finally {
                lock.unlock();
            }
        }
    }

    /** Drains the completion queue and advances the exchanges; true when at least one completion was taken. */
    private boolean drain() {
        boolean any = false;
        int n;
        while ((n = resources.poll()) > 0) {
            any = true;
            for (int i = 0; i < n; i++) {
                complete(resources.completions.get(i));
            }
        }
        regionSetup.advance();
        rpcs.advance();
        return any;
    }

    private void complete(WorkCompletion wc) {
        long wrId = wc.wrId();
        if (!wc.isSuccess()) {
            if (!state.is(NaaState.ERROR)) {
                int status = wc.statusCode();
                state.failTransport(NaaiceException.Reason.WORK_COMPLETION, status, "work request " + wrId + " failed with " + wc.status()
                        + (status == 13 ? " (the NAA was not ready for the RPC)" : ""), Failure.workCompletion(wc.status()));
            }
        } else if (RegionSetup.owns(wrId)) {
            regionSetup.complete(wrId, wc.byteLength());
        } else if (wrId == RpcExchange.WR_WRITE) {
            rpcs.writeDone();
        } else if (wrId == RpcExchange.WR_DATA_RECV && wc.opcode() == WcOpcode.RECV_RDMA_WITH_IMM) {
            rpcs.replied(wc.immediateData(), wc.byteLength());
        } else {
            state.fail(NaaiceException.Reason.PROTOCOL, 0, "unexpected completion " + wc.opcode() + " (work request " + wrId
                    + ") in state " + state.state(), null);
        }
    }

    // ---------------------------------------------------------------- close

    /**
     * Under the lock, in close: a connected client whose region setup never started sends the
     * abort message; one whose request is unanswered waits for the answer (see {@link
     * NaaClient#close()}). A failure only ends it (it is logged).
     */
    void endRegionSetup() {
        if (connector.link() != ClientConnector.Link.ESTABLISHED || resources.qp == null) {
            return;
        }
        try {
            switch (regionSetup.phase()) {
                case NOT_REQUESTED -> abortRegionSetup();
                case REQUESTED -> awaitAnswer();
                case ANSWERED -> {
                }
            }
        } catch (RuntimeException e) {
            System.getLogger(NaaClient.class.getName()).log(System.Logger.Level.DEBUG,
                    "NAAICE client to {0}: ending the region setup before closing failed: {1}", connector.naa(), e);
        }
    }

    /** Sends the abort message, waits for its completion, then for the grace period. */
    private void abortRegionSetup() {
        regionSetup.abort();
        long until = System.nanoTime() + ABORT_SEND_WAIT_NANOS;
        boolean armed = false;
        while (System.nanoTime() < until && connector.link() == ClientConnector.Link.ESTABLISHED) {
            int n = resources.poll();
            for (int i = 0; i < n; i++) {
                WorkCompletion wc = resources.completions.get(i);
                if (wc.wrId() == RegionSetup.WR_ABORT) {
                    if (wc.isSuccess()) {
                        pause(ABORT_GRACE_NANOS);
                    }
                    return;
                }
            }
            if (n > 0) {
                continue;
            }
            if (!armed) {
                resources.arm(false); // and poll once more: a completion before the arming raises no event
                armed = true;
                continue;
            }
            connector.takeDisconnects();
            ClientResources.sleep(resources.waiter(), until - System.nanoTime());
            armed = false;
        }
    }

    /** Progresses until the NAA's MRSP answer arrived, the NAA disconnected or the wait is over. */
    private void awaitAnswer() {
        long until = System.nanoTime() + ANSWER_WAIT_NANOS;
        boolean armed = false;
        while (regionSetup.phase() != RegionSetup.Phase.ANSWERED && connector.link() == ClientConnector.Link.ESTABLISHED
                && System.nanoTime() < until
                && !state.failedWith(NaaiceException.Reason.WORK_COMPLETION)) { // a failed queue pair receives nothing
            connector.takeDisconnects();
            if (drain()) {
                continue;
            }
            if (!armed) {
                resources.arm(false);
                armed = true;
                continue;
            }
            ClientResources.sleep(resources.waiter(), until - System.nanoTime());
            armed = false;
        }
    }

    /** Sleeps {@code nanos}: the time the NAA is given. */
    private static void pause(long nanos) {
        long until = System.nanoTime() + nanos;
        long left;
        while ((left = until - System.nanoTime()) > 0) {
            LockSupport.parkNanos(left);
        }
    }
}
