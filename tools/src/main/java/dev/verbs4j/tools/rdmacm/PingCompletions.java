package dev.verbs4j.tools.rdmacm;

import dev.verbs4j.verbs.CompletionQueue;
import dev.verbs4j.verbs.WcStatus;
import dev.verbs4j.verbs.WorkCompletion;
import dev.verbs4j.verbs.WorkCompletions;

/**
 * The completion thread of an rping connection: waits on the completion channel, and for each
 * completion moves the connection's {@link PingState} and wakes its waiter; a received advert is
 * kept and the receive posted again. A failed completion puts the connection in ERROR.
 */
final class PingCompletions {

    private final RPingConnection c;
    private final RPing rping;
    private volatile boolean stop;
    private Thread thread;

    private PingCompletions(RPingConnection c) {
        this.c = c;
        this.rping = c.rping;
    }

    /** Starts the thread for {@code connection}'s completions. */
    static PingCompletions start(RPingConnection connection) {
        PingCompletions completions = new PingCompletions(connection);
        completions.thread = Thread.ofPlatform().name("rping-cq").daemon().start(completions::loop);
        return completions;
    }

    /** Ends the thread. */
    void stop() {
        stop = true;
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void loop() {
        rping.debug("cq_thread started.\n");
        try (WorkCompletions wc = new WorkCompletions(1)) {
            while (!stop) {
                CompletionQueue evCq;
                try {
                    evCq = c.channel.await(RPing.POLL_SLICE);
                } catch (RuntimeException e) {
                    rping.err.print("Failed to get cq event!\n");
                    return;
                }
                if (evCq == null) {
                    continue;
                }
                if (evCq != c.cq) {
                    rping.err.print("Unknown CQ!\n");
                    return;
                }
                try {
                    c.cq.requestNotify(false);
                } catch (RuntimeException e) {
                    rping.err.print("Failed to set notify!\n");
                    return;
                }
                try {
                    if (drain(wc)) {
                        return;
                    }
                } catch (RPingException e) {
                    e.report(rping.err);
                    c.enter(PingState.ERROR);
                    return;
                }
            }
        }
    }

    /** Handles the completions there are; true when a flushed one shows the queue pair is gone. */
    private boolean drain(WorkCompletions wcs) {
        boolean flushed = false;
        while (poll(wcs)) {
            WorkCompletion wc = wcs.get(0);
            if (!wc.isSuccess()) {
                if (wc.status() == WcStatus.WR_FLUSH_ERR) {
                    flushed = true;
                    continue;
                }
                throw new RPingException(String.format("cq completion failed status %d\n", wc.statusCode()), -1);
            }
            switch (wc.opcode()) {
                case SEND -> rping.debug("send completion\n");
                case RDMA_WRITE -> {
                    rping.debug("rdma write completion\n");
                    c.enter(PingState.RDMA_WRITE_COMPLETE);
                }
                case RDMA_READ -> {
                    rping.debug("rdma read completion\n");
                    c.enter(PingState.RDMA_READ_COMPLETE);
                }
                case RECV -> {
                    rping.debug("recv completion\n");
                    received(wc);
                    try {
                        c.qp.postReceive(c.buffers.recvWr, 1);
                    } catch (RuntimeException e) {
                        throw new RPingException("post recv error: " + e.getMessage() + "\n", -1);
                    }
                    c.wake();
                }
                default -> {
                    rping.debug("unknown!!!!! completion\n");
                    throw RPingException.reported(-1);
                }
            }
        }
        return flushed;
    }

    private boolean poll(WorkCompletions wcs) {
        try {
            return c.cq.poll(wcs) == 1;
        } catch (RuntimeException e) {
            throw new RPingException("poll error " + e.getMessage() + "\n", -1);
        }
    }

    /** A received message: the server keeps the advert, either side moves to its next state. */
    private void received(WorkCompletion wc) {
        if (wc.byteLength() != RdmaInfo.SIZE) {
            throw new RPingException(String.format("Received bogus data, size %d\nrecv wc error: -1\n", wc.byteLength()), -1);
        }
        if (c.server) {
            RdmaInfo info = RdmaInfo.readFrom(c.buffers.recv);
            c.remote = info;
            rping.debug("Received rkey %x addr %x len %d from peer\n", info.rkey(), info.address(), info.length());
            c.state = c.state.afterServerReceive();
        } else {
            c.state = c.state.afterClientReceive();
        }
    }
}
