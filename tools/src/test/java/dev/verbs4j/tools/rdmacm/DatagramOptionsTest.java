package dev.verbs4j.tools.rdmacm;

import dev.verbs4j.verbs.ToolRunner;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** udaddy's and mckey's command line refusals, with the C programs' output and exit statuses. */
class DatagramOptionsTest {

    private static ToolRunner.Captured udaddy(String... args) {
        return ToolRunner.runJava(UdAddy::run, args);
    }

    private static ToolRunner.Captured mckey(String... args) {
        return ToolRunner.runJava(McKey::run, args);
    }

    @Test
    void anUnknownPortSpaceIsRefused() {
        assertThat(udaddy("-p", "99")).isEqualTo(new ToolRunner.Captured(1, "", "udaddy: unknown port space 99\n"));
        assertThat(mckey("-m", "239.0.0.1", "-p", "0x3")).isEqualTo(new ToolRunner.Captured(1, "", "mckey: unknown port space 0x3\n"));
    }

    @Test
    void anUnknownOptionPrintsTheUsage() {
        ToolRunner.Captured u = udaddy("-c", "2", "-q");
        assertThat(u.status()).isEqualTo(1);
        assertThat(u.out()).startsWith("usage: udaddy\n\t[-s server_address]\n")
                .endsWith("\t[-p port_space - 0x111 for UDP (default), 0x2 for IPOIB]\n");
        ToolRunner.Captured m = mckey("-S", "10", "-q");
        assertThat(m.status()).isEqualTo(1);
        assertThat(m.out()).startsWith("usage: mckey\n\t-m multicast_address\n")
                .endsWith("\t[-l join without multicast loopback]\n");
    }

    @Test
    void udaddyRefusesGidAddresses() {
        assertThat(udaddy("-f", "gid")).isEqualTo(new ToolRunner.Captured(1, "", "udaddy: AF_IB (gid) addresses are not supported\n"));
    }

    @Test
    void mckeyNeedsAGroupAndABindAddressForUnmappedOnes() {
        assertThat(mckey("-s").out()).startsWith("usage: mckey\n");
        assertThat(mckey("-s").status()).isEqualTo(1);
        assertThat(mckey("-M", "1.2.3.4")).isEqualTo(
                new ToolRunner.Captured(1, "unmapped multicast address requires binding to source address\n", ""));
    }

    @Test
    void countsReadAsCsAtoi() {
        assertThat(DatagramTest.atoi(" 12abc")).isEqualTo(12);
        assertThat(DatagramTest.atoi("-3")).isEqualTo(-3);
        assertThat(DatagramTest.atoi("+")).isZero();
        assertThat(DatagramTest.atoi("x")).isZero();
    }
}
