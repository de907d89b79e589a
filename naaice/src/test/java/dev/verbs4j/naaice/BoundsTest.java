package dev.verbs4j.naaice;

import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The argument limits of the builders and immediates, and how their refusals read. */
class BoundsTest {

    @Test
    void serverLimitsNameTheArgumentAndItsRange() {
        NaaServer.Builder b = NaaServer.builder();
        assertThatThrownBy(() -> b.maxRegions(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("maxRegions is 1..255, got 0");
        assertThatThrownBy(() -> b.maxRegions(256)).hasMessage("maxRegions is 1..255, got 256");
        assertThatThrownBy(() -> b.maxConnections(0)).hasMessage("maxConnections is at least 1, got 0");
        assertThatThrownBy(() -> b.maxBytes(-1)).hasMessage("maxBytes is at least 0, got -1");
        assertThatThrownBy(() -> b.maxTotalRegions(0)).hasMessage("maxTotalRegions is at least 1, got 0");
        assertThatThrownBy(() -> b.maxTotalBytes(-1)).hasMessage("maxTotalBytes is at least 0, got -1");
        assertThatThrownBy(() -> b.backlog(0)).hasMessage("backlog is at least 1, got 0");
        assertThatThrownBy(() -> b.kernel(128, ReferenceKernels.all().get(1))).hasMessage("a function code is 1..127, got 128");
        // the bounds themselves are taken
        b.maxRegions(1).maxRegions(255).maxConnections(1).maxBytes(0).maxTotalRegions(1).maxTotalBytes(0).backlog(1);
    }

    @Test
    void clientAndImmediateLimitsReadTheSame() {
        NaaClient.Builder b = NaaClient.builder(new InetSocketAddress("127.0.0.1", NaaClient.DEFAULT_PORT));
        assertThatThrownBy(() -> b.maxRequestEntries(0)).hasMessage("maxRequestEntries is 1..255, got 0");
        assertThatThrownBy(() -> Immediate.request(0)).hasMessage("a function code is 1..127, got 0");
        assertThatThrownBy(() -> Immediate.request(1, 256, 0, 0)).hasMessage("U0 is 0..255, got 256");
        assertThatThrownBy(() -> Immediate.userByte(0, 3)).hasMessage("user byte index is 0..2, got 3");
        assertThatThrownBy(() -> Immediate.reply(-1)).hasMessage("return code is 0..255, got -1");
    }
}
