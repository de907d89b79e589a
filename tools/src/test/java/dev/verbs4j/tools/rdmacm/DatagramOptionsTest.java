package dev.verbs4j.tools.rdmacm;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;

/** udaddy's and mckey's command line refusals, with the C programs' output and exit statuses. */
class DatagramOptionsTest {

    private record Result(int status, String out, String err) {
    }

    private static Result run(Function<PrintStream[], Integer> tool) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = tool.apply(new PrintStream[]{
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8)});
        return new Result(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    private static Result udaddy(String... args) {
        return run(s -> UdAddy.run(args, s[0], s[1]));
    }

    private static Result mckey(String... args) {
        return run(s -> McKey.run(args, s[0], s[1]));
    }

    @Test
    void anUnknownPortSpaceIsRefused() {
        assertThat(udaddy("-p", "99")).isEqualTo(new Result(1, "", "udaddy: unknown port space 99\n"));
        assertThat(mckey("-m", "239.0.0.1", "-p", "0x3")).isEqualTo(new Result(1, "", "mckey: unknown port space 0x3\n"));
    }

    @Test
    void anUnknownOptionPrintsTheUsage() {
        Result u = udaddy("-c", "2", "-q");
        assertThat(u.status()).isEqualTo(1);
        assertThat(u.out()).startsWith("usage: udaddy\n\t[-s server_address]\n")
                .endsWith("\t[-p port_space - 0x111 for UDP (default), 0x2 for IPOIB]\n");
        Result m = mckey("-S", "10", "-q");
        assertThat(m.status()).isEqualTo(1);
        assertThat(m.out()).startsWith("usage: mckey\n\t-m multicast_address\n")
                .endsWith("\t[-l join without multicast loopback]\n");
    }

    @Test
    void udaddyRefusesGidAddresses() {
        assertThat(udaddy("-f", "gid")).isEqualTo(new Result(1, "", "udaddy: AF_IB (gid) addresses are not supported\n"));
    }

    @Test
    void mckeyNeedsAGroupAndABindAddressForUnmappedOnes() {
        assertThat(mckey("-s").out()).startsWith("usage: mckey\n");
        assertThat(mckey("-s").status()).isEqualTo(1);
        assertThat(mckey("-M", "1.2.3.4")).isEqualTo(
                new Result(1, "unmapped multicast address requires binding to source address\n", ""));
    }

    @Test
    void countsReadAsCsAtoi() {
        assertThat(DatagramTest.atoi(" 12abc")).isEqualTo(12);
        assertThat(DatagramTest.atoi("-3")).isEqualTo(-3);
        assertThat(DatagramTest.atoi("+")).isZero();
        assertThat(DatagramTest.atoi("x")).isZero();
    }
}
