package dev.verbs4j.naaice;

import java.util.EnumMap;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

/**
 * The explicit state machine of one side of a NAAICE connection: the current {@link NaaState} and
 * the table of legal transitions of its {@link Role}. A plain Java object owning no native memory;
 * not thread-safe (its owner serialises access).
 *
 * <p>Client: INIT → READY (address resolved) → CONNECTED (established) → MRSP_SENDING → MRSP_RECEIVING
 * → MRSP_DONE → DATA_SENDING → DATA_RECEIVING → FINISHED → DATA_SENDING …; ERROR from anywhere;
 * DATA_SENDING again from ERROR when the failure was only the NAA's return code (the connection is
 * intact); DISCONNECTED from anywhere when closed.
 *
 * <p>NAA (server, per connection): INIT → CONNECTED → MRSP_RECEIVING → MRSP_SENDING → MRSP_DONE →
 * DATA_RECEIVING → CALCULATING → DATA_SENDING → DATA_RECEIVING …; MRSP_SENDING → MRSP_RECEIVING after
 * an MRSP error reply (the client may try again); FINISHED (the peer disconnected) and ERROR from
 * anywhere; DISCONNECTED from anywhere when the resources are freed.
 */
public final class StateMachine {

    /** Which side of the connection. */
    public enum Role {
        /** The host that offloads (connects, requests regions, starts RPCs). */
        CLIENT,
        /** The network-attached accelerator (accepts, advertises regions, runs kernels). */
        NAA
    }

    private static final Map<NaaState, Set<NaaState>> CLIENT = new EnumMap<>(NaaState.class);
    private static final Map<NaaState, Set<NaaState>> NAA = new EnumMap<>(NaaState.class);

    static {
        CLIENT.put(NaaState.INIT, EnumSet.of(NaaState.READY));
        CLIENT.put(NaaState.READY, EnumSet.of(NaaState.CONNECTED));
        CLIENT.put(NaaState.CONNECTED, EnumSet.of(NaaState.MRSP_SENDING));
        CLIENT.put(NaaState.MRSP_SENDING, EnumSet.of(NaaState.MRSP_RECEIVING));
        CLIENT.put(NaaState.MRSP_RECEIVING, EnumSet.of(NaaState.MRSP_DONE));
        CLIENT.put(NaaState.MRSP_DONE, EnumSet.of(NaaState.DATA_SENDING));
        CLIENT.put(NaaState.DATA_SENDING, EnumSet.of(NaaState.DATA_RECEIVING));
        CLIENT.put(NaaState.DATA_RECEIVING, EnumSet.of(NaaState.FINISHED));
        CLIENT.put(NaaState.FINISHED, EnumSet.of(NaaState.DATA_SENDING));
        CLIENT.put(NaaState.ERROR, EnumSet.of(NaaState.DATA_SENDING));
        CLIENT.put(NaaState.DISCONNECTED, EnumSet.noneOf(NaaState.class));
        CLIENT.put(NaaState.CALCULATING, EnumSet.noneOf(NaaState.class));

        NAA.put(NaaState.INIT, EnumSet.of(NaaState.CONNECTED));
        NAA.put(NaaState.CONNECTED, EnumSet.of(NaaState.MRSP_RECEIVING));
        NAA.put(NaaState.MRSP_RECEIVING, EnumSet.of(NaaState.MRSP_SENDING));
        NAA.put(NaaState.MRSP_SENDING, EnumSet.of(NaaState.MRSP_DONE, NaaState.MRSP_RECEIVING));
        NAA.put(NaaState.MRSP_DONE, EnumSet.of(NaaState.DATA_RECEIVING));
        NAA.put(NaaState.DATA_RECEIVING, EnumSet.of(NaaState.CALCULATING));
        NAA.put(NaaState.CALCULATING, EnumSet.of(NaaState.DATA_SENDING));
        NAA.put(NaaState.DATA_SENDING, EnumSet.of(NaaState.DATA_RECEIVING));
        NAA.put(NaaState.FINISHED, EnumSet.noneOf(NaaState.class));
        NAA.put(NaaState.ERROR, EnumSet.noneOf(NaaState.class));
        NAA.put(NaaState.DISCONNECTED, EnumSet.noneOf(NaaState.class));
        NAA.put(NaaState.READY, EnumSet.noneOf(NaaState.class));
    }

    private final Role role;
    private NaaState state = NaaState.INIT;

    /** A machine for {@code role}, in INIT. */
    public StateMachine(Role role) {
        this.role = role;
    }

    /** The side this machine describes. */
    public Role role() {
        return role;
    }

    /** The current state. */
    public NaaState state() {
        return state;
    }

    /** Whether {@code from → to} is legal for {@code role}. */
    public static boolean isLegal(Role role, NaaState from, NaaState to) {
        if (to == NaaState.DISCONNECTED) {
            return from != NaaState.DISCONNECTED;
        }
        if (to == NaaState.ERROR) {
            return from != NaaState.ERROR && from != NaaState.DISCONNECTED;
        }
        if (role == Role.NAA && to == NaaState.FINISHED) {
            return from != NaaState.FINISHED && from != NaaState.DISCONNECTED;
        }
        return (role == Role.CLIENT ? CLIENT : NAA).get(from).contains(to);
    }

    /**
     * Moves to {@code to}.
     *
     * @throws IllegalStateException when the transition is not legal from the current state
     */
    public void moveTo(NaaState to) {
        if (!isLegal(role, state, to)) {
            throw new IllegalStateException("illegal " + role + " state transition " + state + " (" + state.code() + ") → "
                    + to + " (" + to.code() + ")");
        }
        state = to;
    }

    @Override
    public String toString() {
        return role + " " + state;
    }
}
