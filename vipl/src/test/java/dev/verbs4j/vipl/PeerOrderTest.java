package dev.verbs4j.vipl;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** D21: which side of a peer-to-peer connect listens (the lower address) — no device needed. */
class PeerOrderTest {

    private static VipNetAddress addr(String host, String disc) {
        return VipNetAddress.of(host, disc.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
    }

    @Test
    void hostAddressFirstThenDiscriminatorUnsigned() {
        assertThat(PeerConnect.comparePeers(addr("198.18.0.1", "z"), addr("198.18.0.2", "a"))).isNegative();
        assertThat(PeerConnect.comparePeers(addr("198.18.0.2", "a"), addr("198.18.0.1", "z"))).isPositive();
        // unsigned bytes: 200 > 100
        assertThat(PeerConnect.comparePeers(addr("200.0.0.1", "a"), addr("100.0.0.1", "a"))).isPositive();
        assertThat(PeerConnect.comparePeers(addr("10.0.0.1", "ab"), addr("10.0.0.1", "b"))).isNegative();
        assertThat(PeerConnect.comparePeers(addr("10.0.0.1", "a"), addr("10.0.0.1", "ab"))).isNegative();
        assertThat(PeerConnect.comparePeers(addr("10.0.0.1", "same"), addr("10.0.0.1", "same"))).isZero();
    }

    @Test
    void badHandlesAndArguments() {
        assertThat(Vipl.connectPeerRequest(null, addr("10.0.0.1", "a"), addr("10.0.0.2", "b"), 10))
                .isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.connectPeerDone(null)).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(Vipl.connectPeerWait(null)).isEqualTo(VipReturn.INVALID_PARAMETER);
    }
}
