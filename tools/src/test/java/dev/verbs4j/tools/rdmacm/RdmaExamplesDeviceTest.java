package dev.verbs4j.tools.rdmacm;

import dev.verbs4j.verbs.TestBed;
import dev.verbs4j.verbs.ToolRunner;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The synchronous examples rdma_server / rdma_client in Java against rdmacm-utils' C ones, both
 * ways round, and Java against Java, on host B's and on host A's address. The C programs have no
 * source-address option: the client reaches the server over the device that owns its address.
 */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_1)
class RdmaExamplesDeviceTest {

    static Stream<Arguments> runs() {
        return RPingDeviceTest.pairings(List.of("B", "A"), 20_430).stream();
    }

    @ParameterizedTest(name = "{0} rdma_client -> {1} rdma_server, host {2}")
    @MethodSource("runs")
    void exchange(String client, String server, String host, int port) throws Exception {
        String address = (host.equals("A") ? TestBed.hostA() : TestBed.hostB()).address();
        String[] args = {"-s", address, "-p", String.valueOf(port)};
        ToolRunner.Exchange runs = ToolRunner.cmServerAndClient(
                () -> server.equals("Java")
                        ? ToolRunner.startJava(RdmaServerExample::run, "Java rdma_server", RPingDeviceTest.RUN_LIMIT, args)
                        : ToolRunner.startC("C rdma_server", RPingDeviceTest.RUN_LIMIT, "rdma_server", args[0], args[1], args[2], args[3]),
                port, RPingDeviceTest.LISTEN_LIMIT,
                () -> client.equals("Java")
                        ? ToolRunner.startJava(RdmaClientExample::run, "Java rdma_client", RPingDeviceTest.RUN_LIMIT, args)
                        : ToolRunner.startC("C rdma_client", RPingDeviceTest.RUN_LIMIT, "rdma_client", args[0], args[1], args[2], args[3]))
                .succeeded();
        ToolRunner.Run clientRun = runs.client();
        ToolRunner.Run serverRun = runs.server();
        assertThat(clientRun.out()).as("%s", clientRun).containsExactly("rdma_client: start", "rdma_client: end 0");
        assertThat(serverRun.out()).as("%s", serverRun).containsExactly("rdma_server: start", "rdma_server: end 0");
    }
}
