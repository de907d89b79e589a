package dev.verbs4j.rdmacm;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The flow control of RdmaConnection, two windows talking through their immediate values; no device needed. */
class CreditWindowTest {

    /** The opening: each side's first update grants the peer all of its receives. */
    private static void open(CreditWindow a, CreditWindow b) {
        int fromA = a.updateImmediate();
        a.updateSent(fromA);
        int fromB = b.updateImmediate();
        b.updateSent(fromB);
        assertThat(b.received(fromA)).isTrue();
        b.updateReceiveReposted();
        assertThat(a.received(fromB)).isTrue();
        a.updateReceiveReposted();
        a.updateCompleted();
        b.updateCompleted();
    }

    @Test
    void aNewWindowHoldsNoCreditAndOwesEveryReceive() {
        CreditWindow w = new CreditWindow(8);
        assertThat(w.canSend()).isFalse();
        assertThat(w.credits()).isZero();
        assertThat(w.owed()).isEqualTo(8);
        assertThat(w.updateDue()).isTrue();
    }

    @Test
    void theFirstUpdatesGrantEachSideThePeersReceiveDepth() {
        CreditWindow a = new CreditWindow(4);
        CreditWindow b = new CreditWindow(16);
        open(a, b);
        assertThat(a.credits()).isEqualTo(16);
        assertThat(b.credits()).isEqualTo(4);
        assertThat(a.owed()).isZero();
        assertThat(b.owed()).isZero();
    }

    @Test
    void messagesConsumeCreditsAndTheReceiverReturnsThemOnceHalfArePostedAgain() {
        CreditWindow sender = new CreditWindow(4);
        CreditWindow receiver = new CreditWindow(4);
        open(sender, receiver);
        for (int i = 0; i < 4; i++) {
            int imm = sender.messageImmediate();
            sender.messageSent(imm);
            assertThat(receiver.received(imm)).as("a message, not an update").isFalse();
        }
        assertThat(sender.canSend()).isFalse();
        assertThatThrownBy(() -> sender.messageSent(sender.messageImmediate()))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("without a credit");

        receiver.receiveReposted();
        assertThat(receiver.updateDue()).as("1 of 4 posted again: below half").isFalse();
        receiver.receiveReposted();
        assertThat(receiver.updateDue()).isTrue();
        int update = receiver.updateImmediate();
        receiver.updateSent(update);
        assertThat(receiver.owed()).isZero();
        assertThat(sender.received(update)).isTrue();
        assertThat(sender.credits()).isEqualTo(2);
    }

    @Test
    void theUpdateCreditComesBackOnlyWithThePeersAcknowledgement() {
        CreditWindow a = new CreditWindow(2);
        CreditWindow b = new CreditWindow(2);
        open(a, b);
        // b acknowledged a's first update in no message yet: a may not send another
        int m1 = a.messageImmediate();
        a.messageSent(m1);
        b.received(m1);
        b.receiveReposted();
        assertThat(b.updateDue()).as("b's update credit is back: a acknowledged it in its message").isTrue();
        int u = b.updateImmediate();
        b.updateSent(u);
        b.updateCompleted();
        b.receiveReposted();
        assertThat(b.updateDue()).as("the second update waits for a's acknowledgement").isFalse();
        assertThatThrownBy(() -> b.updateSent(b.updateImmediate())).isInstanceOf(IllegalStateException.class);

        a.received(u);
        a.updateReceiveReposted();
        int m2 = a.messageImmediate();
        a.messageSent(m2);
        b.received(m2);
        assertThat(b.updateDue()).isTrue();
    }

    @Test
    void anUpdateInFlightBlocksTheNextUntilItsSendCompletes() {
        CreditWindow w = new CreditWindow(2);
        w.updateSent(w.updateImmediate());
        w.received(1 << 16); // the peer acknowledges it before the send completed
        w.receiveReposted();
        w.receiveReposted();
        assertThat(w.updateDue()).isFalse();
        w.updateCompleted();
        assertThat(w.updateDue()).isTrue();
        assertThatThrownBy(w::updateCompleted).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("not sent");
    }

    @Test
    void moreRepostsThanReceivesAreRefused() {
        CreditWindow w = new CreditWindow(3);
        assertThatThrownBy(w::receiveReposted).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("3");
    }

    @ParameterizedTest
    @ValueSource(ints = {0, -1, CreditWindow.MAX_DEPTH + 1})
    void depthsTheImmediateCannotCarryAreRefused(int depth) {
        assertThatThrownBy(() -> new CreditWindow(depth)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("receiveDepth");
    }

    @Test
    void theLargestDepthRoundTripsThroughTheImmediate() {
        CreditWindow a = new CreditWindow(CreditWindow.MAX_DEPTH);
        CreditWindow b = new CreditWindow(1);
        open(a, b);
        assertThat(b.credits()).isEqualTo(CreditWindow.MAX_DEPTH);
        assertThat(a.credits()).isEqualTo(1);
    }

    @Test
    void writesWithImmediateAloneNeverStallTheUpdates() {
        CreditWindow writer = new CreditWindow(4);
        CreditWindow receiver = new CreditWindow(4);
        open(writer, receiver);
        int delivered = 0;
        int writerUpdates = 0;
        while (delivered < 1000) {
            boolean progress = false;
            if (writer.canSend()) {
                writer.immediateSent(); // carries the application's value: no credits, no acknowledgements
                receiver.immediateReceived();
                receiver.receiveReposted(); // taken by the application, its receive posted again
                delivered++;
                progress = true;
            }
            if (receiver.updateDue()) {
                int imm = receiver.updateImmediate();
                receiver.updateSent(imm);
                assertThat(writer.received(imm)).isTrue();
                writer.updateReceiveReposted();
                receiver.updateCompleted();
                progress = true;
            }
            if (writer.updateDue()) {
                int imm = writer.updateImmediate();
                writer.updateSent(imm);
                assertThat(receiver.received(imm)).isTrue();
                receiver.updateReceiveReposted();
                writer.updateCompleted();
                writerUpdates++;
                progress = true;
            }
            assertThat(progress).as("stalled after %d immediates", delivered).isTrue();
        }
        // the writer never needs an update of its own: its writes acknowledge the receiver's updates
        assertThat(writerUpdates).isZero();
        for (int i = 0; i < 3 && (writer.updateDue() || receiver.updateDue()); i++) {
            if (receiver.updateDue()) {
                int imm = receiver.updateImmediate();
                receiver.updateSent(imm);
                writer.received(imm);
                writer.updateReceiveReposted();
                receiver.updateCompleted();
            }
            if (writer.updateDue()) {
                int imm = writer.updateImmediate();
                writer.updateSent(imm);
                receiver.received(imm);
                receiver.updateReceiveReposted();
                writer.updateCompleted();
            }
        }
        assertThat(writer.updateDue()).isFalse();
        assertThat(receiver.updateDue()).isFalse();
    }

    @Test
    void aWindowOfPostedReceivesStartsOwingNothingAndReturnsEachReceive() {
        CreditWindow w = new CreditWindow(8, true);
        assertThat(w.owed()).isZero();
        assertThat(w.updateDue()).isFalse();
        w.receiveReposted(); // the application posted a buffer
        assertThat(w.updateDue()).as("one posted buffer is returned at once").isTrue();
        int imm = w.updateImmediate();
        w.updateSent(imm);
        CreditWindow peer = new CreditWindow(8);
        assertThat(peer.received(imm)).isTrue();
        assertThat(peer.credits()).isEqualTo(1);
    }
}
