package dev.verbs4j.vipl;

import dev.verbs4j.rdmacm.CmConnector;
import dev.verbs4j.rdmacm.CmEvent;
import dev.verbs4j.rdmacm.CmEventType;
import dev.verbs4j.rdmacm.CmId;
import dev.verbs4j.rdmacm.CmTimeouts;
import dev.verbs4j.rdmacm.ConnectionParameters;
import dev.verbs4j.rdmacm.EventChannel;
import dev.verbs4j.rdmacm.Failure;
import dev.verbs4j.rdmacm.PortSpace;
import dev.verbs4j.rdmacm.RdmaConnectionException;
import dev.verbs4j.rdmacm.RdmaTimeoutException;
import dev.verbs4j.verbs.Closeables;

import java.net.InetSocketAddress;
import java.time.Duration;

/**
 * The RDMA CM side of VIPL's connections: the active side of VipConnectRequest (resolve address,
 * resolve route, connect, established), the passive side of VipConnectWait, VipConnectAccept and
 * VipConnectReject, and the watch of an established connection. It changes a VI only through
 * {@link ConnectSteps}; the channels and ids it creates pass to the VI once connected.
 */
final class ViConnector {

    private static final System.Logger LOG = System.getLogger("dev.verbs4j.vipl");

    /** Receiver-not-ready retries: none, so that a missing receive is an error at once (D14). */
    static final int RNR_RETRY = 0;
    private static final Duration ACCEPT_WAIT = Duration.ofSeconds(10);
    /** VIPL's INFINITE timeout as a connect's limit. */
    private static final Duration FOREVER = Duration.ofDays(365_000);

    private ViConnector() {
    }

    /** VipConnectRequest's connection dance for an attempt that has begun (the VI Pending Connect). */
    static VipReturn request(ConnectSteps at, VipNetAddress local, VipNetAddress remote, long timeoutMillis) {
        // the librdmacm resolution timeouts at most 5 s each, as C VIPL's; the whole is the caller's
        Duration whole = timeoutMillis == Vipl.INFINITE ? FOREVER : Duration.ofMillis(Math.max(1, timeoutMillis));
        Duration step = Duration.ofMillis(Math.max(1, Math.min(timeoutMillis, 5_000)));
        ConnectMessage[] reply = new ConnectMessage[1];
        try {
            EventChannel ch = EventChannel.create();
            at.adopt(ch);
            CmId cmId = ch.createId(PortSpace.TCP);
            CmConnector.connect(cmId, new InetSocketAddress(local.inetAddress(), 0),
                    new InetSocketAddress(remote.inetAddress(), Vipl.port()), new CmTimeouts(step, step, whole, whole),
                    new CmConnector.Steps() {
                        @Override
                        public void addressResolved(CmId resolved) {
                            if (!resolved.context().name().equals(at.nicName())) {
                                throw new VipException(VipReturn.INVALID_PARAMETER, "VipConnectRequest",
                                        remote + " is not reached through " + at.nicName());
                            }
                        }

                        @Override
                        public ConnectionParameters routeResolved(CmId routed) {
                            at.toInit(routed);
                            return parameters(at, ConnectMessage.of(at.attributes(), remote.discriminator(),
                                    local.discriminator()).encode());
                        }

                        @Override
                        public boolean connectResponse(CmId answered, CmEvent response) {
                            reply[0] = ConnectMessage.decode(response.privateData());
                            if (reply[0] == null) {
                                throw new VipException(VipReturn.ERROR_RESOURCE, "VipConnectRequest",
                                        "the peer's reply is no VIPL connect message");
                            }
                            at.readyToSend(answered);
                            return true;
                        }
                    });
            if (reply[0] == null) { // ESTABLISHED without CONNECT_RESPONSE: not a VIPL peer's answer
                return at.fail(VipReturn.NOT_REACHABLE);
            }
            at.connected(cmId, ch, reply[0].attributes());
            watch(at, ch);
            return VipReturn.SUCCESS;
        } catch (RdmaTimeoutException e) {
            return at.fail(VipReturn.TIMEOUT);
        } catch (RdmaConnectionException e) {
            return at.fail(outcome(e));
        } catch (VipException e) {
            return at.fail(e.code());
        } catch (RuntimeException e) {
            // a step failed, or the attempt was cancelled (its channel closed under it)
            return at.fail(VipReturn.ERROR_RESOURCE);
        }
    }

    /** What VipConnectRequest returns for a connect that failed: REJECT when the peer's consumer rejected it. */
    private static VipReturn outcome(RdmaConnectionException e) {
        if (e.kind() != Failure.Kind.EVENT) {
            return VipReturn.ERROR_RESOURCE;
        }
        byte[] pd = e.privateData();
        boolean byConsumer = e.event() == CmEventType.REJECTED && pd.length >= 2
                && pd[0] == ConnectMessage.REJECT[0] && pd[1] == ConnectMessage.REJECT[1];
        return byConsumer ? VipReturn.REJECT : VipReturn.NOT_REACHABLE;
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

    /**
     * VipConnectWait: the next request for {@code localAddr}, from the NIC's listener on its host
     * address; for a peer attempt ({@code peer} not null) it also ends, with TIMEOUT, once the
     * attempt is cancelled.
     */
    static VipConnHandle await(VipNic nic, VipNetAddress localAddr, long timeoutMillis, PeerConnect.Attempt peer) {
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
            if (peer == null) {
                c = l.await(localAddr.discriminator(), timeoutMillis);
            } else {
                peer.wakes(l);
                c = l.await(localAddr.discriminator(), timeoutMillis, peer::isCancelled);
            }
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
     * learns of it before its next data transfer (§5.4 only requires it by then). No thread waits:
     * the channel runs the watch when an event is pending. The watch ends when this side
     * disconnects (the channel is closed, which runs it one last time) or the VI is destroyed.
     */
    private static void watch(ConnectSteps vi, EventChannel ch) {
        new ConnectionWatch(vi, ch).arm();
    }

    /** One connection's watch: takes the pending events, hands them to the VI, and arms again. */
    private record ConnectionWatch(ConnectSteps vi, EventChannel ch) implements Runnable {

        void arm() {
            try {
                ch.whenReadable(this);
            } catch (IllegalStateException closed) {
                // the VI disconnected meanwhile
            }
        }

        @Override
        public void run() {
            while (true) {
                CmEvent ev;
                try {
                    ev = ch.tryGetEvent();
                } catch (RuntimeException closed) {
                    return;
                }
                // null: nothing pending; the VI says whether it still watches this channel
                if (!vi.connectionEvent(ch, ev == null ? null : ev.type())) {
                    return;
                }
                if (ev == null) {
                    arm();
                    return;
                }
            }
        }
    }
}
