package dev.verbs4j.tools.rdmacm;

import dev.verbs4j.rdmacm.CmId;

import java.net.InetSocketAddress;

/**
 * rping's server side ({@code -s}): listens, accepts one connection (with {@code -P} every
 * connection, each on its own thread) and answers the client's pings: RDMA READ of the advertised
 * source, go-ahead, RDMA WRITE to the advertised sink, go-ahead.
 */
final class RPingServer {

    private final RPing rping;
    private final RPingEvents events;
    private final RPingOptions options;

    RPingServer(RPing rping, RPingEvents events) {
        this.rping = rping;
        this.events = events;
        this.options = rping.options;
    }

    /** Serves on {@code listener}'s id; returns when the (single) connection has ended. */
    void run(RPingConnection listener) {
        bindAndListen(listener.cmId);
        if (!options.persistent) {
            awaitRequest(listener);
            serve(listener, false);
            return;
        }
        while (true) {
            awaitRequest(listener);
            RPingConnection connection = new RPingConnection(listener);
            events.add(connection);
            Thread.ofPlatform().name("rping-conn").daemon().start(() -> {
                try {
                    serve(connection, true);
                } catch (RPingException e) {
                    e.report(rping.err);
                }
            });
        }
    }

    private void bindAndListen(CmId id) {
        try {
            id.bind(new InetSocketAddress(options.address, options.port));
        } catch (RuntimeException e) {
            throw new RPingException("rdma_bind_addr: " + e.getMessage() + "\n", -1);
        }
        rping.debug("rdma_bind_addr successful\n");
        rping.debug("rdma_listen\n");
        try {
            id.listen(3);
        } catch (RuntimeException e) {
            throw new RPingException("rdma_listen: " + e.getMessage() + "\n", -1);
        }
    }

    private void awaitRequest(RPingConnection listener) {
        if (!listener.await() || listener.state != PingState.CONNECT_REQUEST) {
            throw rping.unlessFailed(String.format("wait for CONNECT_REQUEST state %d\n", listener.state.code()), -1);
        }
    }

    /** Sets up, accepts and serves the request in {@code connection.childId}; cleans up. */
    private void serve(RPingConnection connection, boolean persistent) {
        CmId child = connection.childId;
        try {
            connection.run(child, () -> {
                accept(connection, child);
                connection.pingThenDisconnect(child, () -> answerPings(connection),
                        persistent ? null : "rping server failed: %d\n");
            });
        } finally {
            events.remove(child);
            child.close();
        }
    }

    private void accept(RPingConnection connection, CmId child) {
        rping.debug("accepting client connection request\n");
        try {
            if (options.selfCreateQp) {
                connection.selfModifyQp(child);
                child.accept(connection.parameters());
            } else {
                child.accept(null);
            }
        } catch (RuntimeException e) {
            throw new RPingException("rdma_accept: " + e.getMessage() + "\nconnect error -1\n", -1);
        }
        if (!connection.await() || connection.state == PingState.ERROR) {
            throw new RPingException(String.format("wait for CONNECTED state %d\nconnect error -1\n", connection.state.code()), -1);
        }
    }

    /** The server's half of the ping loop, until it fails (as it does when the client disconnects). */
    private void answerPings(RPingConnection c) {
        while (true) {
            // wait for the client's source address, key and length
            c.expect(PingState.RDMA_READ_ADV);
            rping.debug("server received sink adv\n");
            c.readRemote();
            rping.debug("server posted rdma read req \n");
            c.expect(PingState.RDMA_READ_COMPLETE);
            rping.debug("server received read complete\n");
            if (options.verbose > 0) {
                rping.out.printf("server ping data: %s\n", c.buffers.rdmaText());
            }
            // tell the client to continue
            c.goAhead();
            rping.debug("server posted go ahead\n");
            c.expect(PingState.RDMA_WRITE_ADV);
            rping.debug("server received sink adv\n");
            c.writeRemote();
            c.expect(PingState.RDMA_WRITE_COMPLETE);
            rping.debug("server rdma write complete \n");
            // tell the client to begin again
            c.goAhead();
            rping.debug("server posted go ahead\n");
        }
    }
}
