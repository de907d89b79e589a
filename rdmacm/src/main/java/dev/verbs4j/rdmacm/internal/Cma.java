package dev.verbs4j.rdmacm.internal;

import dev.verbs4j.verbs.Errno;
import dev.verbs4j.verbs.VerbsException;
import dev.verbs4j.verbs.internal.Ibv;
import dev.verbs4j.verbs.internal.Library;
import dev.verbs4j.verbs.internal.Native;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * The librdmacm functions the connection manager calls, each bound once with errno captured, and
 * the one way to call them: a failure becomes a {@link VerbsException} naming the function, its
 * errno and what it was called on.
 */
public final class Cma {

    public static final MethodHandle CREATE_EVENT_CHANNEL = bind("rdma_create_event_channel");
    public static final MethodHandle DESTROY_EVENT_CHANNEL = bind("rdma_destroy_event_channel");
    public static final MethodHandle CREATE_ID = bind("rdma_create_id");
    public static final MethodHandle DESTROY_ID = bind("rdma_destroy_id");
    public static final MethodHandle CREATE_EP = bind("rdma_create_ep");
    public static final MethodHandle DESTROY_EP = bind("rdma_destroy_ep");
    public static final MethodHandle BIND_ADDR = bind("rdma_bind_addr");
    public static final MethodHandle RESOLVE_ADDR = bind("rdma_resolve_addr");
    public static final MethodHandle RESOLVE_ROUTE = bind("rdma_resolve_route");
    public static final MethodHandle CREATE_QP = bind("rdma_create_qp");
    public static final MethodHandle CREATE_QP_EX = bind("rdma_create_qp_ex");
    public static final MethodHandle DESTROY_QP = bind("rdma_destroy_qp");
    public static final MethodHandle CONNECT = bind("rdma_connect");
    public static final MethodHandle LISTEN = bind("rdma_listen");
    public static final MethodHandle GET_REQUEST = bind("rdma_get_request");
    public static final MethodHandle ACCEPT = bind("rdma_accept");
    public static final MethodHandle REJECT = bind("rdma_reject");
    public static final MethodHandle NOTIFY = bind("rdma_notify");
    public static final MethodHandle ESTABLISH = bind("rdma_establish");
    public static final MethodHandle INIT_QP_ATTR = bind("rdma_init_qp_attr");
    public static final MethodHandle DISCONNECT = bind("rdma_disconnect");
    public static final MethodHandle JOIN_MULTICAST = bind("rdma_join_multicast");
    public static final MethodHandle LEAVE_MULTICAST = bind("rdma_leave_multicast");
    public static final MethodHandle JOIN_MULTICAST_EX = bind("rdma_join_multicast_ex");
    public static final MethodHandle GET_CM_EVENT = bind("rdma_get_cm_event");
    public static final MethodHandle ACK_CM_EVENT = bind("rdma_ack_cm_event");
    public static final MethodHandle SET_OPTION = bind("rdma_set_option");
    public static final MethodHandle MIGRATE_ID = bind("rdma_migrate_id");
    public static final MethodHandle GETADDRINFO = bind("rdma_getaddrinfo");
    public static final MethodHandle FREEADDRINFO = bind("rdma_freeaddrinfo");
    public static final MethodHandle CREATE_SRQ = bind("rdma_create_srq");
    public static final MethodHandle DESTROY_SRQ = bind("rdma_destroy_srq");

    private Cma() {
    }

    private static MethodHandle bind(String name) {
        Library.ensureLoaded();
        return Ibv.withErrno(name);
    }

    /**
     * Calls an int-returning function ({@code handle} from this class, without its capture
     * argument) and returns its non-negative result.
     *
     * @throws VerbsException naming {@code function}, errno and {@code what} when it returned -1
     */
    public static int call(MethodHandle handle, String function, String what, Object... args) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment capture = Native.captureSegment(arena);
            int rc = (int) invoke(handle, capture, args);
            if (rc < 0) {
                throw failure(function, Native.errno(capture), rc, what);
            }
            return rc;
        }
    }

    /**
     * Calls a pointer-returning function and returns the pointer.
     *
     * @throws VerbsException naming {@code function}, errno and {@code what} when it returned NULL
     */
    public static MemorySegment callPointer(MethodHandle handle, String function, String what, Object... args) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment capture = Native.captureSegment(arena);
            MemorySegment p = (MemorySegment) invoke(handle, capture, args);
            if (p.equals(MemorySegment.NULL)) {
                throw failure(function, Native.errno(capture), -1, what);
            }
            return p;
        }
    }

    /** Calls a void function. */
    public static void callVoid(MethodHandle handle, Object... args) {
        try (Arena arena = Arena.ofConfined()) {
            invoke(handle, Native.captureSegment(arena), args);
        }
    }

    /**
     * Calls an int-returning function and returns {@code -errno} when it failed, its result
     * otherwise (for callers that treat some errors as outcomes, such as EAGAIN).
     */
    public static int callErrno(MethodHandle handle, Object... args) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment capture = Native.captureSegment(arena);
            int rc = (int) invoke(handle, capture, args);
            if (rc < 0) {
                int errno = Native.errno(capture);
                return -(errno == 0 ? Errno.EINVAL : errno);
            }
            return rc;
        }
    }

    private static VerbsException failure(String function, int errno, int rc, String what) {
        return new VerbsException(function, errno == 0 ? Errno.EINVAL : errno, what + (rc != -1 ? " (returned " + rc + ")" : ""));
    }

    private static Object invoke(MethodHandle handle, MemorySegment capture, Object[] args) {
        Object[] all = new Object[args.length + 1];
        all[0] = capture;
        System.arraycopy(args, 0, all, 1, args.length);
        try {
            return handle.invokeWithArguments(all);
        } catch (Throwable t) {
            throw Ibv.unchecked(t);
        }
    }
}
