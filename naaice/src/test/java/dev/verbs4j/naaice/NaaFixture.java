package dev.verbs4j.naaice;

import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.function.UnaryOperator;

/**
 * A software NAA listening on host B for the tests of one class, with the address it listens on
 * and the address its clients on host A connect from. The fixture owns the server: closing the
 * fixture closes it (a class starts it in its {@code @BeforeAll} method and closes it in its
 * {@code @AfterAll} method, or a test in a try-with-resources block).
 */
final class NaaFixture implements AutoCloseable {

    /** Where the NAA listens: host B's address, the fixture's port. */
    final InetSocketAddress naa;
    /** Where host-side clients connect from: host A's address, any port. */
    final InetSocketAddress local;
    final NaaServer server;

    private NaaFixture(InetSocketAddress naa, InetSocketAddress local, NaaServer server) {
        this.naa = naa;
        this.local = local;
        this.server = server;
    }

    /** Starts a server bound to host B's {@code port}, configured (limits, kernels) by {@code setup}. */
    static NaaFixture start(int port, UnaryOperator<NaaServer.Builder> setup) throws UnknownHostException {
        InetSocketAddress naa = NaaiceTestSupport.naaAddress(port);
        InetSocketAddress local = NaaiceTestSupport.hostAddress();
        return new NaaFixture(naa, local, setup.apply(NaaServer.builder().bind(naa)).start());
    }

    /** A client of this NAA from host A, to be given its parameters. */
    NaaClient.Builder client() {
        return NaaClient.builder(naa).localAddress(local);
    }

    /** Closes {@code fixture} when a {@code @BeforeAll} method got as far as starting it. */
    static void closeIfStarted(NaaFixture fixture) {
        if (fixture != null) {
            fixture.close();
        }
    }

    @Override
    public void close() {
        server.close();
    }
}
