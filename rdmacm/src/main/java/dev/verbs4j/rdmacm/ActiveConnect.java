package dev.verbs4j.rdmacm;

import dev.verbs4j.verbs.Closeables;
import dev.verbs4j.verbs.VerbsException;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Objects;

/**
 * The RDMA CM active side of {@link RdmaConnection#connect}: a {@link CmConnector} on an event
 * channel of its own, within one limit for the whole connect, that creates the connection on the
 * id once the route is resolved. On failure frees what it created. The connection then owns the
 * id and the channel.
 */
final class ActiveConnect {

    private ActiveConnect() {
    }

    /** The connection parameters both sides use, with {@code privateData}. */
    static ConnectionParameters parameters(byte[] privateData) {
        return ConnectionParameters.DEFAULT.withRetries(7, 7).withPrivateData(privateData);
    }

    /** See {@link RdmaConnection#connect(InetSocketAddress, InetSocketAddress, ConnectionOptions, Duration)}; in {@code group} (or null). */
    static RdmaConnection connect(InetSocketAddress remote, InetSocketAddress local, ConnectionOptions options,
                                  Duration timeout, RdmaEndpointGroup group) throws RdmaConnectionException {
        Objects.requireNonNull(remote, "remote");
        Objects.requireNonNull(timeout, "timeout");
        ConnectionOptions o = options == null ? ConnectionOptions.DEFAULT : options;
        String what = "connect to " + remote;
        EventChannel channel;
        try {
            channel = EventChannel.create();
        } catch (VerbsException e) {
            throw RdmaConnectionException.of(e, what);
        }
        RdmaConnection[] connection = new RdmaConnection[1];
        try {
            CmId id = channel.createId(PortSpace.TCP);
            // a limit of zero or less times the first phase out at once, naming it
            CmTimeouts limits = CmTimeouts.within(timeout.isPositive() ? timeout : Duration.ofNanos(1));
            CmConnector connector = CmConnector.connect(id, local, remote, limits, routed -> {
                connection[0] = new RdmaConnection(routed, channel, o, group);
                if (o.ackTimeout() != 0) {
                    routed.setAckTimeout(o.ackTimeout());
                }
                return parameters(o.privateData());
            });
            connection[0].established(connector.established(), channel, null);
            return connection[0];
        } catch (VerbsException e) {
            throw abandon(RdmaConnectionException.of(e, what), connection[0], channel);
        } catch (RdmaConnectionException | RuntimeException | Error e) {
            abandon(e, connection[0], channel);
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
}
