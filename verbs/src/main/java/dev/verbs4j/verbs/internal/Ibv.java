package dev.verbs4j.verbs.internal;

import dev.verbs4j.bindings.rdma_core_h;
import dev.verbs4j.bindings.verbs_context;

import dev.verbs4j.verbs.Errno;
import dev.verbs4j.verbs.VerbsException;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * Downcall handles of the control-path verbs that report failures through errno, and of the
 * provider operations called through function pointers. Built once, on first use (after
 * {@link Library#ensureLoaded()}).
 */
public final class Ibv {

    private static final MethodHandle GET_DEVICE_LIST = Native.downcallWithErrno(
            rdma_core_h.ibv_get_device_list$address(), rdma_core_h.ibv_get_device_list$descriptor());
    private static final MethodHandle OPEN_DEVICE = Native.downcallWithErrno(
            rdma_core_h.ibv_open_device$address(), rdma_core_h.ibv_open_device$descriptor());
    private static final MethodHandle QUERY_GID = Native.downcallWithErrno(
            rdma_core_h.ibv_query_gid$address(), rdma_core_h.ibv_query_gid$descriptor());
    private static final MethodHandle QUERY_PKEY = Native.downcallWithErrno(
            rdma_core_h.ibv_query_pkey$address(), rdma_core_h.ibv_query_pkey$descriptor());
    private static final MethodHandle QUERY_PORT_OP =
            Native.downcallPointer(verbs_context.query_port.descriptor(), false);
    private static final MethodHandle QUERY_DEVICE_EX_OP =
            Native.downcallPointer(verbs_context.query_device_ex.descriptor(), false);

    /** Creating verbs that return NULL and set errno on failure; first argument: the capture segment. */
    public static final MethodHandle ALLOC_PD = withErrno("ibv_alloc_pd");
    public static final MethodHandle REG_MR = withErrno("ibv_reg_mr");
    public static final MethodHandle REG_MR_IOVA2 = withErrno("ibv_reg_mr_iova2");
    public static final MethodHandle CREATE_COMP_CHANNEL = withErrno("ibv_create_comp_channel");
    public static final MethodHandle CREATE_CQ = withErrno("ibv_create_cq");
    public static final MethodHandle CREATE_QP = withErrno("ibv_create_qp");
    public static final MethodHandle CREATE_AH = withErrno("ibv_create_ah");
    public static final MethodHandle CREATE_AH_FROM_WC = withErrno("ibv_create_ah_from_wc");
    public static final MethodHandle GET_CQ_EVENT = withErrno("ibv_get_cq_event");
    public static final MethodHandle REREG_MR = withErrno("ibv_rereg_mr");
    public static final MethodHandle CREATE_SRQ = withErrno("ibv_create_srq");
    public static final MethodHandle GET_ASYNC_EVENT = withErrno("ibv_get_async_event");

    /** {@code ibv_attach_mcast(qp, gid, lid)} and {@code ibv_detach_mcast}: not in the generated bindings. */
    private static final FunctionDescriptor MCAST = FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS,
            ValueLayout.ADDRESS, ValueLayout.JAVA_SHORT);
    private static final MethodHandle ATTACH_MCAST = Native.downcallWithErrno(Native.verbsFunction("ibv_attach_mcast"), MCAST);
    private static final MethodHandle DETACH_MCAST = Native.downcallWithErrno(Native.verbsFunction("ibv_detach_mcast"), MCAST);

    private Ibv() {
    }

    /**
     * {@code ibv_attach_mcast(qp, gid, lid)} ({@code attach}) or {@code ibv_detach_mcast}: returns 0
     * or an errno (the verb's result, else the errno it left).
     */
    public static int multicast(boolean attach, MemorySegment qp, MemorySegment gid, short lid) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment capture = Native.captureSegment(arena);
            int rc = (int) (attach ? ATTACH_MCAST : DETACH_MCAST).invokeExact(capture, qp, gid, lid);
            if (rc == 0) {
                return 0;
            }
            int errno = Native.errno(capture);
            return rc > 0 ? rc : errno != 0 ? errno : Math.abs(rc);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * A handle on the exported libibverbs/librdmacm function {@code name} of the generated
     * bindings, whose first parameter is a capture segment receiving errno.
     */
    public static MethodHandle withErrno(String name) {
        try {
            Class<?> h = rdma_core_h.class;
            MemorySegment address = (MemorySegment) h.getMethod(name + "$address").invoke(null);
            FunctionDescriptor descriptor = (FunctionDescriptor) h.getMethod(name + "$descriptor").invoke(null);
            return Native.downcallWithErrno(address, descriptor);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("the bindings lack " + name, e);
        }
    }

    /**
     * Calls a creating verb ({@code handle} from this class) and returns the object it created,
     * sized to {@code size} bytes.
     *
     * @throws VerbsException naming {@code verb}, its errno and {@code what} when it returned NULL
     */
    public static MemorySegment create(MethodHandle handle, String verb, String what, long size, Object... args) {
        return createThrough(handle, null, verb, what, size, args);
    }

    /**
     * Like {@link #create}, for a provider operation called through its function pointer {@code op}
     * ({@code handle} from {@link Native#downcallPointerWithErrno}); a NULL {@code op} means the
     * provider lacks the verb: {@code EOPNOTSUPP}.
     */
    public static MemorySegment createThrough(MethodHandle handle, MemorySegment op, String verb, String what, long size,
                                              Object... args) {
        if (op != null && op.equals(MemorySegment.NULL)) {
            throw new VerbsException(verb, Errno.EOPNOTSUPP, what);
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment capture = Native.captureSegment(arena);
            int lead = op == null ? 1 : 2;
            Object[] all = new Object[args.length + lead];
            if (op != null) {
                all[0] = op;
            }
            all[lead - 1] = capture;
            System.arraycopy(args, 0, all, lead, args.length);
            MemorySegment created;
            try {
                created = (MemorySegment) handle.invokeWithArguments(all);
            } catch (Throwable t) {
                throw rethrow(t);
            }
            if (created.equals(MemorySegment.NULL)) {
                int errno = Native.errno(capture);
                throw new VerbsException(verb, errno == 0 ? Errno.EINVAL : errno, what);
            }
            return Native.sized(created, size);
        }
    }

    /** Throws a {@link VerbsException} for {@code verb} when {@code rc} (0 or an errno) is not 0. */
    public static void check(int rc, String verb, String what) {
        if (rc != 0) {
            throw new VerbsException(verb, Math.abs(rc), what);
        }
    }

    /** {@code ibv_get_device_list(num)}; errno lands in {@code capture}. */
    public static MemorySegment getDeviceList(MemorySegment capture, MemorySegment num) {
        try {
            return (MemorySegment) GET_DEVICE_LIST.invokeExact(capture, num);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code ibv_open_device(device)}; errno lands in {@code capture}. */
    public static MemorySegment openDevice(MemorySegment capture, MemorySegment device) {
        try {
            return (MemorySegment) OPEN_DEVICE.invokeExact(capture, device);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code ibv_query_gid(context, port, index, gid)}; errno lands in {@code capture}. */
    public static int queryGid(MemorySegment capture, MemorySegment context, byte port, int index, MemorySegment gid) {
        try {
            return (int) QUERY_GID.invokeExact(capture, context, port, index, gid);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code ibv_query_pkey(context, port, index, pkey)}; errno lands in {@code capture}. */
    public static int queryPkey(MemorySegment capture, MemorySegment context, byte port, int index, MemorySegment pkey) {
        try {
            return (int) QUERY_PKEY.invokeExact(capture, context, port, index, pkey);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code verbs_context.query_port(context, port, attr, size)}: returns 0 or an errno. */
    public static int queryPort(MemorySegment op, MemorySegment context, byte port, MemorySegment attr, long size) {
        try {
            return (int) QUERY_PORT_OP.invokeExact(op, context, port, attr, size);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code verbs_context.query_device_ex(context, input, attr, size)}: returns 0 or an errno. */
    public static int queryDeviceEx(MemorySegment op, MemorySegment context, MemorySegment input,
                                    MemorySegment attr, long size) {
        try {
            return (int) QUERY_DEVICE_EX_OP.invokeExact(op, context, input, attr, size);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code t} as an unchecked exception, for the {@code catch (Throwable)} of an invokeExact. */
    public static RuntimeException unchecked(Throwable t) {
        return rethrow(t);
    }

    private static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            throw r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        throw new IllegalStateException("unexpected checked exception from a downcall", t);
    }
}
