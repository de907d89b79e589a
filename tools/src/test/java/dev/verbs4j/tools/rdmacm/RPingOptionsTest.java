package dev.verbs4j.tools.rdmacm;

import dev.verbs4j.verbs.ToolRunner;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * rping's command line refusals, with the C program's output and exit statuses, and the pieces of
 * its protocol that need no device: the buffer advert on the wire and the ping states.
 */
class RPingOptionsTest {

    private static final String USAGE_START = "rping -s [-vVd] [-S size] [-C count] [-a addr] [-p port]\n";
    private static final String NO_HOST = "getaddrinfo failed (Name or service not known) - invalid hostname or IP address\n";

    private static ToolRunner.Captured rping(String... args) {
        return ToolRunner.runJava(RPing::run, args);
    }

    @Test
    void neitherSideNorAnUnknownOptionPrintsTheUsage() {
        for (String[] args : new String[][]{{}, {"-x"}, {"-s", "-t", "3"}}) {
            ToolRunner.Captured r = rping(args);
            assertThat(r.status()).as("%s", (Object) args).isEqualTo(22);
            assertThat(r.out()).startsWith(USAGE_START).endsWith("\t-q\t\tuse self-created, self-modified QP\n");
            assertThat(r.err()).isEmpty();
        }
    }

    @Test
    void sizeAndCountOutOfRangeAreRefusedWithEinval() {
        ToolRunner.Captured r = rping("-d", "-c", "-C", "-1", "-S", "99999");
        assertThat(r.status()).isEqualTo(22);
        assertThat(r.out()).isEqualTo("client\n");
        assertThat(r.err()).isEqualTo("Invalid count -1\nInvalid size 99999 (valid range is 26 to 65536)\n");
        assertThat(rping("-c", "-S", "25").err()).isEqualTo("Invalid size 25 (valid range is 26 to 65536)\n");
    }

    @Test
    void anUnknownHostExitsWith255AfterTheOtherOptions() {
        ToolRunner.Captured r = rping("-c", "-a", "no-such-host.invalid", "-I", "no-such-host.invalid");
        assertThat(r.status()).isEqualTo(255);
        assertThat(r.out()).isEqualTo(NO_HOST + NO_HOST);
        assertThat(r.err()).isEmpty();
        // the last refusal gives the status
        assertThat(rping("-c", "-a", "no-such-host.invalid", "-S", "3").status()).isEqualTo(22);
    }

    @Test
    void theAdvertIsBigEndianAddressRkeyLength() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment message = arena.allocate(RdmaInfo.SIZE);
            new RdmaInfo(0x0102030405060708L, 0x090a0b0c, 64).writeTo(message);
            assertThat(message.toArray(ValueLayout.JAVA_BYTE)).containsExactly(
                    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0, 0, 0, 64);
            assertThat(RdmaInfo.readFrom(message)).isEqualTo(new RdmaInfo(0x0102030405060708L, 0x090a0b0c, 64));
        }
    }

    @Test
    void theStatesFollowThePingRoundAsTheCProgramNumbersThem() {
        assertThat(PingState.IDLE.code()).isEqualTo(1);
        assertThat(PingState.DISCONNECTED.code()).isEqualTo(10);
        assertThat(PingState.CONNECT_REQUEST.afterServerReceive()).isEqualTo(PingState.RDMA_READ_ADV);
        assertThat(PingState.RDMA_READ_COMPLETE.afterServerReceive()).isEqualTo(PingState.RDMA_WRITE_ADV);
        assertThat(PingState.RDMA_WRITE_COMPLETE.afterServerReceive()).isEqualTo(PingState.RDMA_READ_ADV);
        assertThat(PingState.RDMA_READ_ADV.afterClientReceive()).isEqualTo(PingState.RDMA_WRITE_ADV);
        assertThat(PingState.RDMA_WRITE_ADV.afterClientReceive()).isEqualTo(PingState.RDMA_WRITE_COMPLETE);
    }
}
