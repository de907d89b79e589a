package dev.verbs4j.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Set;

/**
 * The small table of plausible arguments the misuse suite passes to methods it calls by
 * reflection: per parameter type, a live value from a fixture ({@link #live}), in two variants
 * (ints and longs 0 or 1, booleans false or true, the first or last enum constant), or a closed
 * one ({@link #closed}) for the types that can be closed. A type missing from the table fails the
 * case that needs it, so that new API is noticed.
 */
final class MisuseArguments {

    /** Parameter types that can be passed closed: resources, batches, freed memory, a CQ-less init. */
    private static final Set<Class<?>> CLOSABLE = Set.of(Context.class, ProtectionDomain.class, MemoryRegion.class,
            MemoryWindow.class, CompletionQueue.class, CompletionChannel.class, QueuePair.class, SharedReceiveQueue.class,
            AddressHandle.class, XrcDomain.class, SendRequests.class, ReceiveRequests.class, WorkCompletions.class,
            WorkCompletion.class, MemorySegment.class, QueuePairInit.class);

    private MisuseArguments() {
    }

    /** Live arguments for {@code m} from {@code f}, variant 0 or 1. */
    static Object[] live(Method m, MisuseFixture f, int variant) {
        Class<?>[] types = m.getParameterTypes();
        Object[] args = new Object[types.length];
        for (int i = 0; i < types.length; i++) {
            args[i] = live(types[i], f, variant);
        }
        return args;
    }

    static boolean closable(Class<?> type) {
        return CLOSABLE.contains(type);
    }

    /** A plausible live value of {@code type}. */
    static Object live(Class<?> type, MisuseFixture f, int variant) {
        if (type == int.class) {
            return variant;
        }
        if (type == long.class) {
            return (long) variant;
        }
        if (type == boolean.class) {
            return variant == 1;
        }
        if (type == Duration.class) {
            return Duration.ofMillis(10);
        }
        if (type == Runnable.class) {
            return (Runnable) () -> { }; // a readiness callback that does nothing
        }
        if (type == MemorySegment.class) {
            return f.segment().asSlice(0, 64);
        }
        if (type == Context.class) {
            return f.ctx;
        }
        if (type == ProtectionDomain.class) {
            return f.pd();
        }
        if (type == MemoryRegion.class) {
            return f.mr();
        }
        if (type == MemoryWindow.class) {
            return f.mw(variant == 0 ? MemoryWindow.Type.TYPE_1 : MemoryWindow.Type.TYPE_2);
        }
        if (type == CompletionQueue.class) {
            return f.recvCq();
        }
        if (type == CompletionChannel.class) {
            return f.channel();
        }
        if (type == QueuePair.class) {
            return f.qp(QpType.RC);
        }
        if (type == SharedReceiveQueue.class) {
            return f.srq();
        }
        if (type == AddressHandle.class) {
            return f.ah();
        }
        if (type == SendRequests.class) {
            return f.sends();
        }
        if (type == ReceiveRequests.class) {
            return f.recvs();
        }
        if (type == WorkCompletions.class) {
            return f.wcs();
        }
        if (type == WorkCompletion.class) {
            return f.flushedCompletion();
        }
        if (type == QueuePairInit.class) {
            return QueuePairInit.of(QpType.RC, f.recvCq());
        }
        if (type == QueuePairAttributes.class) {
            return new QueuePairAttributes().state(QpState.ERR);
        }
        if (type == QueuePairEndpoint.class) {
            return new QueuePairEndpoint(0, 1 + variant, 0, gid(f));
        }
        if (type == AddressVector.class) {
            return f.destination();
        }
        if (type == Gid.class) {
            return gid(f);
        }
        if (type == Opcode.class) {
            // BIND_MW is refused by opcode() by design; the first and a plain last one
            return variant == 0 ? Opcode.RDMA_WRITE : Opcode.SEND_WITH_INV;
        }
        if (type.isEnum()) {
            Object[] constants = type.getEnumConstants();
            return constants[variant == 0 ? 0 : constants.length - 1];
        }
        throw new AssertionError("MisuseArguments has no value for parameter type " + type.getName()
                + ": add one to the table");
    }

    /** The arguments for a message, each as its toString or, where that throws (a closed view), its type. */
    static String describe(Object[] args) {
        StringBuilder s = new StringBuilder("(");
        for (int i = 0; i < args.length; i++) {
            if (i > 0) {
                s.append(", ");
            }
            String one;
            try {
                one = String.valueOf(args[i]);
            } catch (RuntimeException e) {
                one = args[i].getClass().getSimpleName();
            }
            s.append(one.length() > 60 ? one.substring(0, 60) + "…" : one);
        }
        return s.append(')').toString();
    }

    private static Gid gid(MisuseFixture f) {
        return f.ctx.queryGid(1, f.host.gidIndex());
    }

    /** A closed value of {@code type} (one of {@link #closable}) made from {@code f}, which it may close in part. */
    static Object closed(Class<?> type, MisuseFixture f) {
        if (type == MemorySegment.class) {
            Arena arena = Arena.ofShared();
            MemorySegment s = arena.allocate(64);
            arena.close();
            return s;
        }
        if (type == SendRequests.class) {
            SendRequests s = new SendRequests(4, 2);
            s.close();
            return s;
        }
        if (type == ReceiveRequests.class) {
            ReceiveRequests r = new ReceiveRequests(4, 2);
            r.close();
            return r;
        }
        if (type == WorkCompletions.class) {
            WorkCompletions w = new WorkCompletions(8);
            w.close();
            return w;
        }
        if (type == WorkCompletion.class) {
            WorkCompletion wc = f.flushedCompletion();
            f.flushedCompletions().close();
            return wc;
        }
        if (type == QueuePairInit.class) {
            CompletionQueue cq = f.ctx.createCompletionQueue(4);
            cq.close();
            return QueuePairInit.of(QpType.RC, cq);
        }
        Object live = live(type, f, 1);
        if (live instanceof NativeResource r) {
            r.close();
            return r;
        }
        throw new AssertionError("no closed value of " + type.getName());
    }
}
