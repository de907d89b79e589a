package dev.verbs4j.rdmacm;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The rejection reason's wire form, without a device: encode and decode, data too short, data of another kind. */
class RejectionReasonTest {

    @Test
    void aReasonSurvivesItsWireFormAndTheTransportsPadding() {
        RejectionReason reason = new RejectionReason("the backlog of 64 connections is full");
        byte[] wire = reason.encode();
        assertThat(new String(wire, StandardCharsets.UTF_8)).isEqualTo("verbs4j rejected: the backlog of 64 connections is full");
        assertThat(RejectionReason.decode(wire)).contains(reason);
        // the transport pads a reject's private data with zeros
        assertThat(RejectionReason.decode(Arrays.copyOf(wire, RejectionReason.MAX_BYTES))).contains(reason);
        assertThat(RejectionReason.decode(new RejectionReason("").encode())).contains(new RejectionReason(""));
    }

    @Test
    void whatTheConnectionExceptionReadsIsTheSameReason() {
        byte[] wire = new RejectionReason("server closing").encode();
        RdmaConnectionException e = RdmaConnectionException.of(new CmEvent(CmEventType.REJECTED, CmEvent.REJECT_CONSUMER, null,
                null, wire, null, null), "connect to /198.18.0.2:7471");
        assertThat(e.rejectionReason()).isEqualTo("server closing");
        assertThat(e.getMessage()).contains("rejected by the peer: server closing");
    }

    @Test
    void aLongReasonIsCutToWhatARejectCarriesOnACharacterBoundary() {
        byte[] wire = new RejectionReason("é".repeat(200)).encode();
        assertThat(wire.length).isLessThanOrEqualTo(RejectionReason.MAX_BYTES).isGreaterThan(RejectionReason.MAX_BYTES - 2);
        String text = RejectionReason.decode(wire).orElseThrow().text();
        assertThat(text).matches("é+");
        assertThat(new RejectionReason(text).encode()).isEqualTo(wire);
    }

    @Test
    void dataTooShortForThePrefixGivesNoReason() {
        assertThat(RejectionReason.decode(null)).isEmpty();
        assertThat(RejectionReason.decode(new byte[0])).isEmpty();
        assertThat(RejectionReason.decode("verbs4j rej".getBytes(StandardCharsets.UTF_8))).isEmpty();
    }

    @Test
    void anotherProtocolsDataIsNoReason() {
        // the C NAA's NUL-terminated text, a VIPL reject's marker, zeros
        assertThat(RejectionReason.decode("Server overloaded: 1024 connections open\0".getBytes(StandardCharsets.US_ASCII)))
                .isEmpty();
        assertThat(RejectionReason.decode(new byte[]{'V', 'R', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}))
                .isEmpty();
        assertThat(RejectionReason.decode(new byte[RejectionReason.MAX_BYTES])).isEmpty();
        assertThatThrownBy(() -> new RejectionReason(null)).isInstanceOf(NullPointerException.class);
    }
}
