package dev.verbs4j.perf.tools;

import org.junit.jupiter.api.Test;

import java.io.PrintStream;

import static org.assertj.core.api.Assertions.assertThat;

/** perftest's multicast groups: the default one of each side, -M's text as perftest reads it, the header lines. */
class MulticastTest {

    private static PerfOptions parsed(PerfOptions.Kind kind, String... args) {
        PerfOptions o = new PerfOptions(kind == PerfOptions.Kind.BW ? "ib_send_bw" : "ib_send_lat", PerfOptions.Verb.SEND, kind);
        PrintStream sink = new PrintStream(java.io.OutputStream.nullOutputStream());
        assertThat(o.parse(args, sink, sink)).isNull();
        return o;
    }

    @Test
    void theDefaultGroupIsPerftestsAndTheClientsLastByteIsOneMore() {
        PerfOptions server = parsed(PerfOptions.Kind.LAT, "-g");
        PerfOptions client = parsed(PerfOptions.Kind.LAT, "-g", "198.18.0.1");
        assertThat(Multicast.group(server)).containsExactly(0xff, 1, 0, 0, 0, 2, 0xc9, 0x85, 0, 0, 0, 0, 0, 0, 0, 0);
        assertThat(Multicast.group(client)).containsExactly(0xff, 1, 0, 0, 0, 2, 0xc9, 0x85, 0, 0, 0, 0, 0, 0, 0, 1);
        assertThat(Multicast.group(parsed(PerfOptions.Kind.LAT, "-g", "-M", "0:0:0:0:0:0:0:0:0:0:255:255:239:1:1:1",
                "198.18.0.1"))).as("-M is taken as it is by both sides").containsExactly(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 239, 1, 1, 1);
    }

    @Test
    void whoAttaches() {
        assertThat(Multicast.attaches(parsed(PerfOptions.Kind.BW, "-g"))).isTrue();
        assertThat(Multicast.attaches(parsed(PerfOptions.Kind.BW, "-g", "198.18.0.1"))).isFalse();
        assertThat(Multicast.attaches(parsed(PerfOptions.Kind.LAT, "-g", "198.18.0.1"))).isTrue();
        assertThat(Multicast.attaches(parsed(PerfOptions.Kind.LAT))).isFalse();
        assertThat(parsed(PerfOptions.Kind.BW, "-g").connection).isEqualTo("UD");
    }

    @Test
    void mgidFieldsAreReadAsStrtollReadsThem() {
        assertThat(Multicast.parse("0xff:0x0e:010:8:a:-1:256:257: 7:+3:0x:1x:0:0:0:0")).containsExactly(
                0xff, 0x0e, 8, 8, 0, 0xff, 0, 1, 7, 3, 0, 1, 0, 0, 0, 0);
        assertThat(Multicast.parse("1:2:3:4:5:6:7:8:9:10:11:12:13:14:15:16:17")).as("the last field stops at its colon")
                .endsWith(15, 16);
        assertThat(Multicast.parse("1:2:3")).isNull();
        assertThat(Multicast.strtoll("99999999999999999999")).isEqualTo(Long.MAX_VALUE);
        assertThat(Multicast.strtoll("0x")).isZero();
    }

    @Test
    void theHeaderSaysMulticastAndTheGroupLinesSayMgid() {
        PerfOptions server = parsed(PerfOptions.Kind.BW, "-g");
        PerfOutput.HeaderInfo h = new PerfOutput.HeaderInfo("rxe_a", 1024, true, 1, 1, true);
        assertThat(PerfOutput.header(server, h)).contains("                    Send BW Multicast Test\n MultiCast runs on UD!\n"
                + " Dual-port       : OFF");
        Wire.Dest d = new Wire.Dest(0, 1, 0xffffff, 0x123456, 0, 0, Multicast.DEFAULT_MGID, 0);
        assertThat(PerfOutput.address(server, "local", d)).endsWith(
                " MGID: 255:01:00:00:00:02:201:133:00:00:00:00:00:00:00:00\n");
        assertThat(PerfOutput.address(server, "remote", d)).contains(" GID: 255:01");
        PerfOptions client = parsed(PerfOptions.Kind.BW, "-g", "198.18.0.1");
        assertThat(PerfOutput.address(client, "remote", d)).contains(" MGID: 255:01");
        assertThat(PerfOutput.address(client, "local", d)).contains(" GID: 255:01");
    }
}
