package dev.verbs4j.verbs.internal;

import dev.verbs4j.bindings.rdma_core_h;
import dev.verbs4j.bindings.verbs_context;

import java.lang.foreign.MemorySegment;
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

    private Ibv() {
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
