package dev.verbs4j.vipl;

import dev.verbs4j.verbs.CompletionQueue;
import dev.verbs4j.verbs.Context;
import dev.verbs4j.verbs.Device;
import dev.verbs4j.verbs.DeviceAttributes;
import dev.verbs4j.verbs.Mtu;
import dev.verbs4j.verbs.PortAttributes;
import dev.verbs4j.verbs.QueuePairTable;
import dev.verbs4j.verbs.TransportType;
import dev.verbs4j.verbs.WorkCompletion;
import dev.verbs4j.verbs.WorkCompletions;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;

/**
 * An open NIC ({@code VIP_NIC_HANDLE}, §3.1, §9.2): a verbs device context (port 1) with the
 * tags, regions, completion queues and VIs made on it, and the listening RDMA CM ids of
 * VipConnectWait. Everything made on the NIC belongs to it; {@link #close()} is VipCloseNic.
 *
 * <p>One lock per NIC (a {@code ReentrantLock}, never a monitor) serializes the functions that
 * change queues (post, done, completion processing); the Wait functions sleep on its conditions
 * or on descriptors, without holding it, so a virtual thread that waits parks and leaves its
 * carrier free.
 */
public final class VipNic implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger("dev.verbs4j.vipl");
    /** The depth of each work queue of a VI, and the most data segments per descriptor (D11), both capped by the device. */
    static final int QUEUE_DEPTH = 256, MAX_SEGMENTS = 32;

    final String name;
    final Context context;
    final DeviceAttributes device;
    final PortAttributes port;
    final int portNumber = 1;
    final int queueDepth;
    final int maxSge;
    final int rdmaDepth;
    /** MaxVI as VipQueryNic reports it and VipCreateVi enforces it: at most the device's queue pairs and its protection domains. */
    final int maxVi;
    /** The reliability levels it provides, as a mask: Unreliable needs UC queue pairs, which only IB transports (IB, RoCE) have. */
    final int reliabilityLevels;
    final ReentrantLock lock = new ReentrantLock();
    final Set<VipPtag> ptags = new LinkedHashSet<>();
    final QueuePairTable<VipMemHandle> regions = new QueuePairTable<>();
    final Set<VipCq> cqs = new LinkedHashSet<>();
    final Set<VipVi> vis = new LinkedHashSet<>();
    final QueuePairTable<VipVi> viByQpn = new QueuePairTable<>();
    final Map<InetAddress, VipListener> listeners = new HashMap<>();
    private final WorkCompletions wcs = new WorkCompletions(32);
    private volatile VipErrorHandler errorHandler;
    private volatile Object errorContext;
    /** Errors detected under the lock, each delivered by the thread that detected it once it lets go of the lock. Under the lock. */
    private final List<PendingReport> pendingReports = new ArrayList<>();
    /** Set (under the lock) when VipCloseNic starts: from then on nothing new is made on the NIC. */
    volatile boolean closed;

    private record PendingReport(Thread thread, VipErrorDescriptor error) {
    }

    VipNic(String name, Context context) {
        this.name = name;
        this.context = context;
        this.device = context.queryDevice();
        this.port = context.queryPort(portNumber);
        this.queueDepth = Math.min(device.maxQpWr(), QUEUE_DEPTH);
        this.maxSge = Math.min(device.maxSge(), MAX_SEGMENTS);
        this.maxVi = Math.min(device.maxQp(), device.maxPd());
        this.rdmaDepth = Math.max(1, Math.min(Math.min(device.maxQpRdAtom(), device.maxQpInitRdAtom()), 8));
        int reliable = VipReliabilityLevel.RELIABLE_DELIVERY.mask() | VipReliabilityLevel.RELIABLE_RECEPTION.mask();
        this.reliabilityLevels = context.device().transportType() == TransportType.IB
                ? reliable | VipReliabilityLevel.UNRELIABLE.mask() : reliable;
    }

    /** VipOpenNic of a device name given: a new NIC handle over a new context of the device. */
    static VipNic open(String deviceName) {
        boolean known;
        try {
            known = Device.list().stream().anyMatch(d -> d.name().equals(deviceName));
        } catch (RuntimeException e) {
            known = false;   // no RDMA devices at all: no name is known
        }
        if (!known) {
            throw new VipException(VipReturn.INVALID_PARAMETER, "VipOpenNic", "no device " + deviceName);
        }
        Context ctx;
        try {
            ctx = Context.open(deviceName);
        } catch (RuntimeException e) {
            throw new VipException(VipReturn.ERROR_RESOURCE, "VipOpenNic", e.getMessage());
        }
        try {
            return new VipNic(deviceName, ctx);
        } catch (RuntimeException e) {
            ctx.close();
            throw new VipException(VipReturn.ERROR_RESOURCE, "VipOpenNic", e.getMessage());
        }
    }

    /** VipQueryNic's attributes (see {@link Vipl#queryNic}). */
    VipNicAttributes attributes() {
        var d = device;
        int gidIndex = Math.max(0, context.preferredGidIndex(portNumber));
        byte[] gid = context.queryGid(portNumber, gidIndex).raw();
        Mtu mtu = port.activeMtu();
        long nativeMtu = mtu == Mtu.UNKNOWN ? 0 : 128L << mtu.code();
        // RDMA Read: under the reliable levels only (a UC queue pair has none, §2.5.1)
        int reliable = VipReliabilityLevel.RELIABLE_DELIVERY.mask() | VipReliabilityLevel.RELIABLE_RECEPTION.mask();
        return new VipNicAttributes(name, Integer.toUnsignedLong(d.hardwareVersion()), Vipl.PROVIDER_VERSION, gid, true,
                ConnectMessage.MAX_DISCRIMINATOR, d.maxMrSize(), d.maxMr(), d.maxMrSize(), maxVi, queueDepth,
                maxSge, d.maxCq(), d.maxCqe(), maxTransfer(), nativeMtu, d.maxPd(), reliabilityLevels, reliable);
    }

    /** VipQuerySystemManagementInfo: the port's or the device's attributes. */
    Object systemManagementInfo(int infoType) {
        return switch (infoType) {
            case Vipl.SMI_PORT_ATTRIBUTES -> context.queryPort(portNumber);
            case Vipl.SMI_DEVICE_ATTRIBUTES -> device;
            default -> throw new VipException(VipReturn.INVALID_PARAMETER, "VipQuerySystemManagementInfo", "info type " + infoType);
        };
    }

    /** MaxTransferSize: the port's largest message, at most 2 GiB - 1. */
    long maxTransfer() {
        return Math.min(port.maxMessageSize(), 0x7FFF_FFFFL);
    }

    /** The device name given to VipOpenNic. */
    public String name() {
        return name;
    }

    /** Whether VipCloseNic closed it. */
    public boolean isClosed() {
        return closed;
    }

    /** VipCloseNic. @throws VipException unless it returns VIP_SUCCESS */
    @Override
    public void close() {
        Vipl.check(Vipl.closeNic(this), "VipCloseNic");
    }

    /**
     * Polls {@code cq} until empty and writes each completion into its descriptor (under the lock),
     * then delivers the asynchronous errors found unless the caller holds the lock.
     */
    void poll(CompletionQueue cq) {
        try {
            pollLocked(cq);
        } finally {
            flushReports();
        }
    }

    private void pollLocked(CompletionQueue cq) {
        lock.lock();
        try {
            if (cq.isClosed()) {
                return;
            }
            int n;
            do {
                n = cq.poll(wcs);
                for (int i = 0; i < n; i++) {
                    WorkCompletion wc = wcs.get(i);
                    VipVi vi = viByQpn.get(wc.qpNum());
                    if (vi != null) {
                        try {
                            ((wc.wrId() & 1) != 0 ? vi.recv : vi.send).complete(wc);
                        } catch (RuntimeException e) {
                            // never lose the rest of the batch over one completion
                            LOG.log(System.Logger.Level.WARNING, "VIPL: a completion could not be processed", e);
                        }
                    }
                }
            } while (n == wcs.capacity());
        } finally {
            lock.unlock();
        }
    }

    /** VipErrorCallback: {@code handler} (null: the default, which logs) gets the asynchronous errors from now on. */
    VipReturn setErrorHandler(VipErrorHandler handler, Object context) {
        this.errorContext = context;
        this.errorHandler = handler;
        return VipReturn.SUCCESS;
    }

    /**
     * Delivers {@code error} to the handler, or logs it (the default handler, §9.9.1). Never while
     * this thread holds the NIC's lock: then it is kept, and {@link #flushReports()} delivers it
     * once the thread has let go of the lock (a handler may call into VIPL, and must not hold up
     * the other threads' calls).
     */
    void report(VipErrorDescriptor error) {
        if (lock.isHeldByCurrentThread()) {
            pendingReports.add(new PendingReport(Thread.currentThread(), error));
            return;
        }
        deliver(error);
    }

    /**
     * Delivers the errors this thread detected while it held the lock; does nothing while it
     * still holds it (a nested call: the outermost one delivers). Called after every section under
     * the lock that may detect an error.
     */
    void flushReports() {
        // read without the lock: a thread always sees what it added itself, and only that is its to deliver
        if (pendingReports.isEmpty() || lock.isHeldByCurrentThread()) {
            return;
        }
        List<VipErrorDescriptor> mine = null;
        lock.lock();
        try {
            if (pendingReports.isEmpty()) {
                return;
            }
            Thread me = Thread.currentThread();
            for (java.util.Iterator<PendingReport> it = pendingReports.iterator(); it.hasNext(); ) {
                PendingReport r = it.next();
                if (r.thread() == me) {
                    if (mine == null) {
                        mine = new ArrayList<>(2);
                    }
                    mine.add(r.error());
                    it.remove();
                }
            }
        } finally {
            lock.unlock();
        }
        if (mine != null) {
            for (VipErrorDescriptor e : mine) {
                deliver(e);
            }
        }
    }

    private void deliver(VipErrorDescriptor error) {
        VipErrorHandler h = errorHandler;
        if (h == null) {
            LOG.log(System.Logger.Level.WARNING, "VIPL asynchronous error {0} on {1} ({2}, VI {3})", error.errorCode(), name,
                    error.resourceCode(), error.vi());
            return;
        }
        try {
            h.handle(errorContext, error);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "VIPL error handler threw", e);
        }
    }

    /**
     * Closes everything made on the NIC, then the context (D16: implicit cleanup); false when
     * another VipCloseNic came first. The NIC is closed for every other call from the start: what
     * is under way finishes or fails, nothing new is made.
     */
    boolean closeAll() {
        List<VipVi> toDestroy;
        List<VipListener> toClose;
        lock.lock();
        try {
            if (closed) {
                return false;
            }
            closed = true;
            toDestroy = new ArrayList<>(vis);
            toClose = new ArrayList<>(listeners.values());
            listeners.clear();
        } finally {
            lock.unlock();
        }
        for (VipVi vi : toDestroy) {
            vi.machine.forceDestroy();
        }
        for (VipListener l : toClose) {
            l.close();
        }
        List<AutoCloseable> rest = new ArrayList<>();
        lock.lock();
        try {
            for (VipCq cq : cqs) {
                cq.destroyed = true;
                cq.clearEntries();
                cq.watch.signal();
                rest.add(cq.cq);
                rest.add(cq.channel);
            }
            for (VipMemHandle m : regions.values()) {
                m.destroyed = true;
                rest.add(m.mr);
            }
            for (VipPtag p : ptags) {
                p.destroyed = true;
                rest.add(p.pd);
            }
            for (AutoCloseable c : rest) {
                try {
                    c.close();
                } catch (Exception ignored) {
                    // closed with the context below anyway
                }
            }
            cqs.clear();
            regions.clear();
            ptags.clear();
            pendingReports.clear();
            wcs.close();
        } finally {
            lock.unlock();
        }
        context.close();
        return true;
    }

    /**
     * Forgets {@code h}, whose region its RdmaArena's close deregistered behind the library's back:
     * the handle is invalid from now on, its tag no longer counts it, and its value may be reused.
     * Under the lock.
     */
    void forget(VipMemHandle h) {
        if (h.destroyed) {
            return;
        }
        h.destroyed = true;
        if (regions.get(h.value()) == h) {
            regions.remove(h.value());
        }
        h.attributes.ptag().users.remove(h);
    }

    @Override
    public String toString() {
        return "VipNic[" + name + (closed ? ", closed]" : "]");
    }
}
