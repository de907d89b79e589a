package dev.verbs4j.perf.tools;

import dev.verbs4j.verbs.TestBed;
import dev.verbs4j.verbs.ToolRunner;
import dev.verbs4j.verbs.ToolRunner.Background;
import dev.verbs4j.verbs.ToolRunner.Run;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the Java perftest tools say when a run fails, held against the C tool's words in the same
 * situation on Soft-RoCE: a host name that does not resolve (TCP, again at once, and {@code -R}), an address
 * nobody answers for with {@code -R} ({@code Received 10 times ADDR_ERROR}), and a client whose
 * iterations end before the server's, whose closing exchange fails.
 */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_2)
class PerftestMessagesDeviceTest {

    private static final Duration LIMIT = Duration.ofSeconds(120);
    private static final AtomicInteger PORTS = new AtomicInteger(19600);

    /** The first Java run in a JVM loads and compiles the Java side: not inside a timed case. */
    @BeforeAll
    static void warmUp() throws Exception {
        PerftestDeviceTest.warmUpOnce();
    }

    private static Background start(PerfTool tool, boolean java, List<String> args) throws Exception {
        if (java) {
            return ToolRunner.startJava(tool.java, "java " + tool.c, LIMIT, args.toArray(String[]::new));
        }
        List<String> cmd = new ArrayList<>(List.of("stdbuf", "-oL", tool.c, "-F"));
        cmd.addAll(args);
        return ToolRunner.startC("C " + tool.c, LIMIT, cmd.toArray(String[]::new));
    }

    /** A C side's stderr without its clock calibration's complaints. */
    private static List<String> errors(Run r) {
        return r.err().stream().filter(l -> !l.startsWith("Correlation coefficient")).toList();
    }

    /** The Java run {@code j} ended as the C run {@code c} did: the same status and the same words on stderr. */
    private static void assertSameEnd(Run c, Run j) {
        assertThat(j.status()).as(c + "\n" + j).isEqualTo(c.status());
        assertThat(j.err()).as(c + "\n" + j).isEqualTo(errors(c));
    }

    /** The C and the Java client with {@code args}, side by side, with no server: the same end; the C run. */
    private static Run clientsAlike(PerfTool tool, List<String> args) throws Exception {
        Background c = start(tool, false, args);
        Background j = start(tool, true, args);
        Run cr = c.await();
        Run jr = j.await();
        assertSameEnd(cr, jr);
        assertThat(jr.status()).as(cr + "\n" + jr).isNotZero();
        return cr;
    }

    /** {@link #clientsAlike} for the latency client with {@code -R} on host B's device, to {@code server}. */
    private static void rdmaCmClientsAlike(String server) throws Exception {
        clientsAlike(PerfTool.SEND_LAT, List.of("-R", "-d", TestBed.hostB().device(), "-p", String.valueOf(PORTS.getAndIncrement()),
                server));
    }

    @Test
    @Timeout(120)
    void unresolvableHost() throws Exception {
        TestBed.Host b = TestBed.hostB();
        List<String> tcp = List.of("-d", b.device(), "-p", String.valueOf(PORTS.getAndIncrement()), "no-such-host.invalid");
        Run c = clientsAlike(PerfTool.SEND_BW, tcp);
        // the same name again at once: for 10 s the JDK answers from its cache of failed lookups,
        // without getaddrinfo's words; C looks it up again and says the same as the first time
        Run again = ToolRunner.startJava(PerfTool.SEND_BW.java, "java ib_send_bw again", LIMIT, tcp.toArray(String[]::new))
                .await();
        assertSameEnd(c, again);
        rdmaCmClientsAlike("no-such-host.invalid");
    }

    @Test
    @Timeout(150)
    void unreachableAddressWithRdmaCm() throws Exception {
        // an address of the veth subnet that nobody holds: every address resolution fails
        rdmaCmClientsAlike("198.18.0.77");
    }

    @Test
    @Timeout(200)
    void clientEndsBeforeTheServer() throws Exception {
        // the C server waits for 100 iterations, the client stops after 50: its closing exchange fails
        TestBed.Host host = TestBed.loopback();
        List<Run> clients = new ArrayList<>();
        for (boolean java : new boolean[]{false, true}) {
            int port = PORTS.getAndIncrement();
            List<String> common = List.of("-p", String.valueOf(port), "-d", host.device(), "-x", String.valueOf(host.gidIndex()));
            List<String> serverArgs = new ArrayList<>(common);
            serverArgs.addAll(List.of("-n", "100"));
            Background s = start(PerfTool.SEND_LAT, false, serverArgs);
            try {
                ToolRunner.awaitTcpListening(port, LIMIT);
                List<String> clientArgs = new ArrayList<>(common);
                clientArgs.addAll(List.of("-n", "50", host.address()));
                Background client = start(PerfTool.SEND_LAT, java, clientArgs);
                // the client runs its 50 round trips and then waits for the server's closing
                // message, which never comes: the server is stopped once the client has had time
                // for them (it stays blocked however long it waits), and its socket closes
                Thread.sleep(20_000);
                s.stop();
                clients.add(client.await());
            } finally {
                s.stop();
            }
        }
        assertSameEnd(clients.get(0), clients.get(1));
    }
}
