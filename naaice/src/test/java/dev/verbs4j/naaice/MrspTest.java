package dev.verbs4j.naaice;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The MRSP wire format against byte sequences written from the protocol specification. */
class MrspTest {

    private static byte[] hex(String s) {
        return HexFormat.of().parseHex(s.replaceAll("[\\s|]", ""));
    }

    private static final MrspMessage.Request CAPTURED_REQUEST = new MrspMessage.Request(List.of(
            new MrspMessage.RequestEntry(0x06, 0x0000, 0x0000_562f_33db_b820L, 0x0211, 1024),
            new MrspMessage.RequestEntry(0x04, 0x1000, 0x0000_562f_33db_bc30L, 0x030c, 1024),
            new MrspMessage.RequestEntry(0x0c, 0x2000, 0x0000_562f_33db_c040L, 0x04a4, 1024)));

    private static final byte[] CAPTURED_REQUEST_BYTES = hex("""
            01 03 00 00
            06 00 00 00 00 00 00 00  00 00 56 2f 33 db b8 20  00 00 02 11  00 00 04 00
            04 00 00 00 00 00 10 00  00 00 56 2f 33 db bc 30  00 00 03 0c  00 00 04 00
            0c 00 00 00 00 00 20 00  00 00 56 2f 33 db c0 40  00 00 04 a4  00 00 04 00
            """);

    private static final MrspMessage.Advertise CAPTURED_ADVERTISE = new MrspMessage.Advertise(List.of(
            new MrspMessage.AdvertiseEntry(0x0000_7f47_5400_0c70L, 0x03da, 1024),
            new MrspMessage.AdvertiseEntry(0x0000_7f47_5400_10c0L, 0x047b, 1024),
            new MrspMessage.AdvertiseEntry(0x0000_7f47_5400_1510L, 0x0572, 1024)));

    private static final byte[] CAPTURED_ADVERTISE_BYTES = hex("""
            02 03 00 00
            00 00 7f 47 54 00 0c 70  00 00 03 da  00 00 04 00
            00 00 7f 47 54 00 10 c0  00 00 04 7b  00 00 04 00
            00 00 7f 47 54 00 15 10  00 00 05 72  00 00 04 00
            """);

    @Test
    void capturedRequestEncodesAndDecodes() {
        assertThat(Mrsp.toBytes(CAPTURED_REQUEST)).isEqualTo(CAPTURED_REQUEST_BYTES);
        assertThat(CAPTURED_REQUEST.length()).isEqualTo(76);
        assertThat(Mrsp.decode(CAPTURED_REQUEST_BYTES)).isEqualTo(CAPTURED_REQUEST);
    }

    @Test
    void capturedAdvertiseEncodesAndDecodes() {
        assertThat(Mrsp.toBytes(CAPTURED_ADVERTISE)).isEqualTo(CAPTURED_ADVERTISE_BYTES);
        assertThat(CAPTURED_ADVERTISE.length()).isEqualTo(52);
        assertThat(Mrsp.decode(CAPTURED_ADVERTISE_BYTES)).isEqualTo(CAPTURED_ADVERTISE);
    }

    @Test
    void internalEntryHasZeroAddressAndKey() {
        var m = new MrspMessage.Request(List.of(new MrspMessage.RequestEntry(RegionFlags.INTERNAL, 0x2000, 0, 0, 8192)));
        assertThat(Mrsp.toBytes(m)).isEqualTo(hex("01 01 00 00 | 01 00 00 00 00 00 20 00 | 00 00 00 00 00 00 00 00"
                + " | 00 00 00 00 | 00 00 20 00"));
        assertThat(((MrspMessage.Request) Mrsp.decode(Mrsp.toBytes(m))).entries().get(0).internal()).isTrue();
    }

    @Test
    void oneRegionRequestAndAdvertise() {
        var req = new MrspMessage.Request(List.of(new MrspMessage.RequestEntry(RegionFlags.INPUT | RegionFlags.OUTPUT,
                0x0123_4567_89ab_cdefL, 0x8899_aabb_ccdd_eeffL, 0xdead_beef, 0xffff_ffffL)));
        // the requested address keeps bits 55..0 only; sizes and keys are unsigned big-endian
        byte[] b = hex("01 01 00 00 | 0c 23 45 67 89 ab cd ef | 88 99 aa bb cc dd ee ff | de ad be ef | ff ff ff ff");
        assertThat(Mrsp.toBytes(req)).isEqualTo(b);
        MrspMessage.RequestEntry e = ((MrspMessage.Request) Mrsp.decode(b)).entries().get(0);
        assertThat(e.requestedAddress()).isEqualTo(0x0023_4567_89ab_cdefL);
        assertThat(e.hostAddress()).isEqualTo(0x8899_aabb_ccdd_eeffL);
        assertThat(e.rkey()).isEqualTo(0xdead_beef);
        assertThat(e.size()).isEqualTo(0xffff_ffffL);

        var adv = new MrspMessage.Advertise(List.of(new MrspMessage.AdvertiseEntry(0x0102_0304_0506_0708L, 0x0a0b_0c0d, 0x8000_0000L)));
        byte[] a = hex("02 01 00 00 | 01 02 03 04 05 06 07 08 | 0a 0b 0c 0d | 80 00 00 00");
        assertThat(Mrsp.toBytes(adv)).isEqualTo(a);
        assertThat(Mrsp.decode(a)).isEqualTo(adv);
    }

    @Test
    void thirtyTwoRegions() {
        List<MrspMessage.RequestEntry> entries = new ArrayList<>();
        List<MrspMessage.AdvertiseEntry> adv = new ArrayList<>();
        for (int i = 0; i < 32; i++) {
            entries.add(new MrspMessage.RequestEntry(RegionFlags.INPUT, 0x1000L * i, 0x7f00_0000_0000L + i, i + 1, 100 + i));
            adv.add(new MrspMessage.AdvertiseEntry(0x5500_0000_0000L + 4096L * i, 0x100 + i, 100 + i));
        }
        byte[] r = Mrsp.toBytes(new MrspMessage.Request(entries));
        assertThat(r).hasSize(4 + 32 * 24);
        assertThat(r[0]).isEqualTo((byte) 1);
        assertThat(r[1]).isEqualTo((byte) 32);
        // entry 31 at 4 + 31 * 24 = 748
        assertThat(java.util.Arrays.copyOfRange(r, 748, 772)).isEqualTo(hex(
                "04 00 00 00 00 01 f0 00 | 00 00 7f 00 00 00 00 1f | 00 00 00 20 | 00 00 00 83"));
        assertThat(Mrsp.decode(r)).isEqualTo(new MrspMessage.Request(entries));
        byte[] a = Mrsp.toBytes(new MrspMessage.Advertise(adv));
        assertThat(a).hasSize(4 + 32 * 16);
        assertThat(java.util.Arrays.copyOfRange(a, 4 + 31 * 16, 4 + 32 * 16)).isEqualTo(hex(
                "00 00 55 00 00 01 f0 00 | 00 00 01 1f | 00 00 00 83"));
        assertThat(Mrsp.decode(a)).isEqualTo(new MrspMessage.Advertise(adv));
        // 32 entries do not fit the C library's 768-byte buffer
        assertThat(r.length).isGreaterThan(Mrsp.C_BUFFER);
        assertThat(Mrsp.C_MAX_REQUEST_ENTRIES).isEqualTo(31);
    }

    @Test
    void flagsCombine() {
        for (int flags : new int[]{0x00, 0x01, 0x02 | 0x04, 0x04, 0x08, 0x0c, 0x0e}) {
            byte[] b = Mrsp.toBytes(new MrspMessage.Request(List.of(new MrspMessage.RequestEntry(flags, 0, 0, 0, 1))));
            assertThat(b[4]).isEqualTo((byte) flags);
            assertThat(((MrspMessage.Request) Mrsp.decode(b)).entries().get(0).flags()).isEqualTo(flags);
        }
        assertThat(RegionFlags.describe(0x0e)).isEqualTo("SINGLE_SEND|INPUT|OUTPUT");
    }

    @Test
    void errorMessages() {
        assertThat(Mrsp.toBytes(new MrspMessage.Error(7))).isEqualTo(hex("00 07 00 00"));
        assertThat(Mrsp.toBytes(new MrspMessage.Error(Mrsp.TOO_MANY_REGIONS))).isEqualTo(hex("00 03 00 00"));
        // a host repeats the code at offset 3, where the C NAA reads it
        assertThat(Mrsp.toBytes(new MrspMessage.Error(0xab, true))).isEqualTo(hex("00 ab 00 ab"));
        // the code is read at offset 1
        assertThat(((MrspMessage.Error) Mrsp.decode(hex("00 01 00 00"))).code()).isEqualTo(Mrsp.NOT_ENOUGH_MEMORY);
        assertThat(((MrspMessage.Error) Mrsp.decode(hex("00 07 00 ab"))).code()).isEqualTo(7);
    }

    @Test
    void hostAbortMessage() {
        // what a client sends when it closes before the region setup: 00 05 00 05, 4 bytes
        byte[] b = Mrsp.toBytes(new MrspMessage.Error(Mrsp.HOST_ABORT, true));
        assertThat(b).isEqualTo(hex("00 05 00 05"));
        assertThat(((MrspMessage.Error) Mrsp.decode(b)).code()).isEqualTo(Mrsp.HOST_ABORT);
        assertThat(b[3]).as("where the C NAA reads the code").isEqualTo((byte) Mrsp.HOST_ABORT);
        assertThat(Mrsp.errorName(Mrsp.HOST_ABORT)).contains("closed");
    }

    @Test
    void emptyRequestAndAdvertise() {
        assertThat(Mrsp.toBytes(new MrspMessage.Request(List.of()))).isEqualTo(hex("01 00 00 00"));
        assertThat(Mrsp.toBytes(new MrspMessage.Advertise(List.of()))).isEqualTo(hex("02 00 00 00"));
    }

    @Test
    void malformedMessagesAreRefused() {
        assertThatThrownBy(() -> Mrsp.decode(hex("01 00 00"))).isInstanceOf(MalformedMrspException.class);
        assertThatThrownBy(() -> Mrsp.decode(hex("01 02 00 00" + "00".repeat(24 + 23))))
                .isInstanceOfSatisfying(MalformedMrspException.class, e -> assertThat(e.errorCode()).isEqualTo(Mrsp.MALFORMED_MESSAGE));
        assertThatThrownBy(() -> Mrsp.decode(hex("02 01 00 00" + "00".repeat(15)))).isInstanceOf(MalformedMrspException.class);
        assertThatThrownBy(() -> Mrsp.decode(hex("03 00 00 00"))).isInstanceOf(MalformedMrspException.class);
        assertThatThrownBy(() -> Mrsp.decode(hex("ff 00 00 00"))).isInstanceOf(MalformedMrspException.class);
        // trailing bytes beyond the announced entries are ignored
        assertThat(Mrsp.decode(hex("02 00 00 00 ee ee"))).isEqualTo(new MrspMessage.Advertise(List.of()));
    }

    @Test
    void randomBytesNeverThrowAnythingElse() {
        java.util.Random rnd = new java.util.Random(42);
        for (int i = 0; i < 10_000; i++) {
            byte[] b = new byte[rnd.nextInt(200)];
            rnd.nextBytes(b);
            if (b.length > 0 && rnd.nextBoolean()) {
                b[0] = (byte) rnd.nextInt(4);
            }
            try {
                MrspMessage m = Mrsp.decode(b);
                assertThat(m.length()).isLessThanOrEqualTo(b.length);
            } catch (MalformedMrspException e) {
                assertThat(e.errorCode()).isEqualTo(Mrsp.MALFORMED_MESSAGE);
            }
        }
    }

    @Test
    void bufferTooSmall() {
        assertThatThrownBy(() -> Mrsp.encode(CAPTURED_REQUEST, java.lang.foreign.MemorySegment.ofArray(new byte[75])))
                .isInstanceOf(IndexOutOfBoundsException.class);
    }
}
