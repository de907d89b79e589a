package dev.verbs4j.vipl;

import dev.verbs4j.rdmacm.CmEvent;
import dev.verbs4j.rdmacm.CmEventType;
import dev.verbs4j.rdmacm.CmId;
import dev.verbs4j.rdmacm.EventChannel;
import dev.verbs4j.rdmacm.PortSpace;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;

/**
 * The listening RDMA CM id of one local host address of a NIC (on {@link Vipl#port()}), and the
 * connection requests that arrived and no VipConnectWait has taken yet. Requests are matched to a
 * wait by the discriminator they carry (§4.1); a request nobody takes stays queued until its
 * requester gives up. The channel and ids belong to this object.
 */
final class VipListener {

    private final VipNic nic;
    private final EventChannel channel;
    private final CmId id;
    private final List<VipConnHandle> queued = new ArrayList<>();

    VipListener(VipNic nic, InetAddress address) {
        this.nic = nic;
        this.channel = EventChannel.create();
        try {
            this.id = channel.createId(PortSpace.TCP);
            id.bind(new InetSocketAddress(address, Vipl.port()));
            id.listen(16);
        } catch (RuntimeException e) {
            channel.close();
            throw e;
        }
    }

    boolean onDevice(String name) {
        return id.hasDevice() && id.context().name().equals(name);
    }

    /** VipConnectWait: the first request for {@code discriminator}, waiting up to the timeout. */
    synchronized VipConnHandle await(byte[] discriminator, long timeoutMillis) {
        long deadline = timeoutMillis == Vipl.INFINITE ? Long.MAX_VALUE : System.nanoTime() + timeoutMillis * 1_000_000;
        while (true) {
            for (Iterator<VipConnHandle> it = queued.iterator(); it.hasNext(); ) {
                VipConnHandle c = it.next();
                if (Arrays.equals(c.targetDiscriminator, discriminator)) {
                    it.remove();
                    return c;
                }
            }
            long left = deadline - System.nanoTime();
            CmEvent ev = left <= 0 ? channel.tryGetEvent() : channel.getEvent(Duration.ofNanos(Math.min(left, 1_000_000_000L)));
            if (ev == null) {
                if (System.nanoTime() - deadline >= 0) {
                    return null;
                }
                continue;
            }
            handle(ev);
        }
    }

    private void handle(CmEvent ev) {
        if (ev.type() == CmEventType.CONNECT_REQUEST) {
            ConnectMessage m = ConnectMessage.decode(ev.privateData());
            if (m == null) {
                try {
                    ev.id().reject(ConnectMessage.REJECT);
                } finally {
                    ev.id().close();
                }
                return;
            }
            InetSocketAddress peer = ev.id().peerAddress();
            VipNetAddress from = new VipNetAddress(peer.getAddress().getAddress(), m.source());
            queued.add(new VipConnHandle(nic, ev.id(), from, m.attributes(), m.target(), 0));
            return;
        }
        // Anything else concerns a request not taken yet (its requester gave up): forget it.
        for (Iterator<VipConnHandle> it = queued.iterator(); it.hasNext(); ) {
            VipConnHandle c = it.next();
            if (c.id == ev.id()) {
                it.remove();
                c.consumed = true;
                c.id.close();
            }
        }
    }

    void close() {
        channel.close();
    }
}
