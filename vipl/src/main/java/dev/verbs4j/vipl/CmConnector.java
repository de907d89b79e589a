package dev.verbs4j.vipl;

import dev.verbs4j.rdmacm.CmEvent;
import dev.verbs4j.rdmacm.CmEventType;
import dev.verbs4j.rdmacm.CmId;
import dev.verbs4j.rdmacm.ConnectionParameters;
import dev.verbs4j.rdmacm.EventChannel;
import dev.verbs4j.rdmacm.PortSpace;
import dev.verbs4j.verbs.Closeables;

import java.net.InetSocketAddress;
import java.time.Duration;

/**
 * The RDMA CM side of VIPL's connections: the active side of VipConnectRequest (resolve address,
 * resolve route, connect, established), the passive side of VipConnectWait, VipConnectAccept and
 * VipConnectReject, and the watch of an established connection. It changes a VI only through
 * {@link ConnectSteps}; the channels and ids it creates pass to the VI once connected.
 */
final class CmConnector {

    private static final System.Logger LOG = System.getLogger("dev.verbs4j.vipl");

    /** Receiver-not-ready retries: none, so that a missing receive is an error at once (D14). */
    static final int RNR_RETRY = 0;
    private static final Duration ACCEPT_WAIT = Duration.ofSeconds(10);

    private CmConnector() {
    }

    /** VipConnectRequest's connection dance for an attempt that has begun (the VI Pending Connect). */
    static VipReturn request(ConnectSteps at, VipNetAddress local, VipNetAddress remote, long timeoutMillis) {
        long deadline = timeoutMillis == Vipl.INFINITE ? Long.MAX_VALUE : System.nanoTime() + timeoutMillis * 1_000_000;
        try {
            EventChannel ch = EventChannel.create();
            at.adopt(ch);
            CmId cmId = ch.createId(PortSpace.TCP);
            Duration step = Duration.ofMillis(Math.max(1, Math.min(timeoutMillis, 5_000)));
            cmId.resolveAddress(new InetSocketAddress(local.inetAddress(), 0), new InetSocketAddress(remote.inetAddress(), Vipl.port()), step);
            CmEvent ev = next(ch, deadline);
            if (ev == null) {
                return at.fail(VipReturn.TIMEOUT);
            }
            if (ev.type() != CmEventType.ADDR_RESOLVED) {
                return at.fail(VipReturn.NOT_REACHABLE);
            }
            if (!cmId.context().name().equals(at.nicName())) {
                return at.fail(VipReturn.INVALID_PARAMETER);
            }
            cmId.resolveRoute(step);
            ev = next(ch, deadline);
            if (ev == null) {
                return at.fail(VipReturn.TIMEOUT);
            }
            if (ev.type() != CmEventType.ROUTE_RESOLVED) {
                return at.fail(VipReturn.NOT_REACHABLE);
            }
            at.toInit(cmId);
            cmId.connect(parameters(at, ConnectMessage.of(at.attributes(), remote.discriminator(), local.discriminator()).encode()));
            ev = next(ch, deadline);
            if (ev == null) {
                return at.fail(VipReturn.TIMEOUT);
            }
            if (ev.type() == CmEventType.REJECTED) {
                byte[] pd = ev.privateData();
                boolean byConsumer = pd.length >= 2 && pd[0] == ConnectMessage.REJECT[0] && pd[1] == ConnectMessage.REJECT[1];
                return at.fail(byConsumer ? VipReturn.REJECT : VipReturn.NOT_REACHABLE);
            }
            if (ev.type() != CmEventType.CONNECT_RESPONSE) {
                return at.fail(VipReturn.NOT_REACHABLE);
            }
            ConnectMessage reply = ConnectMessage.decode(ev.privateData());
            if (reply == null) {
                return at.fail(VipReturn.ERROR_RESOURCE);
            }
            at.readyToSend(cmId);
            cmId.establish();
            at.connected(cmId, ch, reply.attributes());
            watch(at, ch);
            return VipReturn.SUCCESS;
        } catch (RuntimeException e) {
            // a step failed, or the attempt was cancelled (its channel closed under it)
            return at.fail(VipReturn.ERROR_RESOURCE);
        }
    }

    /** VipConnectAccept's connection dance for an attempt that has begun and consumed {@code conn}. */
    static VipReturn accept(ConnectSteps at, VipConnHandle conn) {
        boolean migrated = false;
        try {
            EventChannel ch = EventChannel.create();
            at.adopt(ch);
            conn.id.migrate(ch);
            migrated = true;
            at.toInit(conn.id);
            at.readyToSend(conn.id);
            conn.id.accept(parameters(at, ConnectMessage.of(at.attributes(), new byte[0], new byte[0]).encode()));
            CmEvent ev = next(ch, System.nanoTime() + ACCEPT_WAIT.toNanos());
            if (ev == null || ev.type() != CmEventType.ESTABLISHED) {
                return at.fail(VipReturn.ERROR_RESOURCE);
            }
            at.connected(conn.id, ch, conn.remoteAttributes);
            watch(at, ch);
            return VipReturn.SUCCESS;
        } catch (RuntimeException e) {
            if (!migrated) {
                // still the listener's: refused by destroying it
                Closeables.closeLogged(LOG, conn.id);
            }
            return at.fail(VipReturn.ERROR_RESOURCE);
        }
    }

    /** VipConnectReject: the requester's VipConnectRequest returns REJECT; the handle is consumed. */
    static VipReturn reject(VipConnHandle conn) {
        conn.nic.lock.lock();
        try {
            // taken under the lock, as VipConnectAccept takes it: only one of them uses the request's id
            if (conn.consumed || conn.nic.closed) {
                return VipReturn.INVALID_PARAMETER;
            }
            conn.consumed = true;
        } finally {
            conn.nic.lock.unlock();
        }
        try {
            conn.id.reject(ConnectMessage.REJECT);
        } catch (RuntimeException ignored) {
            // the requester went away (or the NIC is being closed): nobody to tell
        } finally {
            try {
                conn.id.close();
            } catch (RuntimeException ignored) {
                // closed with its listener already
            }
        }
        return VipReturn.SUCCESS;
    }

    /** VipConnectWait: the next request for {@code localAddr}, from the NIC's listener on its host address. */
    static VipConnHandle await(VipNic nic, VipNetAddress localAddr, long timeoutMillis) {
        VipListener l;
        nic.lock.lock();
        try {
            if (nic.closed) {
                throw new VipException(VipReturn.INVALID_PARAMETER, "VipConnectWait", "bad NIC handle");
            }
            l = nic.listeners.get(localAddr.inetAddress());
            if (l == null) {
                try {
                    l = new VipListener(nic, localAddr.inetAddress());
                } catch (RuntimeException e) {
                    throw new VipException(VipReturn.ERROR_RESOURCE, "VipConnectWait", e.getMessage());
                }
                if (!l.onDevice(nic.name)) {
                    l.close();
                    throw new VipException(VipReturn.INVALID_PARAMETER, "VipConnectWait",
                            localAddr + " is not an address of " + nic.name);
                }
                nic.listeners.put(localAddr.inetAddress(), l);
            }
        } finally {
            nic.lock.unlock();
        }
        VipConnHandle c;
        try {
            c = l.await(localAddr.discriminator(), timeoutMillis);
        } catch (RuntimeException e) {
            if (nic.closed) {
                throw new VipException(VipReturn.INVALID_PARAMETER, "VipConnectWait", "the NIC was closed while waiting");
            }
            throw new VipException(VipReturn.ERROR_RESOURCE, "VipConnectWait", e.getMessage());
        }
        if (c == null) {
            throw new VipException(VipReturn.TIMEOUT, "VipConnectWait",
                    "no request for " + localAddr + " within " + timeoutMillis + " ms");
        }
        return c;
    }

    /** Ends the connection of {@code id} at the RDMA CM level; the peer learns of it at once. */
    static void disconnect(CmId id) {
        try {
            id.disconnect();
        } catch (RuntimeException ignored) {
            // the peer may have disconnected first
        }
    }

    private static ConnectionParameters parameters(ConnectSteps at, byte[] privateData) {
        return new ConnectionParameters(privateData, at.rdmaDepth(), at.rdmaDepth(), false, 7, RNR_RETRY, false, at.qpNum());
    }

    private static CmEvent next(EventChannel ch, long deadline) {
        while (true) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return null;
            }
            CmEvent ev = ch.getEvent(Duration.ofNanos(Math.min(left, 1_000_000_000L)));
            if (ev != null) {
                return ev;
            }
        }
    }

    /**
     * Watches the connection's event channel while the VI is connected: the peer's disconnect (or
     * its process ending, or the device going away) is handed to the VI, which puts a Connected VI
     * in the Error state and reports the asynchronous CONN_LOST error (§9.9.1), so the consumer
     * learns of it before its next data transfer (§5.4 only requires it by then). The watch ends
     * when this side disconnects (the channel is closed) or the VI is destroyed.
     */
    private static void watch(ConnectSteps vi, EventChannel ch) {
        Thread.ofVirtual().name("VIPL connection " + vi.nicName()).start(() -> {
            while (true) {
                CmEvent ev;
                try {
                    ev = ch.getEvent(Duration.ofSeconds(1));
                } catch (RuntimeException closed) {
                    return;
                }
                if (!vi.connectionEvent(ch, ev == null ? null : ev.type())) {
                    return;
                }
            }
        });
    }
}
