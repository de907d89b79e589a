package dev.verbs4j.rdmacm;

import dev.verbs4j.verbs.Opcode;

/**
 * One operation of an {@link RdmaConnection} on a {@link RegisteredBuffer} (an RDMA WRITE, WRITE
 * with immediate or READ to or from a {@link RemoteBuffer}, or a zero-copy send), as the
 * connection queues and posts it; its future is the connection's. Refers to the buffer (keeping
 * it reachable while the operation is outstanding) and owns no memory.
 *
 * @param kind         what it does
 * @param buffer       the local buffer
 * @param offset       where in it the data starts
 * @param length       the bytes
 * @param remote       the peer's buffer (null for a send)
 * @param remoteOffset where in {@code remote} the data goes or comes from
 * @param immediate    the immediate value of a WRITE with immediate
 */
record BufferOperation(Kind kind, RegisteredBuffer buffer, long offset, int length, RemoteBuffer remote,
                       long remoteOffset, int immediate) {

    /** The kinds of operation, with their opcodes. */
    enum Kind {
        WRITE(Opcode.RDMA_WRITE, "write"),
        WRITE_WITH_IMMEDIATE(Opcode.RDMA_WRITE_WITH_IMM, "writeWithImmediate"),
        READ(Opcode.RDMA_READ, "read"),
        SEND(Opcode.SEND_WITH_IMM, "send");

        final Opcode opcode;
        final String verb;

        Kind(Opcode opcode, String verb) {
            this.opcode = opcode;
            this.verb = verb;
        }

        /** Whether it consumes a receive at the peer (and so needs a credit). */
        boolean needsCredit() {
            return this == WRITE_WITH_IMMEDIATE || this == SEND;
        }
    }
}
