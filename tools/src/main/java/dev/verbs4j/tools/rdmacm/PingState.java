package dev.verbs4j.tools.rdmacm;

/**
 * Where an rping connection is in its exchange ({@code enum test_state} of the C program): the
 * connection manager's steps, then per ping the client's two buffer adverts and the server's RDMA
 * READ and WRITE.
 */
enum PingState {
    IDLE, CONNECT_REQUEST, ADDR_RESOLVED, ROUTE_RESOLVED, CONNECTED, RDMA_READ_ADV, RDMA_READ_COMPLETE,
    RDMA_WRITE_ADV, RDMA_WRITE_COMPLETE, DISCONNECTED, ERROR;

    /** The C value, as the wait messages print it (IDLE = 1). */
    int code() {
        return ordinal() + 1;
    }

    /** The server's state once a client's advert arrives: the source buffer first, then the sink. */
    PingState afterServerReceive() {
        return code() <= CONNECTED.code() || this == RDMA_WRITE_COMPLETE ? RDMA_READ_ADV : RDMA_WRITE_ADV;
    }

    /** The client's state once a go-ahead of the server arrives. */
    PingState afterClientReceive() {
        return this == RDMA_READ_ADV ? RDMA_WRITE_ADV : RDMA_WRITE_COMPLETE;
    }
}
