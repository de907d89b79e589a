package dev.verbs4j.rdmacm;

import dev.verbs4j.verbs.Closeables;
import dev.verbs4j.verbs.VerbsException;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Objects;

/**
 * The RDMA CM active side of {@link RdmaConnection#connect}: on an event channel of its own,
 * resolves the address and the route, creates the connection on the id, connects, and waits for
 * ESTABLISHED, each phase within what is left of one deadline. On failure frees what it created.
 * The connection then owns the id and the channel.
 */
final class ActiveConnect {

    private ActiveConnect() {
    }

    /** The phases of a connect, named by its timeout messages. */
    enum Phase {
        ADDRESS("address resolution"), ROUTE("route resolution"), CONNECT("connect"),
        ESTABLISHED("established (waiting for the peer's accept)");

        final String text;

        Phase(String text) {
            this.text = text;
        }
    }

    /** The connection parameters both sides use, with {@code privateData}. */
    static ConnectionParameters parameters(byte[] privateData) {
        return ConnectionParameters.DEFAULT.withRetries(7, 7).withPrivateData(privateData);
    }

    /** The message of a connect that ran out of time in {@code phase}: names the phase, the peer and the limit. */
    static String timedOut(String what, Phase phase, Duration timeout) {
        return what + ": timed out after " + timeout + " in phase " + phase.text;
    }

    /** See {@link RdmaConnection#connect(InetSocketAddress, InetSocketAddress, ConnectionOptions, Duration)}; in {@code group} (or null). */
    static RdmaConnection connect(InetSocketAddress remote, InetSocketAddress local, ConnectionOptions options,
                                  Duration timeout, RdmaEndpointGroup group) throws RdmaConnectionException {
        Objects.requireNonNull(remote, "remote");
        ConnectionOptions o = options == null ? ConnectionOptions.DEFAULT : options;
        long deadline = System.nanoTime() + timeout.toNanos();
        String what = "connect to " + remote;
        EventChannel channel;
        try {
            channel = EventChannel.create();
        } catch (VerbsException e) {
            throw RdmaConnectionException.of(e, what);
        }
        RdmaConnection connection = null;
        try {
            CmId id = channel.createId(PortSpace.TCP);
            id.resolveAddress(local, remote, left(deadline, timeout, what, Phase.ADDRESS));
            expect(channel, CmEventType.ADDR_RESOLVED, deadline, timeout, what, Phase.ADDRESS);
            id.resolveRoute(left(deadline, timeout, what, Phase.ROUTE));
            expect(channel, CmEventType.ROUTE_RESOLVED, deadline, timeout, what, Phase.ROUTE);
            left(deadline, timeout, what, Phase.CONNECT);
            connection = new RdmaConnection(id, channel, o, group);
            if (o.ackTimeout() != 0) {
                id.setAckTimeout(o.ackTimeout());
            }
            id.connect(parameters(o.privateData()));
            CmEvent established = expect(channel, CmEventType.ESTABLISHED, deadline, timeout, what, Phase.ESTABLISHED);
            connection.established(established, channel, null);
            return connection;
        } catch (VerbsException e) {
            throw abandon(RdmaConnectionException.of(e, what), connection, channel);
        } catch (RdmaConnectionException | RuntimeException | Error e) {
            abandon(e, connection, channel);
            throw e;
        }
    }

    /** Frees a connect's connection (its id with it) and channel on the way out of {@code failure}; returns it. */
    private static <T extends Throwable> T abandon(T failure, RdmaConnection connection, EventChannel channel) {
        if (connection != null) {
            connection.release();
        }
        return Closeables.closeAfter(failure, channel);
    }

    private static Duration left(long deadline, Duration timeout, String what, Phase phase) throws RdmaTimeoutException {
        long left = deadline - System.nanoTime();
        if (left < 1_000_000) {
            throw new RdmaTimeoutException(timedOut(what, phase, timeout));
        }
        return Duration.ofNanos(left);
    }

    private static CmEvent expect(EventChannel channel, CmEventType type, long deadline, Duration timeout, String what,
                                  Phase phase) throws RdmaConnectionException {
        while (true) {
            long left = deadline - System.nanoTime();
            CmEvent ev = left <= 0 ? channel.tryGetEvent() : channel.getEvent(Duration.ofNanos(left));
            if (ev == null) {
                throw new RdmaTimeoutException(timedOut(what, phase, timeout) + " (no " + type + " event)");
            }
            if (ev.type() == type) {
                return ev;
            }
            if (ev.type() == CmEventType.ADDR_CHANGE) {
                continue;
            }
            throw RdmaConnectionException.of(ev, what);
        }
    }
}
