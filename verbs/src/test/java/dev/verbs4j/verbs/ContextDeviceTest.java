package dev.verbs4j.verbs;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Opening, querying and closing real devices. */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_1)
class ContextDeviceTest {

    @Test
    void loopbackDeviceHasAnActiveRoceV2PortWithTheLoopbackGid() {
        TestBed.Host lo = TestBed.loopback();
        try (Context ctx = Context.open(lo.device())) {
            DeviceAttributes dev = ctx.queryDevice();
            assertThat(dev.physPortCount()).isEqualTo(1);
            assertThat(dev.maxQp()).isPositive();
            assertThat(dev.maxMrSize()).isNotZero();
            assertThat(dev.nodeGuid()).isEqualTo(ctx.device().guid());

            PortAttributes port = ctx.queryPort(1);
            assertThat(port.state()).isEqualTo(PortState.ACTIVE);
            assertThat(port.linkLayer()).isEqualTo(LinkLayer.ETHERNET);
            assertThat(port.activeMtu()).isNotEqualTo(Mtu.UNKNOWN);
            assertThat(port.gidTableLength()).isPositive();

            GidEntry entry = ctx.queryGidEntry(1, lo.gidIndex()).orElseThrow();
            assertThat(entry.type()).isEqualTo(GidType.ROCE_V2);
            assertThat(entry.gid().toString()).isEqualTo("::ffff:" + lo.address());
            assertThat(ctx.queryGid(1, lo.gidIndex())).isEqualTo(entry.gid());
            assertThat(ctx.queryGidTable()).contains(entry);
            assertThat(ctx.queryPkey(1, 0)).isEqualTo(0xffff);
        }
    }

    @Test
    void vethDevicesCarryTheirOwnAddresses() {
        for (TestBed.Host h : List.of(TestBed.hostA(), TestBed.hostB())) {
            try (Context ctx = Context.open(h.device())) {
                GidEntry entry = ctx.queryGidEntry(1, h.gidIndex()).orElseThrow();
                assertThat(entry.gid().toString()).isEqualTo("::ffff:" + h.address());
                assertThat(entry.netdevIndex()).isPositive();
            }
        }
    }

    @Test
    void badArgumentsAndUseAfterCloseGiveClearExceptions() {
        Context ctx = Context.open(TestBed.loopback().device());
        assertThatThrownBy(() -> ctx.queryPort(0)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("port");
        assertThatThrownBy(() -> ctx.queryPort(2))
                .isInstanceOf(VerbsException.class).hasMessageContaining("ibv_query_port")
                .satisfies(e -> assertThat(((VerbsException) e).errno()).isPositive());
        assertThat(ctx.queryGidEntry(1, ctx.queryPort(1).gidTableLength() - 1)).isEmpty();
        assertThatThrownBy(() -> ctx.queryGid(1, 1 << 20)).isInstanceOf(VerbsException.class)
                .hasMessageContaining("ibv_query_gid");
        ctx.close();
        ctx.close();
        assertThat(ctx.isClosed()).isTrue();
        assertThatThrownBy(ctx::queryDevice).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
        assertThatThrownBy(() -> Context.open("no_such_device")).isInstanceOf(VerbsException.class)
                .hasMessageContaining("no_such_device").hasMessageContaining(TestBed.loopback().device());
    }

    @Test
    void thousandOpenQueryCloseCyclesLeaveTheFileDescriptorCountUnchanged() throws IOException {
        String name = TestBed.loopback().device();
        cycle(name);
        long before = openFds();
        for (int i = 0; i < 1000; i++) {
            cycle(name);
        }
        assertThat(openFds()).isEqualTo(before);
    }

    private static void cycle(String name) {
        try (Context ctx = Context.open(name)) {
            assertThat(ctx.queryDevice().physPortCount()).isEqualTo(1);
            assertThat(ctx.queryPort(1).state()).isEqualTo(PortState.ACTIVE);
        }
    }

    private static long openFds() throws IOException {
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            return fds.count();
        }
    }
}
