package dev.verbs4j.perf.tools;

import dev.verbs4j.verbs.TestBed;
import dev.verbs4j.verbs.ToolRunner;
import dev.verbs4j.verbs.ToolRunner.Background;
import dev.verbs4j.verbs.ToolRunner.Run;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * ib_send_bw's receive watchdog (perftest's {@code check_alive}, {@link AliveCheck}) against the C
 * tool's in the same run: a server with {@code -c RC} and a client with {@code -c UC} on Soft-RoCE,
 * whose sends the server's queue pair drops. The server ends with
 * {@code Total Received=0, Total Iters Required=200} and status 17, the client (its sends done)
 * with perftest's failed closing exchange; C/C, a Java server with a C client and a C server with a
 * Java client, each Java side held against the C side of its role.
 *
 * <p>perftest's watchdog is a SIGALRM handler that looks first 60 s after the loop starts. The
 * test does not wait for it: once the C server catches SIGALRM (its handler is installed as its
 * receive loop starts, shown in {@code /proc/PID/status}) it is sent one, as its own alarm would
 * be, and takes its look at once. The Java server looks after the period of
 * {@link AliveCheck#PERIOD_PROPERTY}, set to 1 s here.
 */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_2)
class PerftestWatchdogDeviceTest {

    private static final Duration LIMIT = Duration.ofSeconds(60);
    private static final AtomicInteger PORTS = new AtomicInteger(19700);
    /** SIGALRM's bit in the signal masks of /proc/PID/status. */
    private static final long SIGALRM_BIT = 1L << (14 - 1);

    @BeforeAll
    static void warmUp() throws Exception {
        PerftestDeviceTest.warmUpOnce();
    }

    @Test
    @Timeout(150)
    void unreliableClientOfAReliableServer() throws Exception {
        List<String> server = List.of("-c", "RC", "-n", "200");
        List<String> client = List.of("-c", "UC", "-n", "200");
        Run[] cc = pair(false, false, server, client);
        Run[] jc = pair(true, false, server, client);
        Run[] cj = pair(false, true, server, client);
        String all = "C/C:\n" + cc[0] + "\n" + cc[1] + "\nJava server:\n" + jc[0] + "\n" + jc[1]
                + "\nJava client:\n" + cj[0] + "\n" + cj[1];
        assertThat(cc[0].status()).as(all).isEqualTo(17);
        assertThat(errors(cc[0])).as(all).containsExactly(" Did not get Message for 120 Seconds, exiting..",
                " Total Received=0, Total Iters Required=200");
        // the Java server against the C server, the Java client against the C client
        assertThat(jc[0].status()).as(all).isEqualTo(cc[0].status());
        PerftestDeviceTest.sameLayout(jc[0], cc[0]);
        assertThat(cj[1].status()).as(all).isEqualTo(cc[1].status());
        PerftestDeviceTest.sameLayout(cj[1], cc[1]);
    }

    @Test
    @Timeout(120)
    void withCompletionEvents() throws Exception {
        // -e: perftest's handler cannot leave the event wait; it says so and exits with 1 at once
        List<String> server = List.of("-e", "-c", "RC", "-n", "200");
        List<String> client = List.of("-e", "-c", "UC", "-n", "200");
        Run[] cc = pair(false, false, server, client);
        Run[] jc = pair(true, false, server, client);
        String all = "C/C:\n" + cc[0] + "\n" + cc[1] + "\nJava server:\n" + jc[0] + "\n" + jc[1];
        assertThat(cc[0].status()).as(all).isEqualTo(1);
        assertThat(errors(cc[0])).as(all).containsExactly(" Did not get Message for 120 Seconds, exiting..",
                " Total Received=0, Total Iters Required=200",
                " Due to this issue, Perftest cannot produce a report when in event mode.");
        assertThat(jc[0].status()).as(all).isEqualTo(cc[0].status());
        PerftestDeviceTest.sameLayout(jc[0], cc[0]);
    }

    /** A pair on the loopback device: {server, client}; a C server is sent SIGALRM once it catches it. */
    private static Run[] pair(boolean javaServer, boolean javaClient, List<String> serverOpts, List<String> clientOpts)
            throws Exception {
        TestBed.Host host = TestBed.loopback();
        int port = PORTS.getAndIncrement();
        List<String> common = List.of("-p", String.valueOf(port), "-d", host.device(), "-x",
                String.valueOf(host.gidIndex()));
        List<String> serverArgs = new ArrayList<>(serverOpts);
        serverArgs.addAll(common);
        List<String> clientArgs = new ArrayList<>(clientOpts);
        clientArgs.addAll(common);
        clientArgs.add(host.address());
        if (javaServer) {
            System.setProperty(AliveCheck.PERIOD_PROPERTY, "1");
        }
        Background s = start(javaServer, "server", serverArgs);
        try {
            ToolRunner.awaitTcpListening(port, LIMIT);
            Background c = start(javaClient, "client", clientArgs);
            try {
                if (!javaServer) {
                    alarm(s.pid());
                }
                Run sr = s.await();
                return new Run[]{sr, c.await()};
            } finally {
                c.stop();
            }
        } finally {
            s.stop();
            System.clearProperty(AliveCheck.PERIOD_PROPERTY);
        }
    }

    /** Sends SIGALRM to {@code pid} as soon as it catches the signal (before, SIGALRM would end it). */
    private static void alarm(long pid) throws Exception {
        Path status = Path.of("/proc/" + pid + "/status");
        long deadline = System.nanoTime() + LIMIT.toNanos();
        while (!catchesAlarm(status)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("process " + pid + " did not catch SIGALRM within " + LIMIT);
            }
            Thread.sleep(50);
        }
        Process kill = new ProcessBuilder("kill", "-ALRM", String.valueOf(pid)).inheritIO().start();
        assertThat(kill.waitFor()).as("kill -ALRM " + pid).isZero();
    }

    private static boolean catchesAlarm(Path status) throws Exception {
        if (!Files.exists(status)) {
            throw new AssertionError(status + " is gone: the process ended before its watchdog was armed");
        }
        for (String line : Files.readAllLines(status)) {
            if (line.startsWith("SigCgt:")) {
                return (Long.parseUnsignedLong(line.substring(7).strip(), 16) & SIGALRM_BIT) != 0;
            }
        }
        return false;
    }

    private static Background start(boolean java, String role, List<String> args) throws Exception {
        PerfTool tool = PerfTool.SEND_BW;
        if (java) {
            return ToolRunner.startJava(tool.java, "java " + tool.c + " " + role, LIMIT, args.toArray(String[]::new));
        }
        List<String> cmd = new ArrayList<>(List.of("stdbuf", "-oL", tool.c, "-F"));
        cmd.addAll(args);
        return ToolRunner.startC("C " + tool.c + " " + role, LIMIT, cmd.toArray(String[]::new));
    }

    /** A C side's stderr without its clock calibration's complaints. */
    private static List<String> errors(Run r) {
        return r.err().stream().filter(l -> !l.startsWith("Correlation coefficient")).toList();
    }
}
