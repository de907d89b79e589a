package dev.verbs4j.rdmacm;

/**
 * The flow control bookkeeping of one end of an {@link RdmaConnection} (the protocol is described
 * there): the credits this side holds (receives the peer posted for its messages), its one
 * credit-update credit (the peer's reserved receive), the receives it posted again and has not
 * yet returned, and the peer's credit updates it has taken and not yet acknowledged; and the
 * 32-bit immediate value that carries them. Pure counters, not thread-safe: the connection's lock
 * guards it. Owns no memory.
 */
final class CreditWindow {

    /** Receives reserved for credit updates (the peer's credit-update credits). */
    static final int CONTROL_SLOTS = 1;
    /** The most receives the immediate value can return at once. */
    static final int MAX_DEPTH = 0xffff;
    private static final int IMM_CONTROL = 1 << 31;
    private static final int IMM_CREDITS = 0xffff;
    private static final int IMM_ACKS_SHIFT = 16;
    private static final int IMM_ACKS = 0x7fff;

    private final int receiveDepth;
    /** Credit updates are due once this many receives were posted again without being returned. */
    private final int returnThreshold;
    /** Messages this side may still send: receives the peer has posted for them. */
    private int credits;
    /** Credit updates this side may still send: reserved receives of the peer. */
    private int controlCredits = CONTROL_SLOTS;
    /** Credit updates posted whose send has not completed. */
    private int controlInFlight;
    /** Message receives posted (again) and not yet returned to the peer as credits. */
    private int toReturn;
    /** The peer's credit updates taken and not yet acknowledged. */
    private int acksToReturn;
    /** All credits the peer has granted this side, and all this side has used (messages and writes with immediate). */
    private long grantsReceived;
    private long creditsUsed;
    /** {@link #grantsReceived} before the peer's last credit update: a credit used beyond it came from that update or later. */
    private long peerUpdateBase;
    /** All credits this side has granted the peer, and all the peer has used that arrived here. */
    private long grantsSent;
    private long creditsUsedByPeer;
    /** {@link #grantsSent} before this side's last credit update, and whether the peer has not acknowledged it yet. */
    private long updateBase;
    private boolean updateUnacknowledged;

    /**
     * The window of a side that has posted {@code receiveDepth} message receives: it holds no
     * credit yet and owes the peer all of them (its initial credits).
     *
     * @throws IllegalArgumentException when {@code receiveDepth} is not in 1 .. {@link #MAX_DEPTH}
     */
    CreditWindow(int receiveDepth) {
        this(receiveDepth, false);
    }

    /**
     * The window of a side whose message receives the application posts one by one ({@code
     * posted}): it starts owing nothing, and returns every receive as soon as it can (an update
     * is due from one receive on), since the application may post only a few.
     */
    CreditWindow(int receiveDepth, boolean posted) {
        if (receiveDepth < 1 || receiveDepth > MAX_DEPTH) {
            throw new IllegalArgumentException("receiveDepth must be 1 .. " + MAX_DEPTH + ", got " + receiveDepth);
        }
        this.receiveDepth = receiveDepth;
        this.returnThreshold = posted ? 1 : Math.max(1, receiveDepth / 2);
        this.toReturn = posted ? 0 : receiveDepth;
    }

    /** Whether a message may be sent: the peer has a receive posted for it. */
    boolean canSend() {
        return credits > 0;
    }

    /** The credits held: how many messages may be sent before the peer returns more. */
    int credits() {
        return credits;
    }

    /** The receives posted again and not yet returned. */
    int owed() {
        return toReturn;
    }

    /**
     * The immediate value of the next message, returning the receives and acknowledging the
     * updates that piled up; {@link #messageSent} once it is posted.
     */
    int messageImmediate() {
        return immediate(toReturn, acksToReturn, false);
    }

    /**
     * A message carrying {@code imm} (from {@link #messageImmediate}) was posted: uses one credit
     * and counts what it returned.
     *
     * @throws IllegalStateException when no credit is held
     */
    void messageSent(int imm) {
        if (credits == 0) {
            throw new IllegalStateException("a message sent without a credit: the peer has no receive posted for it");
        }
        credits--;
        creditsUsed++;
        settle(imm);
    }

    /**
     * A write with immediate was posted: uses one credit, and carries no credits or
     * acknowledgements (its immediate value is the application's). Once it uses a credit that the
     * peer's last credit update granted, it acknowledges that update implicitly: the update's
     * receive was posted again when it arrived, before its credits could be used. The peer infers
     * the same in {@link #immediateReceived}, so neither side waits for an acknowledgement that a
     * stream of writes with immediate would never carry.
     *
     * @throws IllegalStateException when no credit is held
     */
    void immediateSent() {
        if (credits == 0) {
            throw new IllegalStateException("a write with immediate sent without a credit: the peer has no receive posted for it");
        }
        credits--;
        creditsUsed++;
        if (acksToReturn > 0 && creditsUsed > peerUpdateBase) {
            acksToReturn--;
        }
    }

    /**
     * The peer's write with immediate arrived (it used one of this side's receives): acknowledges
     * this side's last credit update when it used a credit of that update (see {@link #immediateSent}).
     */
    void immediateReceived() {
        creditsUsedByPeer++;
        if (updateUnacknowledged && creditsUsedByPeer > updateBase) {
            updateUnacknowledged = false;
            controlCredits++;
        }
    }

    /**
     * Whether a credit update is due: at least half of the receives (at least one) wait to be
     * returned, and the peer's reserved receive is free for it.
     */
    boolean updateDue() {
        return toReturn >= returnThreshold && controlCredits > 0 && controlInFlight < CONTROL_SLOTS;
    }

    /** The immediate value of a credit update; {@link #updateSent} once it is posted. */
    int updateImmediate() {
        return immediate(toReturn, acksToReturn, true);
    }

    /**
     * A credit update carrying {@code imm} (from {@link #updateImmediate}) was posted: uses the
     * credit-update credit until the peer acknowledges it.
     *
     * @throws IllegalStateException when no update was due
     */
    void updateSent(int imm) {
        if (controlCredits == 0 || controlInFlight >= CONTROL_SLOTS) {
            throw new IllegalStateException("a credit update sent while the peer's reserved receive is taken");
        }
        controlCredits--;
        controlInFlight++;
        updateBase = grantsSent;
        updateUnacknowledged = true;
        settle(imm);
    }

    /**
     * The send of a credit update completed.
     *
     * @throws IllegalStateException when none was in flight
     */
    void updateCompleted() {
        if (controlInFlight == 0) {
            throw new IllegalStateException("a credit update completed that was not sent");
        }
        controlInFlight--;
    }

    /**
     * A message receive was posted again: it is owed to the peer.
     *
     * @throws IllegalStateException when every receive is owed already
     */
    void receiveReposted() {
        if (toReturn == receiveDepth) {
            throw new IllegalStateException("more receives posted again than the " + receiveDepth + " there are");
        }
        toReturn++;
    }

    /**
     * Takes the credits and acknowledgements of a received immediate value; returns whether it
     * was a credit update (whose receive the caller posts again and then {@link
     * #updateReceiveReposted acknowledges}) rather than a message.
     */
    boolean received(int imm) {
        boolean control = (imm & IMM_CONTROL) != 0;
        if (control) {
            peerUpdateBase = grantsReceived;
        } else {
            creditsUsedByPeer++;
        }
        credits += imm & IMM_CREDITS;
        grantsReceived += imm & IMM_CREDITS;
        int acks = (imm >>> IMM_ACKS_SHIFT) & IMM_ACKS;
        controlCredits += acks;
        if (acks > 0) {
            updateUnacknowledged = false;
        }
        return control;
    }

    /** The receive of a peer's credit update was posted again: the next immediate acknowledges it. */
    void updateReceiveReposted() {
        acksToReturn++;
    }

    private void settle(int imm) {
        toReturn -= imm & IMM_CREDITS;
        grantsSent += imm & IMM_CREDITS;
        acksToReturn -= (imm >>> IMM_ACKS_SHIFT) & IMM_ACKS;
    }

    private static int immediate(int returned, int acks, boolean control) {
        return (control ? IMM_CONTROL : 0) | (acks & IMM_ACKS) << IMM_ACKS_SHIFT | (returned & IMM_CREDITS);
    }

    @Override
    public String toString() {
        return "credits " + credits + ", owed " + toReturn + ", update credits " + controlCredits + " (in flight "
                + controlInFlight + "), acks due " + acksToReturn + ", granted " + grantsReceived + "/" + grantsSent
                + ", used " + creditsUsed + "/" + creditsUsedByPeer + ", update unacknowledged " + updateUnacknowledged
                + " (base " + updateBase + ", peer's " + peerUpdateBase + ")";
    }
}
