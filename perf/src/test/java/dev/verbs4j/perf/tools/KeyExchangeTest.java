package dev.verbs4j.perf.tools;

import org.junit.jupiter.api.Test;

import java.net.UnknownHostException;

import static org.assertj.core.api.Assertions.assertThat;

/** The words of a failed name lookup, as getaddrinfo gave them, also when the JDK answers from its cache. */
class KeyExchangeTest {

    @Test
    void aCachedFailureKeepsTheWordsOfTheFirst() {
        String host = "cached-failure.invalid";
        // the JDK's first failure carries gai_strerror's text, its cached ones only the name
        assertThat(KeyExchange.nameResolutionError(new UnknownHostException(host + ": Temporary failure in name resolution"),
                host)).isEqualTo("Temporary failure in name resolution");
        assertThat(KeyExchange.nameResolutionError(new UnknownHostException(host), host))
                .isEqualTo("Temporary failure in name resolution");
        assertThat(KeyExchange.nameResolutionError(new UnknownHostException(host + ": Name or service not known"), host))
                .isEqualTo("Name or service not known");
        assertThat(KeyExchange.nameResolutionError(new UnknownHostException(host), host))
                .isEqualTo("Name or service not known");
    }
}
