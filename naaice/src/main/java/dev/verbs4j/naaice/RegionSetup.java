package dev.verbs4j.naaice;

import dev.verbs4j.verbs.Opcode;
import dev.verbs4j.verbs.SendFlags;

import java.util.ArrayList;
import java.util.List;

/**
 * The MRSP exchange of a {@link NaaClient}: the advertise+request announcing the parameter and
 * internal regions, the NAA's answer (its advertise, or an MRSP error), and the abort message a
 * close sends when no request went out. Uses the client's MRSP buffer (the answer lands in its
 * first half, what the client sends goes from the second); owns no native memory. Guarded by the
 * client's lock.
 */
final class RegionSetup {

    static final long WR_RECV = 1;
    static final long WR_SEND = 2;
    static final long WR_ABORT = 5;

    /** How far the exchange got: {@link NaaClient#close()} ends it accordingly. */
    enum Phase {
        /** No request sent: a close sends the abort message first. */
        NOT_REQUESTED,
        /** The request is posted, its answer has not arrived: a close waits for it. */
        REQUESTED,
        /** The NAA's answer arrived (whatever it said). */
        ANSWERED
    }

    private final ClientState state;
    private final ClientResources resources;
    private final List<ClientRegion> params;
    private final List<ClientRegion> internals;
    private Phase phase = Phase.NOT_REQUESTED;
    /** In MRSP_SENDING: the request's send has completed (the answer may come first). */
    private boolean sendDone;
    /** The decoded answer, until the state machine takes it. */
    private MrspMessage answer;

    RegionSetup(ClientState state, ClientResources resources, List<ClientRegion> params, List<ClientRegion> internals) {
        this.state = state;
        this.resources = resources;
        this.params = params;
        this.internals = internals;
    }

    Phase phase() {
        return phase;
    }

    /** CONNECTED → MRSP_SENDING: posts the receive for the answer and sends the request. */
    void start() {
        List<MrspMessage.RequestEntry> entries = new ArrayList<>();
        for (ClientRegion r : params) {
            // every region's rkey travels (the C NAA takes them as given); only an output's lets the NAA write.
            // The address is only a number for the peer: the region keeps its RdmaArena memory registered
            // until it is closed, and the arena's close deregisters it before freeing, so the key dies first.
            entries.add(new MrspMessage.RequestEntry(r.flags, r.requestedAddress, r.mr.address(), r.mr.rkey(), r.size));
        }
        for (ClientRegion r : internals) {
            entries.add(new MrspMessage.RequestEntry(RegionFlags.INTERNAL, r.requestedAddress, 0, 0, r.size));
        }
        long half = resources.mrspBuffer.length() / 2;
        resources.receives.get(0).wrId(WR_RECV).sge(resources.mrspBuffer, 0, (int) half);
        resources.qp.postReceive(resources.receives, 1);
        sendDone = false;
        answer = null;
        state.moveTo(NaaState.MRSP_SENDING);
        send(new MrspMessage.Request(entries), WR_SEND);
        phase = Phase.REQUESTED;
    }

    /** Sends the abort message ({@link Mrsp#HOST_ABORT}, SE) in place of a request (close only). */
    void abort() {
        send(new MrspMessage.Error(Mrsp.HOST_ABORT, true), WR_ABORT);
    }

    private void send(MrspMessage m, long wrId) {
        long half = resources.mrspBuffer.length() / 2;
        int len = Mrsp.encode(m, resources.mrspBuffer.segment().asSlice(half));
        resources.sends.reset(0).wrId(wrId).opcode(Opcode.SEND).flags(SendFlags.SIGNALED | SendFlags.SOLICITED)
                .sge(resources.mrspBuffer, half, len);
        resources.qp.postSend(resources.sends, 1);
    }

    /** Whether {@code wrId} is the request's send or the answer's receive. */
    static boolean owns(long wrId) {
        return wrId == WR_SEND || wrId == WR_RECV;
    }

    /** A successful completion of {@link #owns its} work request: notes it for {@link #advance}. */
    void complete(long wrId, int bytes) {
        if (wrId == WR_SEND) {
            sendDone = true;
            return;
        }
        phase = Phase.ANSWERED;
        try {
            answer = Mrsp.decode(resources.mrspBuffer.segment(), bytes);
        } catch (MalformedMrspException e) {
            state.fail(NaaiceException.Reason.PROTOCOL, 0, "the NAA's MRSP answer: " + e.getMessage(), null);
        }
    }

    /** Moves the state machine as far as the completions seen allow: MRSP_RECEIVING, then MRSP_DONE. */
    void advance() {
        if (state.is(NaaState.MRSP_SENDING) && sendDone) {
            state.moveTo(NaaState.MRSP_RECEIVING);
        }
        if (state.is(NaaState.MRSP_RECEIVING) && answer != null) {
            MrspMessage a = answer;
            answer = null;
            apply(a);
        }
    }

    private void apply(MrspMessage message) {
        switch (message) {
            case MrspMessage.Error e -> state.fail(NaaiceException.Reason.MRSP_ERROR, e.code(), "the NAA refused the regions: "
                    + Mrsp.errorName(e.code()), null);
            case MrspMessage.Advertise a -> {
                if (a.entries().size() != params.size()) {
                    state.fail(NaaiceException.Reason.PROTOCOL, 0, "the NAA advertised " + a.entries().size() + " regions for "
                            + params.size() + " parameters", null);
                    return;
                }
                for (int i = 0; i < params.size(); i++) {
                    MrspMessage.AdvertiseEntry e = a.entries().get(i);
                    ClientRegion r = params.get(i);
                    if (e.size() < r.size) {
                        state.fail(NaaiceException.Reason.PROTOCOL, 0, "the NAA advertised " + e.size() + " bytes for parameter " + i
                                + " of " + r.size + " bytes", null);
                        return;
                    }
                    r.remoteAddress = e.address();
                    r.remoteRkey = e.rkey();
                }
                state.moveTo(NaaState.MRSP_DONE);
            }
            case MrspMessage.Request r -> state.fail(NaaiceException.Reason.PROTOCOL, 0, "the NAA answered with an advertise+request",
                    null);
        }
    }
}
