package dev.verbs4j.verbs;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.HexFormat;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** GID text forms as inet_ntop(3) and ibv_devinfo print them. */
class GidTest {

    @ParameterizedTest
    @CsvSource({
        "00000000000000000000ffff7f000001, ::ffff:127.0.0.1, 0000:0000:0000:0000:0000:ffff:7f00:0001",
        "fe800000000000000250b6fffe1c2d3e, fe80::250:b6ff:fe1c:2d3e, fe80:0000:0000:0000:0250:b6ff:fe1c:2d3e",
        "00000000000000000000000000000000, ::, 0000:0000:0000:0000:0000:0000:0000:0000",
        "00000000000000000000000000000001, ::1, 0000:0000:0000:0000:0000:0000:0000:0001",
        "20010db8000000000000000000000001, 2001:db8::1, 2001:0db8:0000:0000:0000:0000:0000:0001",
        "00010000000000000000000000000000, 1::, 0001:0000:0000:0000:0000:0000:0000:0000",
        "00000000000000000000000001020304, ::1.2.3.4, 0000:0000:0000:0000:0000:0000:0102:0304",
        "20010db8000000010000000000000001, 2001:db8:0:1::1, 2001:0db8:0000:0001:0000:0000:0000:0001",
        "20010db8000100000001000000000001, 2001:db8:1:0:1::1, 2001:0db8:0001:0000:0001:0000:0000:0001",
        "20010db8000000000001000000000000, 2001:db8:0:0:1::, 2001:0db8:0000:0000:0001:0000:0000:0000",
    })
    void printsLikeInetNtop(String hex, String text, String full) {
        Gid gid = Gid.of(HexFormat.of().parseHex(hex));
        assertThat(gid.toString()).isEqualTo(text);
        assertThat(gid.toHexString()).isEqualTo(full);
        assertThat(Gid.of(gid.raw())).isEqualTo(gid).hasSameHashCodeAs(gid);
    }

    @ParameterizedTest
    @CsvSource({"fe800000000000000250b6fffe1c2d3e, -108086391056891904, 166834396808883518"})
    void splitsIntoPrefixAndInterfaceId(String hex, long prefix, long interfaceId) {
        Gid gid = Gid.of(HexFormat.of().parseHex(hex));
        assertThat(gid.subnetPrefix()).isEqualTo(prefix);
        assertThat(gid.interfaceId()).isEqualTo(interfaceId);
        assertThat(gid.isZero()).isFalse();
    }

    @org.junit.jupiter.api.Test
    void rejectsWrongLength() {
        assertThatThrownBy(() -> Gid.of(new byte[15])).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("15");
    }
}
