package dev.verbs4j.verbs;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** RdmaArena memory in huge pages: registered, written by the device, given back when the arena closes. */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_1)
class HugePagesDeviceTest {

    @Test
    void theDeviceWritesIntoHugePagesThatTheArenaGivesBackWhenItCloses() throws Exception {
        long page = RdmaArena.hugePageSize();
        try (HugePages reserved = HugePages.reserve(8);
             QpPair p = QpPair.connected(TestBed.loopback(), TestBed.loopback(), QpType.RC);
             SendRequests sends = new SendRequests(1, 1)) {
            long free = HugePages.available();
            assertThat(free).isEqualTo(8);
            RdmaArena arena = RdmaArena.ofShared();
            MemorySegment huge = arena.allocateHugePages(page + 4096);
            assertThat(huge.byteSize()).isEqualTo(page + 4096);
            assertThat(huge.address() % page).as("starts on a huge page").isZero();
            assertThat(RdmaArena.isRegistrable(huge)).isTrue();
            assertThat(HugePages.available()).as("two huge pages taken").isEqualTo(free - 2);
            assertThat(RcDataPathDeviceTest.count(huge, 0, huge.byteSize(), (byte) 0)).isEqualTo(huge.byteSize());

            MemoryRegion mr = p.pdB.register(huge, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
            RcDataPathDeviceTest.fill(p.mrA.segment(), 0, 8192, (byte) 'h');
            // across the boundary of the two huge pages
            sends.reset(0).wrId(1).opcode(Opcode.RDMA_WRITE).flags(SendFlags.SIGNALED).sge(p.mrA, 0, 8192)
                    .rdma(mr.remoteAddress() + page - 4096, mr.rkey());
            p.a.postSend(sends, 1);
            p.awaitSuccess(p.cqA, WcOpcode.RDMA_WRITE);
            assertThat(RcDataPathDeviceTest.count(huge, page - 4096, 8192, (byte) 'h')).isEqualTo(8192);

            arena.close();
            assertThat(mr.isClosed()).as("deregistered by the arena's close").isTrue();
            assertThat(HugePages.available()).as("given back").isEqualTo(free);
            assertThatThrownBy(() -> arena.allocateHugePages(1)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("closed");
        }
    }

    @Test
    void withoutFreeHugePagesTheAllocationIsRefusedSayingWhatIsMissing() throws Exception {
        try (HugePages none = HugePages.reserve(0); RdmaArena arena = RdmaArena.ofShared()) {
            assertThatThrownBy(() -> arena.allocateHugePages(1 << 20)).isInstanceOfSatisfying(VerbsException.class,
                    e -> assertThat(e.errno()).isEqualTo(Errno.ENOMEM))
                    .hasMessageContaining("mmap").hasMessageContaining("1 huge page(s)")
                    .hasMessageContaining("HugePages_Free: 0").hasMessageContaining("/proc/sys/vm/nr_hugepages");
            assertThatThrownBy(() -> arena.allocateHugePages(0)).isInstanceOf(IllegalArgumentException.class);
        }
    }
}
