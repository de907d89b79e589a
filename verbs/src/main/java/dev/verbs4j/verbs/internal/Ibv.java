package dev.verbs4j.verbs.internal;

import dev.verbs4j.bindings.rdma_core_h;
import dev.verbs4j.bindings.verbs_context;

import dev.verbs4j.verbs.Errno;
import dev.verbs4j.verbs.VerbsException;

import java.lang.foreign.AddressLayout;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * Downcall handles of the control-path verbs that report failures through errno, and of the
 * provider operations called through function pointers. Built once, on first use (after
 * {@link Library#ensureLoaded()}).
 */
public final class Ibv {

    // Every handle is bound on its first use, by the class that needs it (a holder class here, or
    // a field of the verbs class that calls it): binding a downcall handle of a new shape generates
    // and loads a class, which costs far more than the call, most of all in a young JVM, so a
    // program binds only the verbs it calls.

    private static final class GetDeviceList {
        static final MethodHandle HANDLE = withErrno("ibv_get_device_list");
    }

    private static final class OpenDevice {
        static final MethodHandle HANDLE = withErrno("ibv_open_device");
    }

    private static final class QueryGid {
        static final MethodHandle HANDLE = withErrno("ibv_query_gid");
    }

    private static final class QueryPkey {
        static final MethodHandle HANDLE = withErrno("ibv_query_pkey");
    }

    private static final class QueryPort {
        static final MethodHandle HANDLE = Native.downcallPointer(verbs_context.query_port.descriptor(), false);
    }

    private static final class QueryDeviceEx {
        static final MethodHandle HANDLE = Native.downcallPointer(verbs_context.query_device_ex.descriptor(), false);
    }

    /** {@code ibv_attach_mcast(qp, gid, lid)} and {@code ibv_detach_mcast}: not in the generated bindings. */
    private static final class Multicast {
        static final FunctionDescriptor DESCRIPTOR = FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS,
                ValueLayout.ADDRESS, ValueLayout.JAVA_SHORT);
        static final MethodHandle ATTACH = Native.downcallWithErrno(Native.function("ibv_attach_mcast"), DESCRIPTOR);
        static final MethodHandle DETACH = Native.downcallWithErrno(Native.function("ibv_detach_mcast"), DESCRIPTOR);
    }

    private Ibv() {
    }

    /**
     * {@code ibv_attach_mcast(qp, gid, lid)} ({@code attach}) or {@code ibv_detach_mcast}: returns 0
     * or an errno (the verb's result, else the errno it left).
     */
    public static int multicast(boolean attach, MemorySegment qp, MemorySegment gid, short lid) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment capture = Native.captureSegment(arena);
            int rc = (int) (attach ? Multicast.ATTACH : Multicast.DETACH).invokeExact(capture, qp, gid, lid);
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
     * A handle on the exported libibverbs/librdmacm function {@code name}, whose first parameter
     * is a capture segment receiving errno. The address is looked up by name and the descriptor
     * comes from {@link #descriptor}, not from the generated bindings: asking those for either
     * would initialize the function's holder class there, which binds a second handle (without
     * errno) that nothing calls.
     */
    public static MethodHandle withErrno(String name) {
        return Native.downcallWithErrno(Native.function(name), descriptor(name));
    }

    /**
     * The descriptor of the exported function {@code name} that verbs and rdmacm call with errno
     * captured, equal to the generated bindings' {@code name$descriptor()} (a host test compares
     * them for every name here, so the bindings' check against gcc still covers them).
     *
     * @throws IllegalStateException for a name that is not here
     */
    public static FunctionDescriptor descriptor(String name) {
        return switch (name) {
            case "rdma_create_event_channel" -> returning(P);
            case "ibv_alloc_pd", "ibv_create_comp_channel", "ibv_get_device_list", "ibv_open_device" -> returning(P, P);
            case "ibv_reg_mr" -> returning(P, P, P, L, I);
            case "ibv_reg_mr_iova2" -> returning(P, P, P, L, L, I);
            case "ibv_create_cq" -> returning(P, P, I, P, P, I);
            case "ibv_create_qp", "ibv_create_ah", "ibv_create_srq" -> returning(P, P, P);
            case "ibv_create_ah_from_wc" -> returning(P, P, P, P, B);
            case "ibv_get_cq_event", "rdma_create_qp", "rdma_init_qp_attr", "rdma_join_multicast",
                 "rdma_join_multicast_ex", "rdma_create_srq" -> returning(I, P, P, P);
            case "ibv_rereg_mr" -> returning(I, P, I, P, P, L, I);
            case "ibv_get_async_event", "rdma_bind_addr", "rdma_create_qp_ex", "rdma_connect", "rdma_get_request",
                 "rdma_accept", "rdma_leave_multicast", "rdma_get_cm_event", "rdma_migrate_id" -> returning(I, P, P);
            case "ibv_query_gid", "ibv_query_pkey" -> returning(I, P, B, I, P);
            case "rdma_destroy_event_channel", "rdma_destroy_ep", "rdma_destroy_qp", "rdma_freeaddrinfo",
                 "rdma_destroy_srq" -> FunctionDescriptor.ofVoid(P);
            case "rdma_create_id" -> returning(I, P, P, P, I);
            case "rdma_destroy_id", "rdma_establish", "rdma_disconnect", "rdma_ack_cm_event" -> returning(I, P);
            case "rdma_create_ep", "rdma_getaddrinfo" -> returning(I, P, P, P, P);
            case "rdma_resolve_addr" -> returning(I, P, P, P, I);
            case "rdma_resolve_route", "rdma_listen", "rdma_notify" -> returning(I, P, I);
            case "rdma_reject" -> returning(I, P, P, B);
            case "rdma_set_option" -> returning(I, P, I, I, P, L);
            default -> throw new IllegalStateException("no descriptor for " + name + " in Ibv.descriptor");
        };
    }

    private static final AddressLayout P = rdma_core_h.C_POINTER;
    private static final ValueLayout I = rdma_core_h.C_INT;
    private static final ValueLayout L = rdma_core_h.C_LONG;
    private static final ValueLayout B = rdma_core_h.C_CHAR;

    private static FunctionDescriptor returning(MemoryLayout result, MemoryLayout... arguments) {
        return FunctionDescriptor.of(result, arguments);
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
            return (MemorySegment) GetDeviceList.HANDLE.invokeExact(capture, num);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code ibv_open_device(device)}; errno lands in {@code capture}. */
    public static MemorySegment openDevice(MemorySegment capture, MemorySegment device) {
        try {
            return (MemorySegment) OpenDevice.HANDLE.invokeExact(capture, device);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code ibv_query_gid(context, port, index, gid)}; errno lands in {@code capture}. */
    public static int queryGid(MemorySegment capture, MemorySegment context, byte port, int index, MemorySegment gid) {
        try {
            return (int) QueryGid.HANDLE.invokeExact(capture, context, port, index, gid);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code ibv_query_pkey(context, port, index, pkey)}; errno lands in {@code capture}. */
    public static int queryPkey(MemorySegment capture, MemorySegment context, byte port, int index, MemorySegment pkey) {
        try {
            return (int) QueryPkey.HANDLE.invokeExact(capture, context, port, index, pkey);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code verbs_context.query_port(context, port, attr, size)}: returns 0 or an errno. */
    public static int queryPort(MemorySegment op, MemorySegment context, byte port, MemorySegment attr, long size) {
        try {
            return (int) QueryPort.HANDLE.invokeExact(op, context, port, attr, size);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code verbs_context.query_device_ex(context, input, attr, size)}: returns 0 or an errno. */
    public static int queryDeviceEx(MemorySegment op, MemorySegment context, MemorySegment input,
                                    MemorySegment attr, long size) {
        try {
            return (int) QueryDeviceEx.HANDLE.invokeExact(op, context, input, attr, size);
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
