package dev.verbs4j.naaice;

import dev.verbs4j.verbs.Opcode;
import dev.verbs4j.verbs.SendFlags;
import dev.verbs4j.verbs.SendRequest;

import java.util.List;

/**
 * The RPC exchange of a {@link NaaClient}: an RPC's RDMA writes of the inputs, the last carrying
 * the request immediate (function code and user bytes), and the NAA's reply, a write-with-imm
 * whose immediate holds the return code. One RPC at a time; owns no native memory (it posts on the
 * client's queue pair). Guarded by the client's lock.
 */
final class RpcExchange {

    static final long WR_DATA_RECV = 3;
    static final long WR_WRITE = 4;

    /** The NAA's reply to an RPC: its immediate (host order) and the byte count of its completion. */
    record Reply(int immediate, int bytes) {
        static final Reply NONE = new Reply(0, 0);
    }

    /** The RPC in flight: its number, start and writes; {@code reply} once the NAA's has arrived. */
    private static final class Call {
        final int number;
        final long start = System.nanoTime();
        final int writes;
        int writesDone;
        Reply reply;

        Call(int number, int writes) {
            this.number = number;
            this.writes = writes;
        }
    }

    private final ClientState state;
    private final ClientResources resources;
    private final List<ClientRegion> params;
    private int rpcs;
    private int userData;
    private Call call;
    private Reply last = Reply.NONE;
    private long lastRpcNanos;

    RpcExchange(ClientState state, ClientResources resources, List<ClientRegion> params) {
        this.state = state;
        this.resources = resources;
        this.params = params;
    }

    /** The RPCs started. */
    int count() {
        return rpcs;
    }

    /** The last reply that arrived. */
    Reply lastReply() {
        return last;
    }

    /** Nanoseconds of the last finished RPC, from its start to the NAA's reply. */
    long lastRpcNanos() {
        return lastRpcNanos;
    }

    /** In DATA_SENDING or DATA_RECEIVING: the reply has not arrived yet (only its SE need wake the client). */
    boolean awaitingReply() {
        return call != null && call.reply == null;
    }

    /** The user bytes U0, U1, U2 of the next RPCs' immediates. */
    void userBytes(int u0, int u1, int u2) {
        Immediate.request(1, u0, u1, u2);
        this.userData = (u2 << 24) | (u1 << 16) | (u0 << 8);
    }

    /**
     * → DATA_SENDING: posts the receive for the reply, then writes the inputs (single-send ones
     * only in the first RPC), the last write carrying the immediate of function {@code fn}.
     */
    void start(int fn) {
        int imm = Immediate.request(fn) | userData;
        resources.receives.get(0).wrId(WR_DATA_RECV).noSge();
        resources.qp.postReceive(resources.receives, 1);
        int n = 0;
        for (ClientRegion r : params) {
            if ((r.flags & RegionFlags.INPUT) == 0 || ((r.flags & RegionFlags.SINGLE_SEND) != 0 && rpcs > 0)) {
                continue;
            }
            SendRequest w = resources.sends.reset(n++).wrId(WR_WRITE).opcode(Opcode.RDMA_WRITE).flags(SendFlags.SIGNALED)
                    .rdma(r.remoteAddress, r.remoteRkey);
            if (r.bytesToSend > 0) {
                w.sge(r.mr, 0, (int) r.bytesToSend);
            }
        }
        if (n == 0) {
            // Nothing to write: a zero-length write-with-imm to NAA region 0 still starts the RPC.
            ClientRegion r0 = params.get(0);
            resources.sends.reset(n++).wrId(WR_WRITE).rdma(r0.remoteAddress, r0.remoteRkey);
        }
        resources.sends.get(n - 1).opcode(Opcode.RDMA_WRITE_WITH_IMM).flags(SendFlags.SIGNALED | SendFlags.SOLICITED)
                .immediateData(imm);
        rpcs++;
        call = new Call(rpcs, n);
        state.moveTo(NaaState.DATA_SENDING);
        resources.qp.postSend(resources.sends, n);
    }

    /** A write of the RPC completed. */
    void writeDone() {
        if (call != null) {
            call.writesDone++;
        }
    }

    /** The NAA's reply arrived. */
    void replied(int immediate, int bytes) {
        last = new Reply(immediate, bytes);
        if (call != null) {
            call.reply = last;
        }
    }

    /** Moves the state machine as far as the completions seen allow: DATA_RECEIVING, then FINISHED. */
    void advance() {
        if (call == null) {
            return;
        }
        if (state.is(NaaState.DATA_SENDING) && call.writesDone >= call.writes) {
            state.moveTo(NaaState.DATA_RECEIVING);
        }
        if (state.is(NaaState.DATA_RECEIVING) && call.reply != null) {
            Call c = call;
            call = null;
            lastRpcNanos = System.nanoTime() - c.start;
            state.moveTo(NaaState.FINISHED);
            int code = Immediate.returnCode(c.reply.immediate());
            if (code != 0) {
                state.fail(NaaiceException.Reason.NAA_RETURN_CODE, code, "the NAA finished RPC " + c.number + " with return code "
                        + code + " (immediate 0x" + Integer.toHexString(c.reply.immediate()) + ")", null);
            }
        }
    }
}
