package dev.verbs4j.verbs;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.HexFormat;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The checks of a multicast attach or detach that need no device, and what a multicast GID is. */
class MulticastArgumentsTest {


    @ParameterizedTest
    @CsvSource({
        "ff0100000002c9850000000000000000, true",   // perftest's default MGID
        "ff0e0000000000000000000000000001, true",
        "00000000000000000000ffffef010203, true",   // ::ffff:239.1.2.3
        "00000000000000000000ffffe0000001, true",   // ::ffff:224.0.0.1
        "00000000000000000000ffffc6120001, false",  // ::ffff:198.18.0.1
        "00000000000000000000fffff0000001, false",  // ::ffff:240.0.0.1
        "fe800000000000000250b6fffe1c2d3e, false",
        "000000000000000000000000ef010203, false",  // IPv4-compatible, not mapped
    })
    void aMulticastGidIsAnIpv6GroupOrAMappedIpv4Group(String hex, boolean multicast) {
        assertThat(Gid.of(HexFormat.of().parseHex(hex)).isMulticast()).isEqualTo(multicast);
    }

    @Test
    void onlyUdQueuePairsJoinGroups() {
        Gid group = Gid.of(HexFormat.of().parseHex("ff0100000002c9850000000000000000"));
        for (QpType t : new QpType[]{QpType.RC, QpType.UC, QpType.XRC_SEND, QpType.XRC_RECV}) {
            assertThatThrownBy(() -> MulticastGroups.check(t, group, 0)).isInstanceOf(IllegalStateException.class)
                    .hasMessage("only UD queue pairs join multicast groups; this one is " + t);
        }
        assertThatCode(() -> MulticastGroups.check(QpType.UD, group, 0)).doesNotThrowAnyException();
    }

    @Test
    void theGroupMustBeAMulticastGidAndTheLidAMulticastLid() {
        Gid group = Gid.of(HexFormat.of().parseHex("ff0100000002c9850000000000000000"));
        Gid unicast = Gid.of(HexFormat.of().parseHex("00000000000000000000ffffc6120001"));
        assertThatThrownBy(() -> MulticastGroups.check(QpType.UD, null, 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("mgid is null");
        assertThatThrownBy(() -> MulticastGroups.check(QpType.UD, unicast, 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("mgid ::ffff:198.18.0.1 is no multicast GID");
        for (int lid : new int[]{1, 0xbfff, 0xffff, 0x10000, -1}) {
            assertThatThrownBy(() -> MulticastGroups.check(QpType.UD, group, lid)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("is no multicast LID");
        }
        for (int lid : new int[]{0, 0xc000, 0xc001, 0xfffe}) {
            assertThatCode(() -> MulticastGroups.check(QpType.UD, group, lid)).doesNotThrowAnyException();
        }
    }

    @Test
    void theMulticastQpnIsTheIbOne() {
        assertThat(QueuePair.MULTICAST_QPN).isEqualTo(0xffffff);
    }
}
