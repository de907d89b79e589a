package dev.verbs4j.verbs;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/** The C value lookup shared by the enums that stand for C enums with printed names. */
class IntCodedTest {

    @ParameterizedTest
    @ValueSource(classes = {AtomicCapability.class, GidType.class, LinkLayer.class, Mtu.class, NodeType.class,
        PortState.class, TransportType.class})
    <E extends Enum<E> & IntCoded> void everyKnownCodeFindsItsConstantAndOthersAreUnknown(Class<E> type) {
        E unknown = Enum.valueOf(type, "UNKNOWN");
        for (E constant : type.getEnumConstants()) {
            if (constant != unknown) {
                assertThat(IntCoded.of(type, constant.code(), unknown)).isSameAs(constant);
                assertThat(constant.label()).isNotBlank();
            }
        }
        for (int code : new int[] {-1, Integer.MIN_VALUE, Integer.MAX_VALUE, 999, unknown.code()}) {
            assertThat(IntCoded.of(type, code, unknown)).isSameAs(unknown);
        }
    }

    @Test
    void publicLookupsKeepTheirResults() {
        assertThat(Mtu.of(3)).isSameAs(Mtu.MTU_1024);
        assertThat(Mtu.of(0)).isSameAs(Mtu.UNKNOWN);
        assertThat(NodeType.of(1)).isSameAs(NodeType.CA);
        assertThat(PortState.of(4)).isSameAs(PortState.ACTIVE);
        assertThat(LinkLayer.of(2)).isSameAs(LinkLayer.ETHERNET);
        assertThat(GidType.of(2)).isSameAs(GidType.ROCE_V2);
        assertThat(TransportType.of(1)).isSameAs(TransportType.IWARP);
        assertThat(AtomicCapability.of(7)).isSameAs(AtomicCapability.UNKNOWN);
    }

    @Test
    void eachConstantKeepsTheCodeAndNameItsConstructorDefined() {
        assertThat(Mtu.MTU_1024.code()).isEqualTo(3);
        assertThat(Mtu.MTU_1024.label()).isEqualTo("1024");
        assertThat(GidType.ROCE_V2.label()).isEqualTo("RoCE v2");
        assertThat(PortState.ACTIVE.label()).isEqualTo("PORT_ACTIVE");
        assertThat(TransportType.UNKNOWN.code()).isEqualTo(Integer.MIN_VALUE);
        assertThat(TransportType.UNKNOWN.label()).isEqualTo("unknown");
        assertThat(NodeType.UNSPECIFIED.code()).isEqualTo(7);
    }
}
