package dev.verbs4j.vipl;

import dev.verbs4j.verbs.CompletionQueue;
import dev.verbs4j.verbs.Context;
import dev.verbs4j.verbs.DeviceAttributes;
import dev.verbs4j.verbs.PortAttributes;
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

/**
 * An open NIC ({@code VIP_NIC_HANDLE}, §3.1, §9.2): a verbs device context (port 1) with the
 * tags, regions, completion queues and VIs made on it, and the listening RDMA CM ids of
 * VipConnectWait. Everything made on the NIC belongs to it; {@link #close()} is VipCloseNic.
 *
 * <p>One lock per NIC serializes the functions that change queues (post, done, completion
 * processing); blocking waits do not hold it while they sleep.
 */
public final class VipNic implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger("dev.verbs4j.vipl");

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
    final Object lock = new Object();
    final Set<VipPtag> ptags = new LinkedHashSet<>();
    final IntMap<VipMemHandle> regions = new IntMap<>();
    final Set<VipCq> cqs = new LinkedHashSet<>();
    final Set<VipVi> vis = new LinkedHashSet<>();
    final IntMap<VipVi> viByQpn = new IntMap<>();
    final Map<InetAddress, VipListener> listeners = new HashMap<>();
    private final WorkCompletions wcs = new WorkCompletions(32);
    private volatile VipErrorHandler errorHandler;
    private volatile Object errorContext;
    boolean closed;

    VipNic(String name, Context context) {
        this.name = name;
        this.context = context;
        this.device = context.queryDevice();
        this.port = context.queryPort(portNumber);
        this.queueDepth = Math.min(device.maxQpWr(), Vipl.QUEUE_DEPTH);
        this.maxSge = Math.min(device.maxSge(), Vipl.MAX_SEGMENTS);
        this.maxVi = Math.min(device.maxQp(), device.maxPd());
        this.rdmaDepth = Math.max(1, Math.min(Math.min(device.maxQpRdAtom(), device.maxQpInitRdAtom()), 8));
        int reliable = VipReliabilityLevel.RELIABLE_DELIVERY.mask() | VipReliabilityLevel.RELIABLE_RECEPTION.mask();
        this.reliabilityLevels = context.device().transportType() == TransportType.IB
                ? reliable | VipReliabilityLevel.UNRELIABLE.mask() : reliable;
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

    /** Polls {@code cq} until empty and writes each completion into its descriptor. Under the lock. */
    void poll(CompletionQueue cq) {
        synchronized (lock) {
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
        }
    }

    void setErrorHandler(VipErrorHandler handler, Object context) {
        this.errorContext = context;
        this.errorHandler = handler;
    }

    /** Delivers {@code error} to the handler, or logs it (the default handler, §9.9.1). */
    void report(VipErrorDescriptor error) {
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

    /** Closes everything made on the NIC, then the context (D16: implicit cleanup). */
    void closeAll() {
        for (VipVi vi : new ArrayList<>(vis)) {
            vi.forceDestroy();
        }
        for (VipListener l : listeners.values()) {
            l.close();
        }
        listeners.clear();
        List<AutoCloseable> rest = new ArrayList<>();
        for (VipCq cq : cqs) {
            cq.destroyed = true;
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
        wcs.close();
        context.close();
        closed = true;
    }

    @Override
    public String toString() {
        return "VipNic[" + name + (closed ? ", closed]" : "]");
    }
}
