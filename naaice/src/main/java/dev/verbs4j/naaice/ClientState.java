package dev.verbs4j.naaice;

import dev.verbs4j.rdmacm.Failure;

import java.net.InetSocketAddress;

/**
 * The state of one {@link NaaClient}: its {@link StateMachine} and, in {@link NaaState#ERROR},
 * the failure that put it there. Every part of the client fails through {@link #fail}. A plain
 * Java object; guarded by the client's lock.
 */
final class ClientState {

    private static final System.Logger LOG = System.getLogger(NaaClient.class.getName());

    private final StateMachine machine = new StateMachine(StateMachine.Role.CLIENT);
    private final InetSocketAddress naa;
    private NaaiceException failure;

    ClientState(InetSocketAddress naa) {
        this.naa = naa;
    }

    NaaState state() {
        return machine.state();
    }

    boolean is(NaaState s) {
        return machine.state() == s;
    }

    void moveTo(NaaState s) {
        machine.moveTo(s);
    }

    /** Why the client is in ERROR, or null. */
    NaaiceException failure() {
        return failure;
    }

    /** In ERROR for the NAA's return code only: the connection is intact and the next RPC may start. */
    boolean failedByReturnCode() {
        return machine.state() == NaaState.ERROR && failure != null && failure.reason() == NaaiceException.Reason.NAA_RETURN_CODE;
    }

    /** In ERROR for anything but the NAA's return code: nothing progresses any more. */
    boolean failedForGood() {
        return machine.state() == NaaState.ERROR && failure != null && failure.reason() != NaaiceException.Reason.NAA_RETURN_CODE;
    }

    /** Whether the failure is {@code reason}. */
    boolean failedWith(NaaiceException.Reason reason) {
        return failure != null && failure.reason() == reason;
    }

    /** Forgets a failure by the NAA's return code, before the next RPC starts. */
    void clearReturnCode() {
        failure = null;
    }

    /**
     * Moves to ERROR with a new failure (unless already failed, or closed; a real failure replaces
     * one by the NAA's return code) and returns the failure the client keeps.
     */
    NaaiceException fail(NaaiceException.Reason reason, int code, String message, Throwable cause) {
        return fail(new NaaiceException(reason, code, message, cause));
    }

    /** {@link #fail(NaaiceException.Reason, int, String, Throwable)} for a failure of the connection underneath. */
    NaaiceException failTransport(NaaiceException.Reason reason, int code, String message, Failure transport) {
        return fail(new NaaiceException(reason, code, message, null, transport));
    }

    private NaaiceException fail(NaaiceException e) {
        NaaiceException.Reason reason = e.reason();
        if (failedByReturnCode() && reason != NaaiceException.Reason.NAA_RETURN_CODE) {
            failure = e; // a real failure replaces the recoverable one
        } else if (machine.state() != NaaState.ERROR && machine.state() != NaaState.DISCONNECTED) {
            failure = e;
            machine.moveTo(NaaState.ERROR);
            LOG.log(reason == NaaiceException.Reason.NAA_RETURN_CODE ? System.Logger.Level.DEBUG : System.Logger.Level.WARNING,
                    "NAAICE client to {0}: {1}", naa, e.getMessage());
        }
        return failure != null ? failure : e;
    }

    /** Throws unless the client is in {@code s}. */
    void expect(NaaState s, String what) {
        if (machine.state() != s) {
            throw new IllegalStateException(what + " needs " + s + ", the context is " + machine.state()
                    + (failure != null ? " (" + failure.getMessage() + ")" : ""));
        }
    }
}
