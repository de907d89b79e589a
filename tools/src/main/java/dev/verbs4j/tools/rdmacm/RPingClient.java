package dev.verbs4j.tools.rdmacm;

import dev.verbs4j.rdmacm.CmConnector;
import dev.verbs4j.rdmacm.CmEvent;
import dev.verbs4j.rdmacm.CmId;
import dev.verbs4j.rdmacm.CmTimeouts;
import dev.verbs4j.rdmacm.ConnectionParameters;
import dev.verbs4j.rdmacm.RdmaConnectionException;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * rping's client side ({@code -c}): resolves and connects to the server, then pings {@code -C}
 * times (or for ever): writes the ping into its start buffer, advertises it, advertises its RDMA
 * buffer once the server has read it, and finds the data there once the server has written it.
 */
final class RPingClient {

    private static final int FIRST = 'A';
    private static final int LAST = 'z';
    /** Resolution as the C program's; the connection is waited for without a limit, as there. */
    private static final CmTimeouts TIMEOUTS = CmTimeouts.of(RPing.RESOLVE_TIMEOUT, RPing.RESOLVE_TIMEOUT, Duration.ofDays(1));

    /** rping's thread, not the event thread, connects and (with -q) readies its queue pair and establishes. */
    private static final CmConnector.Steps STEPS = new CmConnector.Steps() {
        @Override
        public ConnectionParameters routeResolved(CmId id) {
            return null;
        }

        @Override
        public boolean connectResponse(CmId id, CmEvent response) {
            return false;
        }
    };

    private final RPing rping;
    private final RPingOptions options;

    RPingClient(RPing rping) {
        this.rping = rping;
        this.options = rping.options;
    }

    /** Connects {@code connection}'s id to the server, pings, and disconnects. */
    void run(RPingConnection connection) {
        CmId id = connection.cmId;
        resolve(connection);
        connection.run(id, () -> {
            connect(connection);
            connection.pingThenDisconnect(id, () -> ping(connection), "rping client failed: %d\n");
        });
    }

    private void resolve(RPingConnection c) {
        try {
            // known to the event thread before its first event can arrive
            c.connector = CmConnector.of(c.cmId, new InetSocketAddress(options.address, options.port), TIMEOUTS, STEPS);
            c.connector.resolve(options.source == null ? null : new InetSocketAddress(options.source, 0));
        } catch (RdmaConnectionException | RuntimeException e) {
            throw new RPingException("rdma_resolve_addr: " + RPingEvents.message(e) + "\n", -1);
        }
        if (!c.await() || c.state != PingState.ROUTE_RESOLVED) {
            throw rping.unlessFailed(String.format("waiting for addr/route resolution state %d\n", c.state.code()), -1);
        }
        rping.debug("rdma_resolve_addr - rdma_resolve_route successful\n");
    }

    private void connect(RPingConnection c) {
        try {
            c.connector.connectWith(c.parameters());
        } catch (RdmaConnectionException | RuntimeException e) {
            throw connectError("rdma_connect: " + RPingEvents.message(e) + "\n");
        }
        if (!c.await() || c.state != PingState.CONNECTED) {
            throw connectError(rping.failed() ? "" : String.format("wait for CONNECTED state %d\n", c.state.code()));
        }
        if (options.selfCreateQp) {
            try {
                c.selfModifyQp(c.cmId);
            } catch (RuntimeException e) {
                throw connectError("rping_modify_qp: " + e.getMessage() + "\n");
            }
            try {
                c.connector.establish();
            } catch (RdmaConnectionException | RuntimeException e) {
                throw connectError("rdma_establish: " + RPingEvents.message(e) + "\n");
            }
        }
        rping.debug("rdma_connect successful\n");
    }

    /** A failure to connect: {@code report}, and rping's line for it unless the event thread gave up. */
    private RPingException connectError(String report) {
        return new RPingException(rping.failed() ? report : report + "connect error -1\n", -1);
    }

    /** The client's half of the ping loop. */
    private void ping(RPingConnection c) {
        PingBuffers b = c.buffers;
        int first = FIRST;
        for (int ping = 0; options.count == 0 || ping < options.count; ping++) {
            c.state = PingState.RDMA_READ_ADV;
            write(b.start, ping, first);
            first = first == LAST ? FIRST : first + 1;
            c.advertise(b.startMr);
            // wait for the server to ACK
            c.expect(PingState.RDMA_WRITE_ADV);
            c.advertise(b.rdmaMr);
            // wait for the server to say the RDMA write is complete
            c.expect(PingState.RDMA_WRITE_COMPLETE);
            if (options.validate > 0 && b.start.mismatch(b.rdma) != -1) {
                throw new RPingException("data mismatch!\n", -1);
            }
            if (options.verbose > 0) {
                rping.out.printf("ping data: %s\n", b.rdmaText());
            }
        }
    }

    /** Ping {@code n}'s data: "rdma-ping-n: ", letters from {@code first} round A..z, a NUL at the end. */
    private void write(MemorySegment buf, int n, int first) {
        int size = options.size;
        byte[] head = String.format("rdma-ping-%d: ", n).getBytes(StandardCharsets.US_ASCII);
        int cc = Math.min(head.length, size - 1);
        MemorySegment.copy(head, 0, buf, ValueLayout.JAVA_BYTE, 0, cc);
        int letter = first;
        for (int i = cc; i < size; i++) {
            buf.set(ValueLayout.JAVA_BYTE, i, (byte) letter);
            letter = letter == LAST ? FIRST : letter + 1;
        }
        buf.set(ValueLayout.JAVA_BYTE, size - 1, (byte) 0);
    }
}
