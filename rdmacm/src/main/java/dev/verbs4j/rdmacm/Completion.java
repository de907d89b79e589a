package dev.verbs4j.rdmacm;

import dev.verbs4j.verbs.WcOpcode;
import dev.verbs4j.verbs.WcStatus;
import dev.verbs4j.verbs.WorkCompletion;

/**
 * A work completion copied out of an {@link RdmaEndpointGroup}'s completion queue, so that the
 * group can hand it to the connection whose queue pair it belongs to after the native array was
 * reused. A plain value.
 */
record Completion(long wrId, WcStatus status, WcOpcode opcode, int byteLength, int immediate, int flags, int qpNum) {

    static Completion of(WorkCompletion wc) {
        return new Completion(wc.wrId(), wc.status(), wc.opcode(), wc.byteLength(), wc.immediateData(), wc.flags(), wc.qpNum());
    }
}
