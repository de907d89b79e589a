package dev.verbs4j.tools;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The one size syntax of the tools' own options. */
class SizesTest {

    @ParameterizedTest
    @CsvSource({"4096, 4096", "4k, 4096", "4K, 4096", "' 64k ', 65536", "1m, 1048576", "1M, 1048576", "2g, 2147483648",
            "0, 0"})
    void bytesWithBinarySuffixesInEitherCase(String text, long bytes) {
        assertThat(Sizes.parse(text)).isEqualTo(bytes);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "k", "-1", "+4", "4kb", "4 k", "0x10", "lots", "1.5m", "99999999999999999999",
            "9007199254740992k"})
    void anythingElseIsRefused(String text) {
        assertThatThrownBy(() -> Sizes.parse(text)).isInstanceOf(NumberFormatException.class);
    }
}
