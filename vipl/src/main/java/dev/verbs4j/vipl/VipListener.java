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
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

/**
 * The listening RDMA CM id of one local host address of a NIC (on {@link Vipl#port()}), and the
 * connection requests that arrived and no VipConnectWait has taken yet. Requests are matched to a
 * wait by the discriminator they carry (§4.1); a request nobody takes stays queued until its
 * requester gives up. The channel and ids belong to this object.
 *
 * <p>Several VipConnectWait calls may wait at once, each with its own deadline: one of them at a
 * time reads the channel (never past its own deadline), the others sleep on a condition that
 * every event handled signals, and take over reading when the reader leaves. An event, the
 * reader leaving, {@link #close} and {@link #wake} (a wait's cancellation) wake them; nobody
 * wakes to look.
 */
final class VipListener {

    /** The longest wait at once: only keeps an INFINITE wait's deadline arithmetic finite. */
    private static final long MAX_WAIT_NANOS = 86_400_000_000_000L;

    private final VipNic nic;
    private final EventChannel channel;
    private final CmId id;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    /** Under {@link #lock}: the requests not taken yet, whether a wait reads the channel, whether closed. */
    private final List<VipConnHandle> queued = new ArrayList<>();
    private boolean reading;
    private boolean closed;

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

    /**
     * VipConnectWait: the first request for {@code discriminator}, waiting up to the timeout; null
     * when none came in time.
     *
     * @throws IllegalStateException when the listener is closed (its NIC closed), also while waiting
     */
    VipConnHandle await(byte[] discriminator, long timeoutMillis) {
        return await(discriminator, timeoutMillis, () -> false);
    }

    /**
     * As {@link #await(byte[], long)}, but also null once {@code cancelled} says so: it is looked
     * at whenever the wait looks, and whoever cancels calls {@link #wake} afterwards.
     */
    VipConnHandle await(byte[] discriminator, long timeoutMillis, BooleanSupplier cancelled) {
        long deadline = timeoutMillis == Vipl.INFINITE ? Long.MAX_VALUE : System.nanoTime() + timeoutMillis * 1_000_000;
        boolean polled = false;
        lock.lock();
        try {
            while (true) {
                // before taking: a cancelled wait leaves the request queued for another one
                if (cancelled.getAsBoolean()) {
                    return null;
                }
                VipConnHandle c = take(discriminator);
                if (c != null) {
                    return c;
                }
                if (closed) {
                    throw new IllegalStateException("the listener of " + nic.name() + " is closed");
                }
                long left = deadline == Long.MAX_VALUE ? Long.MAX_VALUE : deadline - System.nanoTime();
                if (left <= 0 && polled) {
                    return null;
                }
                if (!reading) {
                    reading = true;
                    CmEvent ev;
                    lock.unlock();
                    try {
                        ev = left <= 0 ? channel.tryGetEvent() : channel.getEvent(Duration.ofNanos(Math.min(left, MAX_WAIT_NANOS)));
                    } finally {
                        lock.lock();
                        reading = false;
                        changed.signalAll();
                    }
                    polled = true;
                    if (ev != null) {
                        handle(ev);
                        changed.signalAll();
                    }
                } else if (left <= 0) {
                    return null;   // another wait reads the channel, and this one has no time left (timeout 0)
                } else {
                    changed.awaitNanos(Math.min(left, MAX_WAIT_NANOS));
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        } finally {
            lock.unlock();
        }
    }

    /** The first queued request for {@code discriminator}, removed; null if none. Under the lock. */
    private VipConnHandle take(byte[] discriminator) {
        for (Iterator<VipConnHandle> it = queued.iterator(); it.hasNext(); ) {
            VipConnHandle c = it.next();
            if (Arrays.equals(c.targetDiscriminator, discriminator)) {
                it.remove();
                return c;
            }
        }
        return null;
    }

    /** Under the lock. */
    private void handle(CmEvent ev) {
        if (ev.type() == CmEventType.CONNECT_REQUEST) {
            ConnectMessage m = ConnectMessage.decode(ev.privateData());
            if (m == null) {
                try {
                    ev.id().reject(ConnectMessage.REJECT);
                } catch (RuntimeException ignored) {
                    // the requester went away
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

    /**
     * Wakes every wait, so that a cancelled one returns: the reader's {@code getEvent} returns at
     * once (a reader not cancelled reads again), the others leave the condition.
     */
    void wake() {
        lock.lock();
        try {
            if (reading) {
                channel.interruptWait();
            }
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Closes the channel (and the ids of the requests not taken); the waits end with IllegalStateException. */
    void close() {
        lock.lock();
        try {
            closed = true;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
        channel.close();
    }
}
