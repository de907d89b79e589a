package dev.verbs4j.tools.rdmacm;

import dev.verbs4j.verbs.TestBed;
import dev.verbs4j.verbs.ToolRunner;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * rping in Java against rdmacm-utils' C rping, both ways round, and Java against Java; "loopback"
 * with both ends on host B's address (one device), "across" with the client bound to host A's
 * address (-I) and the server on host B's. Three pings, data printed with -v and compared.
 */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_1)
class RPingDeviceTest {

    /** One side's limit: the first use of the library in the VM's JVM alone takes ~15 s. */
    static final Duration RUN_LIMIT = Duration.ofSeconds(150);
    static final Duration LISTEN_LIMIT = Duration.ofSeconds(90);
    private static final int PINGS = 3;

    /**
     * For each of {@code places}: a Java client with a C server, a C client with a Java server and
     * Java with Java, as (client, server, place, port), on ports from {@code firstPort} up.
     */
    static List<Arguments> pairings(List<String> places, int firstPort) {
        List<Arguments> runs = new ArrayList<>();
        int port = firstPort;
        for (String place : places) {
            for (String[] sides : new String[][]{{"Java", "C"}, {"C", "Java"}, {"Java", "Java"}}) {
                runs.add(Arguments.of(sides[0], sides[1], place, port++));
            }
        }
        return runs;
    }

    static Stream<Arguments> runs() {
        List<Arguments> runs = pairings(List.of("loopback", "across"), 20_410);
        int port = 20_416;
        // -q: the Java side creates its queue pair itself and moves it with rdma_init_qp_attr
        runs.add(Arguments.of("Java -q", "C", "across", port++));
        runs.add(Arguments.of("C", "Java -q", "across", port++));
        runs.add(Arguments.of("Java -q", "Java -q", "across", port++));
        return runs.stream();
    }

    @ParameterizedTest(name = "{0} client -> {1} server, {2}")
    @MethodSource("runs")
    void pings(String client, String server, String topology, int port) throws Exception {
        String b = TestBed.hostB().address();
        List<String> serverArgs = new ArrayList<>(List.of("-s", "-a", b, "-p", String.valueOf(port), "-v"));
        if (server.endsWith(" -q")) {
            serverArgs.add("-q");
        }
        List<String> clientArgs = new ArrayList<>(List.of("-c", "-a", b, "-p", String.valueOf(port), "-C", String.valueOf(PINGS), "-v", "-V"));
        if (topology.equals("across")) {
            clientArgs.addAll(List.of("-I", TestBed.hostA().address()));
        }
        if (client.endsWith(" -q")) {
            clientArgs.add("-q");
        }
        ToolRunner.Exchange runs = ToolRunner.cmServerAndClient(
                () -> start(server, "rping server", serverArgs.toArray(String[]::new)), port, LISTEN_LIMIT,
                () -> start(client, "rping client", clientArgs.toArray(String[]::new))).succeeded();
        assertThat(runs.client().out()).as("%s", runs.client()).containsExactlyElementsOf(pingLines("ping data: "));
        assertThat(runs.server().out()).as("%s", runs.server()).containsExactlyElementsOf(pingLines("server ping data: "));
    }

    /** -P: the Java server serves a C client, then a Java one, each on its own connection, until it is stopped. */
    @Test
    void persistentServerServesOneClientAfterAnother() throws Exception {
        String b = TestBed.hostB().address();
        String port = "20425";
        ToolRunner.Background s = start("Java", "rping -P server", "-s", "-P", "-a", b, "-p", port, "-v");
        List<ToolRunner.Run> clients = new ArrayList<>();
        try {
            ToolRunner.awaitCmListening(Integer.parseInt(port), LISTEN_LIMIT);
            for (String client : List.of("C", "Java")) {
                ToolRunner.Background c = start(client, "rping client", "-c", "-a", b, "-p", port, "-C", String.valueOf(PINGS), "-v", "-V");
                try {
                    clients.add(c.await());
                } finally {
                    c.stop();
                }
            }
            assertThat(s.isAlive()).as("the persistent server is still serving").isTrue();
        } finally {
            s.stop();
        }
        ToolRunner.Run serverRun = s.await();
        List<String> expected = pingLines("ping data: ");
        List<String> expectedServer = new ArrayList<>(pingLines("server ping data: "));
        for (ToolRunner.Run c : clients) {
            assertThat(c.status()).as("%s\n%s", c, serverRun).isZero();
            assertThat(c.out()).as("%s", c).containsExactlyElementsOf(expected);
        }
        expectedServer.addAll(List.copyOf(expectedServer));
        assertThat(serverRun.out()).as("%s", serverRun).containsExactlyElementsOf(expectedServer);
    }

    /** The lines -v prints for the {@value #PINGS} pings of 64 bytes, each after {@code prefix}. */
    private static List<String> pingLines(String prefix) {
        List<String> lines = new ArrayList<>();
        for (int ping = 0; ping < PINGS; ping++) {
            lines.add(prefix + pingData(ping, 64));
        }
        return lines;
    }

    private static ToolRunner.Background start(String impl, String who, String... args) throws Exception {
        if (impl.startsWith("Java")) {
            return ToolRunner.startJava(RPing::run, "Java " + who, RUN_LIMIT, args);
        }
        String[] cmd = new String[args.length + 1];
        cmd[0] = "rping";
        System.arraycopy(args, 0, cmd, 1, args.length);
        return ToolRunner.startC("C " + who, RUN_LIMIT, cmd);
    }

    /** What rping's client puts in its buffer for ping {@code n}: the header, then letters A..z round. */
    static String pingData(int n, int size) {
        StringBuilder sb = new StringBuilder("rdma-ping-" + n + ": ");
        int c = 65 + n % 58;
        while (sb.length() < size - 1) {
            sb.append((char) c);
            c = c == 122 ? 65 : c + 1;
        }
        return sb.toString();
    }
}
