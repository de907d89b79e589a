package dev.verbs4j.verbs;

import dev.verbs4j.bindings.ibv_device;
import dev.verbs4j.bindings.rdma_core_h;
import dev.verbs4j.verbs.internal.Ibv;
import dev.verbs4j.verbs.internal.Library;
import dev.verbs4j.verbs.internal.Native;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * An RDMA device as {@code ibv_get_device_list()} reports it. A snapshot taken when the list was
 * read: it owns no native memory, and {@link #open()} finds the device again by name.
 *
 * @param name          the device name, such as {@code rxe0} or {@code mlx5_0}
 * @param guid          the node GUID in host byte order
 * @param nodeType      the kind of node
 * @param transportType the transport it implements
 * @param ibdevPath     its directory under {@code /sys/class/infiniband}
 */
public record Device(String name, long guid, NodeType nodeType, TransportType transportType, String ibdevPath) {

    /**
     * Every RDMA device of this host, in the order libibverbs lists them (empty when the kernel
     * supports RDMA but has no device).
     *
     * @throws VerbsException when the kernel has no RDMA support at all
     */
    public static List<Device> list() {
        return withDeviceList(devices -> {
            List<Device> out = new ArrayList<>(devices.size());
            for (MemorySegment d : devices) {
                out.add(describe(d));
            }
            return List.copyOf(out);
        });
    }

    /**
     * The device called {@code name}.
     *
     * @throws VerbsException with {@code ENODEV} naming the devices there are, when none has that name
     */
    public static Device byName(String name) {
        for (Device d : list()) {
            if (d.name.equals(name)) {
                return d;
            }
        }
        throw noSuchDevice(name);
    }

    /** Opens this device. The caller owns the returned context and must close it. */
    public Context open() {
        return Context.open(name);
    }

    /**
     * The board id the driver publishes in sysfs ({@code board_id}), or empty when it has none.
     */
    public String boardId() {
        try {
            Path p = Path.of(ibdevPath, "board_id");
            return Files.isReadable(p) ? Files.readString(p).strip() : "";
        } catch (java.io.IOException e) {
            return "";
        }
    }

    static VerbsException noSuchDevice(String name) {
        List<String> names = list().stream().map(Device::name).toList();
        return new VerbsException("ibv_get_device_list", Errno.ENODEV,
                "no RDMA device named '" + name + "' (devices here: " + (names.isEmpty() ? "none" : String.join(", ", names)) + ")");
    }

    static Device describe(MemorySegment dev) {
        return new Device(
                ibv_device.name(dev).getString(0),
                Long.reverseBytes(rdma_core_h.ibv_get_device_guid(dev)),
                NodeType.of(ibv_device.node_type(dev)),
                TransportType.of(ibv_device.transport_type(dev)),
                ibv_device.ibdev_path(dev).getString(0));
    }

    /**
     * Runs {@code action} on the devices of a freshly read device list (each {@code struct
     * ibv_device} segment valid only during the call), then frees the list.
     */
    static <T> T withDeviceList(Function<List<MemorySegment>, T> action) {
        Library.ensureLoaded();
        MemorySegment list;
        int count;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment capture = Native.captureSegment(arena);
            MemorySegment num = arena.allocate(ValueLayout.JAVA_INT);
            list = Ibv.getDeviceList(capture, num);
            if (list.equals(MemorySegment.NULL)) {
                int errno = Native.errno(capture);
                throw new VerbsException("ibv_get_device_list", errno, noDevicesHint(errno));
            }
            count = num.get(ValueLayout.JAVA_INT, 0);
        }
        try {
            MemorySegment array = Native.sized(list, (count + 1L) * ValueLayout.ADDRESS.byteSize());
            List<MemorySegment> devices = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                devices.add(Native.sized(array.getAtIndex(ValueLayout.ADDRESS, i), ibv_device.sizeof()));
            }
            return action.apply(devices);
        } finally {
            rdma_core_h.ibv_free_device_list(list);
        }
    }

    private static String noDevicesHint(int errno) {
        if (errno == Errno.ENOSYS || errno == Errno.ENOENT) {
            return "this kernel offers no RDMA devices (no /sys/class/infiniband_verbs): load an RDMA driver,"
                    + " e.g. Soft-RoCE ('modprobe rdma_rxe; rdma link add rxe0 type rxe netdev eth0'),"
                    + " or run the program under bin/softroce";
        }
        return null;
    }
}
