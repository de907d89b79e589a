package dev.verbs4j.perf.tools;

import dev.verbs4j.perf.tools.PerftestDeviceTest.Topology;
import dev.verbs4j.verbs.TestBed;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.StandardProtocolFamily;
import java.nio.channels.DatagramChannel;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Multicast ({@code -g}, {@code -M}) of ib_send_bw and ib_send_lat between the two hosts of the
 * test bed, against the C tools in both directions: each Java side ends as the C side of its role in
 * a C/C pair with the same options, with the same status, stderr and stdout layout.
 *
 * <p>On Soft-RoCE a group reaches a host only when its IPv4 layer has joined the group on that
 * interface (rxe programs the link-layer address alone), so the groups here are IPv4 groups
 * ({@code ::ffff:239.x.y.z}) that this JVM joins on the receiving host's interface. perftest's
 * default group (ff01::, interface-local) never leaves a host, and with IPv4-mapped GIDs (-x)
 * perftest ends at its GID type check.
 */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_3)
class PerftestMulticastDeviceTest {

    private static final String GROUP_1 = "0:0:0:0:0:0:0:0:0:0:255:255:239:1:1:1";
    private static final String GROUP_2 = "0:0:0:0:0:0:0:0:0:0:255:255:239:1:1:2";

    @BeforeAll
    static void warmUp() throws Exception {
        PerftestDeviceTest.warmUpOnce();
    }

    /** The IPv4 membership of group 239.1.1.{@code last} on the interface of {@code host}, until closed. */
    private static DatagramChannel join(TestBed.Host host, int last) throws IOException {
        NetworkInterface nif = NetworkInterface.getByInetAddress(InetAddress.getByName(host.address()));
        DatagramChannel ch = DatagramChannel.open(StandardProtocolFamily.INET).bind(new InetSocketAddress(0));
        ch.join(InetAddress.getByAddress(new byte[]{(byte) 239, 1, 1, (byte) last}), nif);
        return ch;
    }

    /** C/C, then each Java side against a C peer: each Java side ends, prints and complains as the C side of its role. */
    private static void sameAsC(PerfTool tool, List<String> serverOpts, List<String> clientOpts, boolean bothEnd)
            throws Exception {
        AgainstC r = AgainstC.run(tool, Topology.HOSTS, serverOpts, clientOpts);
        if (bothEnd) {
            assertThat(r.cc().client().status()).as(r.all()).isZero();
            assertThat(r.cc().server().status()).as(r.all()).isZero();
        }
        r.assertSameAsC(PerftestDeviceTest::errors);
    }

    @Test
    @Timeout(170)
    void sendBandwidthToAnIpv4Group() throws Exception {
        try (DatagramChannel server = join(TestBed.hostA(), 1)) {
            List<String> opts = List.of("-g", "-M", GROUP_1, "-n", "10");
            sameAsC(PerfTool.SEND_BW, opts, opts, true);
        }
    }

    @Test
    @Timeout(170)
    void sendLatencyEachSideItsGroup() throws Exception {
        // each side attaches its own group and sends to the other's: different -M, or a side hears itself
        try (DatagramChannel server = join(TestBed.hostA(), 1); DatagramChannel client = join(TestBed.hostB(), 2)) {
            sameAsC(PerfTool.SEND_LAT, List.of("-g", "-M", GROUP_1, "-n", "10"), List.of("-g", "-M", GROUP_2, "-n", "10"), true);
        }
    }

    @Test
    @Timeout(170)
    void theDefaultGroupFailsTheGidTypeCheckWithIpv4MappedGids() throws Exception {
        // the server's description carries ff01:0:0:2:c985::, the client's GID is IPv4-mapped; perftest's server
        // then destroys its attached queue pair without detaching it, and says so
        sameAsC(PerfTool.SEND_BW, List.of("-g", "-n", "10"), List.of("-g", "-n", "10"), false);
    }
}
