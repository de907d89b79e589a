package dev.verbs4j.rdmacm;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link RemoteBuffer}: its bytes, slices and range checks. */
class RemoteBufferTest {

    @Test
    void bytesRoundTrip() {
        RemoteBuffer b = new RemoteBuffer(0x7f12_3456_7890L, 1L << 33, 0xdead_beef);
        byte[] bytes = b.toBytes();
        assertThat(bytes).hasSize(RemoteBuffer.BYTES);
        assertThat(RemoteBuffer.fromBytes(bytes)).isEqualTo(b);
        byte[] framed = new byte[RemoteBuffer.BYTES + 5];
        System.arraycopy(bytes, 0, framed, 3, bytes.length);
        assertThat(RemoteBuffer.fromBytes(framed, 3)).isEqualTo(b);
        assertThat(b.toString()).contains("rkey 0xdeadbeef").contains("8589934592 bytes");
    }

    @Test
    void shortOrInvalidBytesAreRefused() {
        assertThatThrownBy(() -> RemoteBuffer.fromBytes(new byte[19])).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("needs 20 bytes");
        assertThatThrownBy(() -> RemoteBuffer.fromBytes(new byte[20], 1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> RemoteBuffer.fromBytes(new byte[20], -1)).isInstanceOf(IllegalArgumentException.class);
        byte[] negative = new RemoteBuffer(0, 0, 0).toBytes();
        negative[8] = (byte) 0x80;
        assertThatThrownBy(() -> RemoteBuffer.fromBytes(negative)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("length must not be negative");
    }

    @Test
    void rangesAreChecked() {
        RemoteBuffer b = new RemoteBuffer(4096, 100, 1);
        b.checkRange(0, 100, "write");
        b.checkRange(100, 0, "write");
        assertThatThrownBy(() -> b.checkRange(1, 100, "write")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("write: the remote range of 100 bytes at offset 1 is outside the remote buffer of 100 bytes");
        assertThatThrownBy(() -> b.checkRange(-1, 1, "read")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> b.checkRange(Long.MAX_VALUE, 10, "read")).isInstanceOf(IllegalArgumentException.class);
        assertThat(b.slice(10, 20)).isEqualTo(new RemoteBuffer(4106, 20, 1));
        assertThatThrownBy(() -> b.slice(90, 20)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("slice");
    }
}
