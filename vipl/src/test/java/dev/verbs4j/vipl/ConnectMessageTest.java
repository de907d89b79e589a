package dev.verbs4j.vipl;

import org.junit.jupiter.api.Test;

import java.util.Arrays;

import static org.assertj.core.api.Assertions.assertThat;

/** The private data of VIPL connection requests and replies (§4.1, §9.4). */
class ConnectMessageTest {

    @Test
    void roundTripsWithTheLongestDiscriminatorsWithin56Bytes() {
        byte[] target = new byte[ConnectMessage.MAX_DISCRIMINATOR];
        byte[] source = new byte[ConnectMessage.MAX_DISCRIMINATOR];
        Arrays.fill(target, (byte) 7);
        Arrays.fill(source, (byte) 9);
        VipViAttributes a = new VipViAttributes(VipReliabilityLevel.RELIABLE_RECEPTION, 65536, 0, null, true, false);
        byte[] data = ConnectMessage.of(a, target, source).encode();
        assertThat(data.length).isLessThanOrEqualTo(56);
        byte[] padded = Arrays.copyOf(data, 56);   // RDMA CM pads private data with zeros
        ConnectMessage m = ConnectMessage.decode(padded);
        assertThat(m).isNotNull();
        assertThat(m.attributes()).isEqualTo(a);
        assertThat(m.target()).isEqualTo(target);
        assertThat(m.source()).isEqualTo(source);
    }

    @Test
    void foreignPrivateDataIsNoMessage() {
        assertThat(ConnectMessage.decode(new byte[56])).isNull();
        assertThat(ConnectMessage.decode(new byte[]{'V', 1})).isNull();
        assertThat(ConnectMessage.decode(null)).isNull();
        byte[] badLevel = ConnectMessage.of(VipViAttributes.of(null), new byte[0], new byte[0]).encode();
        badLevel[2] = 9;
        assertThat(ConnectMessage.decode(badLevel)).isNull();
    }
}
