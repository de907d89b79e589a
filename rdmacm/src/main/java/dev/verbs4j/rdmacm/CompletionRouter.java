package dev.verbs4j.rdmacm;

import dev.verbs4j.verbs.WcOpcode;
import dev.verbs4j.verbs.WcStatus;

/**
 * What an {@link RdmaConnection}'s news mean: routes each work completion by the tag of its
 * request id to the part that posted the request (the {@link SendRing}, the {@link Receives}, the
 * {@link OneSidedOperations}), turns CM events into the {@link Lifecycle}'s ends, and serves the
 * parts' waiting futures in a fixed order. Runs under the connection's lock; owns nothing.
 */
record CompletionRouter(Lifecycle life, SendRing sends, Receives receives, OneSidedOperations operations)
        implements Waiters.Progress {

    /** The tags of work requests that are not receives from the connection's ring or its group's shared queue. */
    static final long SEND_TAGS = SendRing.SEND_TAG | SendRing.CONTROL_TAG | OneSidedOperations.OP_TAG | Receives.POSTED_TAG;

    @Override
    public void onEvent(CmEvent ev) {
        switch (ev.type()) {
            case DISCONNECTED, TIMEWAIT_EXIT -> life.ended(ev.type());
            case ESTABLISHED, ADDR_CHANGE, CONNECT_RESPONSE, ROUTE_RESOLVED, ADDR_RESOLVED -> { }
            default -> life.fail(RdmaConnectionException.of(ev, "connection to " + life.peer()));
        }
    }

    @Override
    public void onCompletion(long wrId, WcStatus status, WcOpcode opcode, int byteLength, int immediate, int flags) {
        if ((wrId & OneSidedOperations.OP_TAG) != 0) {
            operations.onCompletion(wrId, status);
        } else if ((wrId & Receives.POSTED_TAG) != 0) {
            receives.onPostedCompletion((int) (wrId & 0xffff_ffffL), status, opcode, byteLength, immediate, flags);
        } else if ((wrId & (SendRing.SEND_TAG | SendRing.CONTROL_TAG)) != 0) {
            sends.onCompletion(wrId);
            if (status != WcStatus.SUCCESS) {
                life.completedInError(status, "send to");
            }
        } else {
            receives.onRingCompletion((int) (wrId & 0xffff_ffffL), status, opcode, byteLength, immediate, flags);
        }
    }

    @Override
    public void returnCredits() {
        sends.returnCredits();
    }

    @Override
    public void serveFutures() {
        receives.serve();
        operations.serve();
        sends.serve();
    }

    @Override
    public boolean futuresWait() {
        return sends.futuresWait() || receives.futuresWait() || operations.futuresWait();
    }
}
