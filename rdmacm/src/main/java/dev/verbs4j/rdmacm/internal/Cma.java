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

    public static final Fn CREATE_EVENT_CHANNEL = new Fn("rdma_create_event_channel");
    public static final Fn DESTROY_EVENT_CHANNEL = new Fn("rdma_destroy_event_channel");
    public static final Fn CREATE_ID = new Fn("rdma_create_id");
    public static final Fn DESTROY_ID = new Fn("rdma_destroy_id");
    public static final Fn CREATE_EP = new Fn("rdma_create_ep");
    public static final Fn DESTROY_EP = new Fn("rdma_destroy_ep");
    public static final Fn BIND_ADDR = new Fn("rdma_bind_addr");
    public static final Fn RESOLVE_ADDR = new Fn("rdma_resolve_addr");
    public static final Fn RESOLVE_ROUTE = new Fn("rdma_resolve_route");
    public static final Fn CREATE_QP = new Fn("rdma_create_qp");
    public static final Fn CREATE_QP_EX = new Fn("rdma_create_qp_ex");
    public static final Fn DESTROY_QP = new Fn("rdma_destroy_qp");
    public static final Fn CONNECT = new Fn("rdma_connect");
    public static final Fn LISTEN = new Fn("rdma_listen");
    public static final Fn GET_REQUEST = new Fn("rdma_get_request");
    public static final Fn ACCEPT = new Fn("rdma_accept");
    public static final Fn REJECT = new Fn("rdma_reject");
    public static final Fn NOTIFY = new Fn("rdma_notify");
    public static final Fn ESTABLISH = new Fn("rdma_establish");
    public static final Fn INIT_QP_ATTR = new Fn("rdma_init_qp_attr");
    public static final Fn DISCONNECT = new Fn("rdma_disconnect");
    public static final Fn JOIN_MULTICAST = new Fn("rdma_join_multicast");
    public static final Fn LEAVE_MULTICAST = new Fn("rdma_leave_multicast");
    public static final Fn JOIN_MULTICAST_EX = new Fn("rdma_join_multicast_ex");
    public static final Fn GET_CM_EVENT = new Fn("rdma_get_cm_event");
    public static final Fn ACK_CM_EVENT = new Fn("rdma_ack_cm_event");
    public static final Fn SET_OPTION = new Fn("rdma_set_option");
    public static final Fn MIGRATE_ID = new Fn("rdma_migrate_id");
    public static final Fn GETADDRINFO = new Fn("rdma_getaddrinfo");
    public static final Fn FREEADDRINFO = new Fn("rdma_freeaddrinfo");
    public static final Fn CREATE_SRQ = new Fn("rdma_create_srq");
    public static final Fn DESTROY_SRQ = new Fn("rdma_destroy_srq");

    private Cma() {
    }

    /**
     * A librdmacm function, bound (with errno captured) when it is first called, once per process:
     * a program binds only the functions it calls (binding one costs more than calling it many
     * times, most of all in a new JVM). A race binds it twice, harmlessly.
     */
    public static final class Fn {
        private final String name;
        private volatile MethodHandle handle;

        private Fn(String name) {
            this.name = name;
        }

        /** The bound function: its parameters are the capture segment, then the C function's. */
        public MethodHandle handle() {
            MethodHandle h = handle;
            if (h == null) {
                Library.ensureLoaded();
                h = Ibv.withErrno(name);
                handle = h;
            }
            return h;
        }

        @Override
        public String toString() {
            return name;
        }
    }

    /**
     * Calls an int-returning function ({@code fn} from this class, without its capture
     * argument) and returns its non-negative result.
     *
     * @throws VerbsException naming {@code function}, errno and {@code what} when it returned -1
     */
    public static int call(Fn fn, String function, String what, Object... args) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment capture = Native.captureSegment(arena);
            int rc = (int) invoke(fn, capture, args);
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
    public static MemorySegment callPointer(Fn fn, String function, String what, Object... args) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment capture = Native.captureSegment(arena);
            MemorySegment p = (MemorySegment) invoke(fn, capture, args);
            if (p.equals(MemorySegment.NULL)) {
                throw failure(function, Native.errno(capture), -1, what);
            }
            return p;
        }
    }

    /** Calls a void function. */
    public static void callVoid(Fn fn, Object... args) {
        try (Arena arena = Arena.ofConfined()) {
            invoke(fn, Native.captureSegment(arena), args);
        }
    }

    /**
     * Calls an int-returning function and returns {@code -errno} when it failed, its result
     * otherwise (for callers that treat some errors as outcomes, such as EAGAIN).
     */
    public static int callErrno(Fn fn, Object... args) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment capture = Native.captureSegment(arena);
            int rc = (int) invoke(fn, capture, args);
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

    private static Object invoke(Fn fn, MemorySegment capture, Object[] args) {
        MethodHandle handle = fn.handle();
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
