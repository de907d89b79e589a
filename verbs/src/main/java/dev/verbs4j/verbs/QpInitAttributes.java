package dev.verbs4j.verbs;

import dev.verbs4j.bindings.ibv_qp;
import dev.verbs4j.bindings.ibv_qp_cap;
import dev.verbs4j.bindings.ibv_qp_init_attr;
import dev.verbs4j.bindings.ibv_qp_init_attr_ex;
import dev.verbs4j.bindings.verbs_context;
import dev.verbs4j.verbs.internal.ExtendedOps;
import dev.verbs4j.verbs.internal.Ibv;
import dev.verbs4j.verbs.internal.Native;
import dev.verbs4j.verbs.internal.VerbsAccess;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * The {@code ibv_qp_init_attr} (with send operations {@code ibv_qp_init_attr_ex}) that creates a
 * queue pair from a {@link QueuePairInit}, and the capabilities the provider wrote back into it.
 * The structure lives in the caller's arena; the queue pair created belongs to the caller.
 */
record QpInitAttributes(MemorySegment attr, boolean extended, String what) {

    /**
     * Writes {@code init} for a queue pair in {@code pd} into {@code arena}; {@code receives} is
     * false for an XRC send queue pair, which has no receive side. Call while holding the domain
     * and the queues {@code init} names.
     */
    static QpInitAttributes write(Arena arena, QueuePairInit init, ProtectionDomain pd, boolean receives) {
        boolean extended = init.sendOps() != 0;
        MemorySegment attr = arena.allocate(extended ? ibv_qp_init_attr_ex.layout() : ibv_qp_init_attr.layout());
        // ibv_qp_init_attr is the prefix of ibv_qp_init_attr_ex: the common fields are written alike.
        ibv_qp_init_attr.send_cq(attr, init.sendCq().handle());
        if (receives) {
            ibv_qp_init_attr.recv_cq(attr, init.recvCq().handle());
        }
        ibv_qp_init_attr.qp_type(attr, init.type().code());
        if (init.srq() != null) {
            ibv_qp_init_attr.srq(attr, init.srq().handle());
        }
        ibv_qp_init_attr.sq_sig_all(attr, init.signalAll() ? 1 : 0);
        MemorySegment cap = ibv_qp_init_attr.cap(attr);
        ibv_qp_cap.max_send_wr(cap, init.maxSendWr());
        int recvWr = receives ? init.maxRecvWr() : 0;
        int recvSge = receives ? init.maxRecvSge() : 0;
        ibv_qp_cap.max_recv_wr(cap, recvWr);
        ibv_qp_cap.max_send_sge(cap, init.maxSendSge());
        ibv_qp_cap.max_recv_sge(cap, recvSge);
        ibv_qp_cap.max_inline_data(cap, init.maxInlineData());
        String what = init.type() + " QP on " + pd.context().name() + " (send_wr " + init.maxSendWr() + ", recv_wr "
                + recvWr + ", send_sge " + init.maxSendSge() + ", recv_sge " + recvSge
                + ", inline " + init.maxInlineData() + (extended ? ", send ops 0x" + Long.toHexString(init.sendOps()) : "") + ")";
        if (extended) {
            ibv_qp_init_attr_ex.comp_mask(attr, QueuePair.INIT_ATTR_PD | QueuePair.INIT_ATTR_SEND_OPS_FLAGS);
            ibv_qp_init_attr_ex.pd(attr, pd.handle());
            ibv_qp_init_attr_ex.send_ops_flags(attr, init.sendOps());
        }
        return new QpInitAttributes(attr, extended, what);
    }

    /**
     * Creates the queue pair: through {@code factory} (the connection manager's), else through
     * libibverbs; the provider writes the capabilities it gave into {@link #cap()}.
     */
    MemorySegment create(ProtectionDomain pd, VerbsAccess.QueuePairFactory factory) {
        if (factory != null) {
            return Native.sized(factory.create(attr, extended), ibv_qp.sizeof());
        }
        if (extended) {
            return createExtended(pd.context(), attr, what);
        }
        // ibv_create_qp_ex() with IBV_QP_INIT_ATTR_PD alone is ibv_create_qp() (verbs.h); XRC send
        // queue pairs are named by the verb that C programs create them with
        String verb = ibv_qp_init_attr.qp_type(attr) == QpType.XRC_SEND.code() ? "ibv_create_qp_ex" : "ibv_create_qp";
        return Ibv.create(Create.QP, verb, what, ibv_qp.sizeof(), pd.handle(), attr);
    }

    /** {@code ibv_create_qp_ex()} of {@code attr}, an {@code ibv_qp_init_attr_ex}, on {@code context}. */
    static MemorySegment createExtended(Context context, MemorySegment attr, String what) {
        MemorySegment op = ExtendedOps.op(context.handle(), verbs_context.create_qp_ex$offset());
        return Ibv.createThrough(Create.QP_EX, op, "ibv_create_qp_ex", what, ibv_qp.sizeof(), context.handle(), attr);
    }

    /** The capabilities: what was asked before the create, what the provider gave after it. */
    MemorySegment cap() {
        return ibv_qp_init_attr.cap(attr);
    }

    /**
     * The creating verbs, bound when a program first creates a queue pair itself (one that the
     * connection manager creates needs neither).
     */
    private static final class Create {
        static final MethodHandle QP = Ibv.withErrno("ibv_create_qp");
        static final MethodHandle QP_EX = Native.downcallPointerWithErrno(verbs_context.create_qp_ex.descriptor());
    }
}
