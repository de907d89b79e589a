package dev.verbs4j.naaice;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code NAA_SPEC} parsing as the C middleware does it, and the binding of items to handles. */
class NaaSpecTest {

    @Test
    void parsesItemsLikeTheCLibrary() {
        NaaSpec s = NaaSpec.parse("10.3.10.42:12345:1:4,host-b::2:1,,bad:1:2,a:1:2:3:4,x:70000:3:0, 7 :+12x:-1:08");
        assertThat(s.items()).containsExactly(
                new NaaSpec.Item("10.3.10.42", 12345, 1, 4),
                new NaaSpec.Item("host-b", 12345, 2, 1),          // empty port: the default
                new NaaSpec.Item("x", 70000 & 0xffff, 3, 0),      // the port truncated to 16 bits
                new NaaSpec.Item(" 7 ", 12, 0xffff_ffffL, 8));    // strtol: sign, digits up to the first other character
    }

    @Test
    void strtolLikeC() {
        assertThat(NaaSpec.strtol("")).isZero();
        assertThat(NaaSpec.strtol("abc")).isZero();
        assertThat(NaaSpec.strtol("  42abc")).isEqualTo(42);
        assertThat(NaaSpec.strtol("-17")).isEqualTo(-17);
        assertThat(NaaSpec.strtol("99999999999999999999999")).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void noVariableMeansNoNaas() {
        assertThat(NaaSpec.parse(null).items()).isEmpty();
        assertThat(NaaSpec.parse("").items()).isEmpty();
    }

    @Test
    void eachItemServesOneHandleAtATime() {
        NaaSpec s = NaaSpec.parse("a:1:5:1,b:2:5:1,c:3:6:1");
        Object h1 = new Object();
        Object h2 = new Object();
        NaaSpec.Item first = s.bind(5, h1);
        assertThat(first.address()).isEqualTo("a");
        assertThat(s.bind(5, h2).address()).isEqualTo("b");
        assertThat(s.bind(5, new Object())).isNull();
        assertThat(s.boundCount()).isEqualTo(2);
        s.release(first, h2); // not the owner: nothing happens
        assertThat(s.boundCount()).isEqualTo(2);
        s.release(first, h1);
        assertThat(s.bind(5, new Object())).isSameAs(first);
        assertThat(s.bind(6, h1).address()).isEqualTo("c");
        assertThat(List.of(s.items().size())).containsExactly(3);
    }
}
