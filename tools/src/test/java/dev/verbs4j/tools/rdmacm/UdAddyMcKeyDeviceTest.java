package dev.verbs4j.tools.rdmacm;

import dev.verbs4j.rdmacm.EventChannel;
import dev.verbs4j.verbs.TestBed;
import dev.verbs4j.verbs.ToolRunner;
import dev.verbs4j.verbs.ToolRunner.Background;
import dev.verbs4j.verbs.ToolRunner.Run;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * udaddy and mckey, Java and C in every pairing: on one device (both ends on host B's address)
 * and across the two test hosts (A to B).
 */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_1)
class UdAddyMcKeyDeviceTest {

    private static final Duration LIMIT = Duration.ofSeconds(120);
    private static final int UDADDY_PORT = 7174;

    @BeforeAll
    static void warmUp() {
        // The first use of the library in a JVM is slow; keep that out of the timed exchanges.
        EventChannel.create().close();
    }

    private static Background start(String lang, String tool, String who, List<String> args) throws Exception {
        String[] a = args.toArray(String[]::new);
        if (lang.equals("java")) {
            return ToolRunner.startJava(tool.equals("udaddy") ? UdAddy::run : McKey::run, "java " + tool + " " + who, LIMIT, a);
        }
        List<String> cmd = new ArrayList<>();
        cmd.add(tool);
        cmd.addAll(args);
        return ToolRunner.startC("c " + tool + " " + who, LIMIT, cmd.toArray(String[]::new));
    }

    @ParameterizedTest(name = "udaddy server {0}, client {1}, {2}")
    @CsvSource({
            "java, java, across", "java, c, across", "c, java, across",
            "java, java, same", "java, c, same", "c, java, same"})
    void udaddy(String serverLang, String clientLang, String where) throws Exception {
        TestBed.Host b = TestBed.hostB();
        Background server = start(serverLang, "udaddy", "server", List.of("-b", b.address()));
        Run c;
        Run s;
        try {
            ToolRunner.awaitCmListening(UDADDY_PORT, Duration.ofSeconds(60));
            List<String> clientArgs = new ArrayList<>(List.of("-s", b.address()));
            if (where.equals("across")) {
                clientArgs.addAll(List.of("-b", TestBed.hostA().address()));
            }
            c = start(clientLang, "udaddy", "client", clientArgs).await();
            s = server.await();
        } finally {
            server.stop();
        }
        assertThat(c.status()).as("%s\n%s", c, s).isZero();
        assertThat(s.status()).as("%s\n%s", s, c).isZero();
        assertThat(c.out()).as("%s", c).containsExactly("udaddy: starting client", "udaddy: connecting",
                "initiating data transfers", "receiving data transfers", "data transfers complete", "test complete",
                "return status 0");
        assertThat(s.out()).as("%s", s).containsExactly("udaddy: starting server", "receiving data transfers",
                "sending replies", "data transfers complete", "test complete", "return status 0");
    }

    @ParameterizedTest(name = "mckey receiver {0}, sender {1}, {2}")
    @CsvSource({
            "java, java, same, 239.0.0.11", "java, c, same, 239.0.0.12", "c, java, same, 239.0.0.13",
            "java, java, across, 239.0.0.14", "java, c, across, 239.0.0.15", "c, java, across, 239.0.0.16"})
    void mckey(String receiverLang, String senderLang, String where, String group) throws Exception {
        TestBed.Host b = TestBed.hostB();
        String senderAddress = where.equals("across") ? TestBed.hostA().address() : b.address();
        Background receiver = start(receiverLang, "mckey", "receiver", List.of("-m", group, "-b", b.address()));
        Run r;
        Run s;
        try {
            // The receiver must have joined and posted its receives before the sender's messages go;
            // the sender itself pauses 3 s after joining.
            Thread.sleep(4000);
            s = start(senderLang, "mckey", "sender", List.of("-m", group, "-b", senderAddress, "-s")).await();
            r = receiver.await();
        } finally {
            receiver.stop();
        }
        String joined = "mckey: joined dgid: ::ffff:" + group + " mlid 0x0 sl 0";
        assertThat(s.status()).as("%s\n%s", s, r).isZero();
        assertThat(r.status()).as("%s\n%s", r, s).isZero();
        assertThat(s.out()).as("%s", s).containsExactly("mckey: starting client", "mckey: joining", joined,
                "initiating data transfers", "data transfers complete", "test complete", "return status 0");
        assertThat(r.out()).as("%s", r).containsExactly("mckey: starting server", "mckey: joining", joined,
                "receiving data transfers", "data transfers complete", "test complete", "return status 0");
    }
}
