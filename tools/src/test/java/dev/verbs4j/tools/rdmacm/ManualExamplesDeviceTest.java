package dev.verbs4j.tools.rdmacm;

import dev.verbs4j.rdmacm.EventChannel;
import dev.verbs4j.verbs.TestBed;
import dev.verbs4j.verbs.ToolRunner;
import dev.verbs4j.verbs.ToolRunner.Background;
import dev.verbs4j.verbs.ToolRunner.Run;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The manual's {@code mc} and {@code srq} examples on Soft-RoCE: mc between Java ends and with
 * librdmacm's {@code mckey} on the other end (both speak SEND_WITH_IMM to the group's QPN and
 * Q_Key), on one device and across the two test hosts; srq with four queue pairs sharing one SRQ.
 */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_1)
class ManualExamplesDeviceTest {

    private static final Duration LIMIT = Duration.ofSeconds(120);

    @BeforeAll
    static void warmUp() {
        EventChannel.create().close();
    }

    @ParameterizedTest(name = "mc receiver {0}, sender {1}, {2}")
    @CsvSource({
            "mc, mc, same, 239.0.1.1", "mc, mc, across, 239.0.1.2",
            "mc, mckey, across, 239.0.1.3", "mckey, mc, across, 239.0.1.4"})
    void mc(String receiverTool, String senderTool, String where, String group) throws Exception {
        TestBed.Host b = TestBed.hostB();
        String senderAddress = where.equals("across") ? TestBed.hostA().address() : b.address();
        Background receiver = start(receiverTool, "receiver", List.of("-m", group, "-b", b.address()), senderTool.equals("mc"));
        Run r;
        Run s;
        try {
            // the receiver joins and posts its receives first (mc's sender sends as soon as it has joined)
            Thread.sleep(4000);
            s = start(senderTool, "sender", List.of("-m", group, "-b", senderAddress, "-s"), false).await();
            r = receiver.await();
        } finally {
            receiver.stop();
        }
        assertThat(s.status()).as("%s\n%s", s, r).isZero();
        assertThat(r.status()).as("%s\n%s", r, s).isZero();
        String joined = (receiverTool.equals("mc") ? "mc" : "mckey") + ": joined dgid: ::ffff:" + group + " mlid 0x0 sl 0";
        assertThat(r.out()).as("%s", r).contains(joined);
        if (receiverTool.equals("mc")) {
            assertThat(r.out()).as("%s", r).containsSubsequence(
                    "received message 1", "received message 2", "received message 3", "received message 4", "mc: left the group");
        } else {
            assertThat(r.out()).as("%s", r).contains("data transfers complete", "return status 0");
        }
        if (senderTool.equals("mc")) {
            assertThat(s.out()).as("%s", s).containsSubsequence(
                    "sent message 1", "sent message 2", "sent message 3", "sent message 4", "mc: left the group");
        }
    }

    @Test
    void mcRefusesMessagesLargerThanTheMtu() {
        java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
        int rc = Mc.run(new String[]{"-m", "239.0.1.9", "-b", TestBed.hostB().address(), "-l", "100000"},
                new java.io.PrintStream(new java.io.ByteArrayOutputStream()), new java.io.PrintStream(err));
        assertThat(rc).isEqualTo(1);
        assertThat(err.toString()).startsWith("mc: message length 100000 is larger than the active MTU ");
    }

    @Test
    void srqSpreadsReceivesOverItsQueuePairs() throws Exception {
        String server = TestBed.hostB().address();
        Background s = ToolRunner.startJava(Srq::run, "java srq server", LIMIT, "-s", "-a", server, "-p", "51217",
                "-c", "100", "-l", "10000", "-w", "16");
        Run c;
        Run sr;
        try {
            ToolRunner.awaitCmListening(51217, Duration.ofSeconds(60));
            c = ToolRunner.startJava(Srq::run, "java srq client", LIMIT, "-a", server, "-p", "51217",
                    "-c", "100", "-l", "10000", "-w", "16").await();
            sr = s.await();
        } finally {
            s.stop();
        }
        assertThat(c.status()).as("%s\n%s", c, sr).isZero();
        assertThat(sr.status()).as("%s\n%s", sr, c).isZero();
        List<String> recv = sr.out().stream().filter(l -> l.startsWith("recv count: ")).toList();
        List<String> sent = c.out().stream().filter(l -> l.startsWith("send count: ")).toList();
        assertThat(recv).hasSize(100);
        assertThat(sent).hasSize(100);
        assertThat(recv).extracting(l -> l.substring(0, l.indexOf(','))).containsExactlyElementsOf(
                IntStream.rangeClosed(1, 100).mapToObj(i -> "recv count: " + i).toList());
        Set<String> serverQps = new TreeSet<>();
        recv.forEach(l -> serverQps.add(l.substring(l.indexOf("qp_num: ") + 8)));
        Set<String> clientQps = new TreeSet<>();
        sent.forEach(l -> clientQps.add(l.substring(l.indexOf("qp num: ") + 8)));
        assertThat(serverQps).as("the receives come through every queue pair").hasSize(4);
        assertThat(clientQps).as("the sends go round-robin over every queue pair").hasSize(4);
    }

    private static Background start(String tool, String who, List<String> args, boolean verify) throws Exception {
        if (tool.equals("mc")) {
            List<String> mcArgs = new ArrayList<>(args);
            if (verify) {
                mcArgs.add("-V"); // mckey's sender sends an unset buffer: check the bytes only when mc sends
            }
            return ToolRunner.startJava(Mc::run, "java mc " + who, LIMIT, mcArgs.toArray(String[]::new));
        }
        List<String> cmd = new ArrayList<>(List.of("mckey", "-C", "4", "-S", "64"));
        cmd.addAll(args);
        return ToolRunner.startC("c mckey " + who, LIMIT, cmd.toArray(String[]::new));
    }
}
