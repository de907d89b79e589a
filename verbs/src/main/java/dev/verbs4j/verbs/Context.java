package dev.verbs4j.verbs;

import dev.verbs4j.bindings.ibv_context;
import dev.verbs4j.bindings.ibv_device;
import dev.verbs4j.bindings.ibv_device_attr_ex;
import dev.verbs4j.bindings.ibv_gid_entry;
import dev.verbs4j.bindings.ibv_port_attr;
import dev.verbs4j.bindings.rdma_core_h;
import dev.verbs4j.bindings.verbs_context;
import dev.verbs4j.bindings.ibv_async_event;
import dev.verbs4j.bindings.ibv_qp;
import dev.verbs4j.verbs.internal.ExtendedOps;
import dev.verbs4j.verbs.event.DescriptorWaiter;
import dev.verbs4j.verbs.internal.Libc;
import dev.verbs4j.verbs.internal.Library;
import dev.verbs4j.verbs.internal.Ibv;
import dev.verbs4j.verbs.internal.Native;

import java.lang.foreign.Arena;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import java.lang.invoke.MethodHandle;

/**
 * An open RDMA device ({@code struct ibv_context}, from {@code ibv_open_device()}). The root of
 * every verbs object: closing it closes everything created from it first, then calls {@code
 * ibv_close_device()}. The native context belongs to this object; query results are heap
 * snapshots that stay valid after close.
 */
public final class Context extends NativeResource {

    /** {@code ibv_get_async_event}, bound when a program first waits for an asynchronous event. */
    private static final class GetAsyncEvent {
        static final MethodHandle HANDLE = Ibv.withErrno("ibv_get_async_event");
    }

    private static final int ENODATA = Errno.ENODATA;
    /** A GID as {@code ibv_query_gid} writes it: 16 bytes, no alignment. */
    private static final MemoryLayout GID_LAYOUT = MemoryLayout.sequenceLayout(Gid.BYTES, ValueLayout.JAVA_BYTE);

    private final Device device;
    private final MemorySegment context;
    private final Map<Long, NativeResource> objects = new ConcurrentHashMap<>();
    private final DescriptorWaiter asyncWaiter;

    private final boolean owned;

    private Context(Device device, MemorySegment context, boolean owned) {
        super(null);
        this.device = device;
        this.owned = owned;
        this.context = context;
        Libc.setNonBlocking(ibv_context.async_fd(context), true);
        this.asyncWaiter = new DescriptorWaiter(ibv_context.async_fd(context));
    }

    /**
     * Opens the device called {@code name}.
     *
     * @throws VerbsException {@code ENODEV} when there is no such device, or the errno of {@code ibv_open_device}
     */
    public static Context open(String name) {
        Context opened = Device.withDeviceList(devices -> {
            for (MemorySegment dev : devices) {
                if (ibv_device.name(dev).getString(0).equals(name)) {
                    return openDevice(dev);
                }
            }
            return null;
        });
        if (opened == null) {
            throw Device.noSuchDevice(name);
        }
        return opened;
    }

    /**
     * Opens the first device libibverbs lists.
     *
     * @throws VerbsException {@code ENODEV} when there is none
     */
    public static Context openFirst() {
        Context opened = Device.withDeviceList(devices -> devices.isEmpty() ? null : openDevice(devices.get(0)));
        if (opened == null) {
            throw new VerbsException("ibv_get_device_list", Errno.ENODEV, "no RDMA device on this host");
        }
        return opened;
    }

    private static Context openDevice(MemorySegment dev) {
        Device device = Device.describe(dev);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment capture = Native.captureSegment(arena);
            MemorySegment ctx = Ibv.openDevice(capture, dev);
            if (ctx.equals(MemorySegment.NULL)) {
                throw new VerbsException("ibv_open_device", Native.errno(capture), device.name());
            }
            return new Context(device, Native.sized(ctx, ibv_context.sizeof()), true);
        }
    }

    /** The device this context was opened on. */
    public Device device() {
        return device;
    }

    /** The device name. */
    public String name() {
        return device.name();
    }

    /** Number of completion vectors (interrupt lines) the device offers. */
    public int numCompVectors() {
        try (Use held = use()) {
            return ibv_context.num_comp_vectors(context);
        }
    }

    /** The file descriptor on which asynchronous events arrive. */
    public int asyncFd() {
        try (Use held = use()) {
            return ibv_context.async_fd(context);
        }
    }

    /**
     * The device's attributes through {@code ibv_query_device_ex()}, falling back to {@code
     * ibv_query_device()} as the C inline does when the provider lacks the extended query.
     */
    public DeviceAttributes queryDevice() {
        try (Use held = use()) {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment attr = arena.allocate(ibv_device_attr_ex.layout());
                MemorySegment op = ExtendedOps.op(context, verbs_context.query_device_ex$offset());
                int rc = Errno.EOPNOTSUPP;
                if (!op.equals(MemorySegment.NULL)) {
                    rc = Ibv.queryDeviceEx(op, context, MemorySegment.NULL, attr, ibv_device_attr_ex.sizeof());
                }
                if (rc == Errno.EOPNOTSUPP || rc == Errno.ENOSYS) {
                    attr.fill((byte) 0);
                    rc = rdma_core_h.ibv_query_device(context, ibv_device_attr_ex.orig_attr(attr));
                }
                Ibv.check(rc, "ibv_query_device_ex", name());
                return new DeviceAttributes(Native.snapshot(attr), ibv_context.num_comp_vectors(context));
            }
        }
    }

    /**
     * The full attributes of {@code port} through the provider's {@code query_port}, as the C
     * {@code ibv_query_port()} macro does (the exported symbol fills only a legacy prefix).
     *
     * @param port the port number, from 1
     */
    public PortAttributes queryPort(int port) {
        try (Use held = use()) {
            checkPort(port);
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment attr = arena.allocate(ibv_port_attr.layout());
                MemorySegment op = ExtendedOps.op(context, verbs_context.query_port$offset());
                int rc = op.equals(MemorySegment.NULL)
                        ? rdma_core_h.ibv_query_port(context, (byte) port, attr)
                        : Ibv.queryPort(op, context, (byte) port, attr, ibv_port_attr.sizeof());
                Ibv.check(rc, "ibv_query_port", name() + " port " + port);
                return new PortAttributes(port, Native.snapshot(attr));
            }
        }
    }

    /**
     * The GID at {@code index} of {@code port}'s table ({@code ibv_query_gid()}); an unused entry
     * reads as the zero GID, as in C.
     */
    public Gid queryGid(int port, int index) {
        return queryTableEntry("ibv_query_gid", Ibv::queryGid, port, index, GID_LAYOUT,
                gid -> Gid.of(gid.toArray(ValueLayout.JAVA_BYTE)));
    }

    /**
     * The entry at {@code index} of {@code port}'s GID table with its type and network device
     * ({@code ibv_query_gid_ex()}), or empty when the entry is unused.
     */
    public Optional<GidEntry> queryGidEntry(int port, int index) {
        try (Use held = use()) {
            checkPort(port);
            checkIndex(index);
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment entry = arena.allocate(ibv_gid_entry.layout());
                int rc = rdma_core_h._ibv_query_gid_ex(context, port, index, entry, 0, ibv_gid_entry.sizeof());
                if (rc == ENODATA) {
                    return Optional.empty();
                }
                Ibv.check(rc, "ibv_query_gid_ex", name() + " port " + port + " index " + index);
                return Optional.of(gidEntry(entry));
            }
        }
    }

    /** Every valid GID entry of every port ({@code ibv_query_gid_table()}). */
    public List<GidEntry> queryGidTable() {
        try (Use held = use()) {
            int ports = queryDevice().physPortCount();
            long max = 0;
            for (int p = 1; p <= ports; p++) {
                max += queryPort(p).gidTableLength();
            }
            if (max == 0) {
                return List.of();
            }
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment entries = arena.allocate(ibv_gid_entry.layout(), max);
                long n = rdma_core_h._ibv_query_gid_table(context, entries, max, 0, ibv_gid_entry.sizeof());
                if (n < 0) {
                    throw new VerbsException("ibv_query_gid_table", (int) -n, name());
                }
                List<GidEntry> out = new ArrayList<>((int) n);
                for (long i = 0; i < n; i++) {
                    out.add(gidEntry(entries.asSlice(i * ibv_gid_entry.sizeof(), ibv_gid_entry.sizeof())));
                }
                return List.copyOf(out);
            }
        }
    }

    /** The P_Key at {@code index} of {@code port}'s partition table, in host byte order. */
    public int queryPkey(int port, int index) {
        return queryTableEntry("ibv_query_pkey", Ibv::queryPkey, port, index, ValueLayout.JAVA_SHORT,
                pkey -> Short.toUnsignedInt(Short.reverseBytes(pkey.get(ValueLayout.JAVA_SHORT, 0))));
    }

    /** A query of one entry of a port's table that sets errno: {@code ibv_query_gid} or {@code ibv_query_pkey}. */
    @FunctionalInterface
    private interface TableQuery {
        int call(MemorySegment capture, MemorySegment context, byte port, int index, MemorySegment out);
    }

    /**
     * Entry {@code index} of {@code port}'s table: {@code query} fills {@code layout} in confined
     * memory, which {@code read} turns into the value before it is freed.
     */
    private <T> T queryTableEntry(String function, TableQuery query, int port, int index, MemoryLayout layout,
                                  Function<MemorySegment, T> read) {
        try (Use held = use()) {
            checkPort(port);
            checkIndex(index);
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment capture = Native.captureSegment(arena);
                MemorySegment out = arena.allocate(layout);
                if (query.call(capture, context, (byte) port, index, out) != 0) {
                    throw new VerbsException(function, Native.errno(capture), name() + " port " + port + " index " + index);
                }
                return read.apply(out);
            }
        }
    }

    /** Allocates a protection domain ({@code ibv_alloc_pd()}). */
    public ProtectionDomain allocateProtectionDomain() {
        return new ProtectionDomain(this);
    }

    /**
     * Opens an XRC domain.
     *
     * @throws VerbsException {@code EOPNOTSUPP} when the device has no XRC
     */
    public XrcDomain openXrcDomain() {
        return new XrcDomain(this);
    }

    /** Creates a completion event channel ({@code ibv_create_comp_channel()}). */
    public CompletionChannel createCompletionChannel() {
        return new CompletionChannel(this);
    }

    /** Creates a completion queue of at least {@code entries} entries, without events. */
    public CompletionQueue createCompletionQueue(int entries) {
        return new CompletionQueue(this, entries, null, 0);
    }

    /**
     * Creates a completion queue whose events go to {@code channel} (may be null), interrupting on
     * completion vector {@code compVector}.
     */
    public CompletionQueue createCompletionQueue(int entries, CompletionChannel channel, int compVector) {
        return new CompletionQueue(this, entries, channel, compVector);
    }

    /**
     * Creates a completion queue for the extended polling API ({@code ibv_create_cq_ex()}) that
     * reports the {@link ExtendedPoller} {@code WITH_*} fields in {@code wcFlags}.
     *
     * @throws VerbsException {@code EOPNOTSUPP} when the provider lacks it
     */
    public CompletionQueue createExtendedCompletionQueue(int entries, CompletionChannel channel, int compVector, long wcFlags) {
        return new CompletionQueue(this, entries, channel, compVector, wcFlags);
    }

    /**
     * The GID index to use on {@code port} when none is given: the first RoCE v2 entry holding an
     * IPv4-mapped address (as RDMA CM picks for IPv4), else the first RoCE v2 entry, else 0.
     */
    public int preferredGidIndex(int port) {
        List<GidEntry> entries = queryGidTable().stream().filter(e -> e.port() == port).toList();
        return entries.stream().filter(e -> e.type() == GidType.ROCE_V2 && isIpv4Mapped(e.gid())).findFirst()
                .or(() -> entries.stream().filter(e -> e.type() == GidType.ROCE_V2).findFirst())
                .map(GidEntry::index).orElse(0);
    }

    private static boolean isIpv4Mapped(Gid gid) {
        return gid.subnetPrefix() == 0 && (gid.interfaceId() >>> 32) == 0xffff;
    }

    /**
     * Waits up to {@code timeout} for an asynchronous event ({@code ibv_get_async_event()}), copies
     * it out and acknowledges it ({@code ibv_ack_async_event()}); null on timeout.
     *
     * @throws IllegalStateException when the context is closed, also while waiting
     */
    public AsyncEvent awaitAsyncEvent(Duration timeout) {
        return asyncWaiter.await(timeout, this::tryGetAsyncEvent);
    }

    private AsyncEvent tryGetAsyncEvent() {
        try (Use held = use(); Arena arena = Arena.ofConfined()) {
            MemorySegment capture = Native.captureSegment(arena);
            MemorySegment event = arena.allocate(ibv_async_event.layout());
            int rc;
            try {
                rc = (int) GetAsyncEvent.HANDLE.invokeExact(capture, context, event);
            } catch (Throwable t) {
                throw Ibv.unchecked(t);
            }
            if (rc != 0 && DescriptorWaiter.nonePending(Native.errno(capture), "ibv_get_async_event", name())) {
                return null;
            }
            // acknowledged whatever happens: destroying the object it names waits for it
            try {
                AsyncEventType type = AsyncEventType.of(ibv_async_event.event_type(event));
                MemorySegment element = ibv_async_event.element(event);
                AsyncEvent copy;
                if (type.aboutPort()) {
                    copy = new AsyncEvent(type, null, -1, element.get(ValueLayout.JAVA_INT, 0));
                } else if (type == AsyncEventType.DEVICE_FATAL || type == AsyncEventType.UNKNOWN) {
                    copy = new AsyncEvent(type, null, -1, 0);
                } else {
                    MemorySegment pointer = element.get(ValueLayout.ADDRESS, 0);
                    int qpNum = type.aboutQueuePair() ? ibv_qp.qp_num(Native.sized(pointer, ibv_qp.sizeof())) : -1;
                    copy = new AsyncEvent(type, objects.get(pointer.address()), qpNum, 0);
                }
                return copy;
            } finally {
                rdma_core_h.ibv_ack_async_event(event);
            }
        }
    }

    /**
     * Makes registered memory safe across fork() in this process ({@code ibv_fork_init()}). As in
     * C it must come before the first device is opened; a no-op where the kernel needs none.
     *
     * @throws VerbsException {@code EINVAL} when a device was already opened
     */
    public static void forkInit() {
        Library.ensureLoaded();
        int rc = rdma_core_h.ibv_fork_init();
        if (rc != 0) {
            throw new VerbsException("ibv_fork_init", Math.abs(rc),
                    rc == Errno.EINVAL ? "call it before opening any device in this process" : null);
        }
    }

    void track(long address, NativeResource object) {
        objects.put(address, object);
    }

    void untrack(long address) {
        objects.remove(address);
    }

    /** A context on an {@code ibv_context} that somebody else (librdmacm) opened and closes. */
    static Context borrow(MemorySegment ibvContext) {
        MemorySegment ctx = Native.sized(ibvContext, ibv_context.sizeof());
        return new Context(Device.describe(Native.sized(ibv_context.device(ctx), ibv_device.sizeof())), ctx, false);
    }

    /** A context on an {@code ibv_context} that somebody else made and frees, described as {@code device}. */
    static Context borrow(MemorySegment ibvContext, Device device) {
        return new Context(device, Native.sized(ibvContext, ibv_context.sizeof()), false);
    }

    @Override
    MemorySegment handle() {
        ensureOpen();
        return context;
    }

    private static GidEntry gidEntry(MemorySegment entry) {
        return new GidEntry(
                Gid.of(ibv_gid_entry.gid(entry).toArray(ValueLayout.JAVA_BYTE)),
                ibv_gid_entry.gid_index(entry),
                ibv_gid_entry.port_num(entry),
                GidType.of(ibv_gid_entry.gid_type(entry)),
                ibv_gid_entry.ndev_ifindex(entry));
    }

    private static void checkPort(int port) {
        if (port < 1 || port > 255) {
            throw new IllegalArgumentException("port must be between 1 and 255, got " + port);
        }
    }

    private static void checkIndex(int index) {
        if (index < 0) {
            throw new IllegalArgumentException("table index must not be negative, got " + index);
        }
    }


    @Override
    protected void destroy() {
        asyncWaiter.close();
        if (owned) {
            int rc = rdma_core_h.ibv_close_device(context);
            Ibv.check(rc, "ibv_close_device", name());
        }
    }

    @Override
    protected String describe() {
        return "Context " + device.name();
    }
}
