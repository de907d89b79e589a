package dev.verbs4j.tools.rdmacm;

import dev.verbs4j.rdmacm.CmConnector;
import dev.verbs4j.rdmacm.CmEvent;
import dev.verbs4j.rdmacm.CmId;
import dev.verbs4j.rdmacm.CmPhase;
import dev.verbs4j.rdmacm.CmTimeouts;
import dev.verbs4j.rdmacm.ConnectionParameters;
import dev.verbs4j.rdmacm.EventChannel;
import dev.verbs4j.rdmacm.PortSpace;
import dev.verbs4j.rdmacm.RdmaConnectionException;
import dev.verbs4j.tools.Getopt;
import dev.verbs4j.verbs.Errno;
import dev.verbs4j.verbs.SendFlags;
import dev.verbs4j.verbs.VerbsException;
import dev.verbs4j.verbs.WorkCompletions;

import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.IdentityHashMap;
import java.util.Map;

/**
 * {@code udaddy}: unreliable datagrams over the RDMA connection manager, as librdmacm's example.
 * The client resolves the server, "connects" (a service id lookup that returns the server's QP
 * number, Q_Key and address), and sends {@code -C} messages with immediate data = its own QP
 * number; the server answers each with a reply to the address of the first datagram. Same
 * options and output as the C program, and it speaks with it:
 * {@code [-s server] [-b bind] [-c connections] [-C count] [-S size] [-t tos] [-p ps] [-P udp|ipoib] [-f fmt]}.
 */
public final class UdAddy extends DatagramTest {

    private String port = "7174";
    private Integer tos;
    private String dstAddr;
    private String srcAddr;
    private int connIndex;
    /** The client's nodes, each with the connector of its id and the steps it runs. */
    private final Map<DatagramNode, Client> clients = new IdentityHashMap<>();

    /** A client node's connect: the connector, and its steps with what they found. */
    private record Client(CmConnector connector, ClientSteps steps) {
    }

    /** What udaddy does between the phases of a node's connect: the TOS once the address is resolved, the node once the route is. */
    private final class ClientSteps implements CmConnector.Steps {
        private final DatagramNode node;
        /** What preparing the node returned (0: ready, and connected with the QP number 0 as udaddy does). */
        int prepared;

        ClientSteps(DatagramNode node) {
            this.node = node;
        }

        @Override
        public void addressResolved(CmId id) {
            if (tos != null) {
                try {
                    id.setTypeOfService(tos);
                } catch (VerbsException e) {
                    perror("udaddy: set TOS option failed", e);
                }
            }
        }

        @Override
        public ConnectionParameters routeResolved(CmId id) {
            prepared = node.prepare(true, true);
            return prepared == 0 ? datagramParameters(0) : null;
        }
    }

    private UdAddy(PrintStream out, PrintStream err) {
        super("udaddy", out, err);
    }

    /** Runs udaddy; returns its status (0 on success). */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        return new UdAddy(out, err).execute(args, "s:b:c:C:S:t:p:P:f:");
    }

    @Override
    int test(EventChannel channel) {
        if (dstAddr == null) {
            return runServer(channel);
        }
        for (DatagramNode n : nodes) {
            n.id = channel.createId(portSpace);
        }
        return runClient(channel);
    }

    @Override
    boolean option(int c, String a) {
        switch (c) {
            case 's' -> dstAddr = a;
            case 'b' -> srcAddr = a;
            case 't' -> tos = Getopt.strtol(a) & 0xff;
            case 'f' -> {
                if (startsWithIgnoreCase(a, "gid")) {
                    err.print("udaddy: AF_IB (gid) addresses are not supported\n");
                    return false;
                } else if (!startsWithIgnoreCase(a, "ip") && !startsWithIgnoreCase(a, "name")) {
                    err.print("Warning: unknown address format\n");
                }
            }
            case 'P' -> {
                if (startsWithIgnoreCase(a, "ipoib")) {
                    portSpace = PortSpace.IPOIB;
                } else if (!startsWithIgnoreCase(a, "udp")) {
                    err.print("Warning: unknown port space format\n");
                }
            }
            default -> {
                usage();
                return false;
            }
        }
        return true;
    }

    private int runServer(EventChannel channel) {
        out.print("udaddy: starting server\n");
        CmId listenId = channel.createId(portSpace);
        try {
            InetSocketAddress bind;
            try {
                bind = srcAddr == null ? new InetSocketAddress(port(port)) : new InetSocketAddress(InetAddress.getByName(srcAddr), port(port));
            } catch (UnknownHostException | IllegalArgumentException e) {
                out.print("udaddy: getrdmaaddr error: Name or service not known\n");
                return -1;
            }
            try {
                listenId.bind(bind);
            } catch (VerbsException e) {
                perror("udaddy: bind address failed", e);
                return -1;
            }
            try {
                listenId.listen(0);
            } catch (VerbsException e) {
                perror("udaddy: failure trying to listen", e);
                return -1;
            }
            connectEvents(channel);
            int ret = 0;
            if (messageCount != 0) {
                out.print("receiving data transfers\n");
                ret = pollCqs("completions", this::takeReplyAddress);
                if (ret != 0) {
                    return ret;
                }
                out.print("sending replies\n");
                ret = postSends(SendFlags.SIGNALED);
                if (ret != 0) {
                    return ret;
                }
                ret = pollCqs("completions", this::takeReplyAddress);
                if (ret != 0) {
                    return ret;
                }
                out.print("data transfers complete\n");
            }
            return ret;
        } finally {
            listenId.close();
        }
    }

    private int runClient(EventChannel channel) {
        out.print("udaddy: starting client\n");
        InetSocketAddress src;
        InetSocketAddress dst;
        try {
            src = srcAddr == null ? null : new InetSocketAddress(InetAddress.getByName(srcAddr), 0);
            dst = new InetSocketAddress(InetAddress.getByName(dstAddr), port(port));
        } catch (UnknownHostException | IllegalArgumentException e) {
            out.print("udaddy: getaddrinfo error: Name or service not known\n");
            return -1;
        }
        out.print("udaddy: connecting\n");
        for (DatagramNode n : nodes) {
            ClientSteps steps = new ClientSteps(n);
            Client client = new Client(CmConnector.of(n.id, dst, CmTimeouts.of(ROUTE_TIMEOUT, ROUTE_TIMEOUT, EVENT_WAIT), steps), steps);
            clients.put(n, client);
            try {
                client.connector().resolve(src);
            } catch (RdmaConnectionException e) {
                perror("udaddy: failure getting addr", cause(e));
                connectsLeft--;
                return -e.errno();
            }
        }
        int ret = connectEvents(channel);
        if (ret != 0) {
            return ret;
        }
        if (messageCount != 0) {
            out.print("initiating data transfers\n");
            ret = postSends(0);
            if (ret != 0) {
                return ret;
            }
            out.print("receiving data transfers\n");
            ret = pollCqs("completions", this::takeReplyAddress);
            if (ret != 0) {
                return ret;
            }
            out.print("data transfers complete\n");
        }
        return 0;
    }

    /** Every set-up node sends its {@code -C} messages with {@code flags}; the status. */
    private int postSends(int flags) {
        for (DatagramNode n : nodes) {
            if (n.connected && messageCount != 0) {
                int ret = n.postSends(i -> flags);
                if (ret != 0) {
                    return ret;
                }
            }
        }
        return 0;
    }

    @Override
    int handle(CmEvent event) {
        return switch (event.type()) {
            case ADDR_RESOLVED -> addrHandler(nodeOf(event.id()), event);
            case ROUTE_RESOLVED -> routeHandler(nodeOf(event.id()), event);
            case CONNECT_REQUEST -> connectHandler(event.id());
            case ESTABLISHED -> established(nodeOf(event.id()), event);
            case ADDR_ERROR, ROUTE_ERROR, CONNECT_ERROR, UNREACHABLE, REJECTED -> eventError(event);
            default -> 0;
        };
    }

    /** The connector resolves the route (after the TOS, see {@link ClientSteps}). */
    private int addrHandler(DatagramNode node, CmEvent event) {
        try {
            clients.get(node).connector().advance(event);
            return 0;
        } catch (RdmaConnectionException e) {
            perror("udaddy: resolve route failed", cause(e));
            connectsLeft--;
            return -e.errno();
        }
    }

    /** The node is prepared and, when it could be, the connector connects. */
    private int routeHandler(DatagramNode node, CmEvent event) {
        Client client = clients.get(node);
        int ret;
        try {
            client.connector().advance(event);
            ret = client.steps().prepared;
        } catch (RdmaConnectionException e) {
            perror("udaddy: failure connecting", cause(e));
            ret = -e.errno();
        }
        if (ret != 0) {
            connectsLeft--;
        }
        return ret;
    }

    /** The peer's QP number, Q_Key and address (a client's connector is established with them). */
    private int established(DatagramNode node, CmEvent event) {
        Client client = clients.get(node);
        if (client != null && client.connector().phase() == CmPhase.CONNECTION) {
            try {
                client.connector().advance(event);
            } catch (RdmaConnectionException e) {
                throw new IllegalStateException("ESTABLISHED is what the connection phase awaits", e);
            }
        }
        return node.setPeer(event.datagram());
    }

    /** The failed librdmacm call behind a connector's failure, as perror() reports it. */
    private static VerbsException cause(RdmaConnectionException e) {
        return e.getCause() instanceof VerbsException v ? v : new VerbsException("connect", Math.max(e.errno(), Errno.EIO), e.getMessage());
    }

    private int connectHandler(CmId id) {
        if (connIndex == connections) {
            out.print("udaddy: failing connection request\n");
            try {
                id.reject(new byte[0]);
            } finally {
                id.close();
            }
            return -Errno.ENOMEM;
        }
        DatagramNode node = nodes[connIndex++];
        node.id = id;
        int ret = node.prepare(true, true);
        if (ret == 0) {
            try {
                node.id.accept(datagramParameters(node.id.queuePair().qpNum()));
                node.connected = true;
                connectsLeft--;
                return 0;
            } catch (VerbsException e) {
                perror("udaddy: failure accepting", e);
                ret = -e.errno();
            }
        }
        node.destroy();
        node.id = null;
        connectsLeft--;
        out.print("udaddy: failing connection request\n");
        return ret;
    }

    /** The server answers to where the first datagram came from: an address handle for it, its QP number (the immediate data). */
    private int takeReplyAddress(DatagramNode node, WorkCompletions wcs, int done, int n) {
        if (n > 0 && node.ah == null) {
            try {
                node.ah = node.pd.createAddressHandle(wcs.get(0), node.mr.segment(), node.id.portNumber());
                node.remoteQpn = wcs.get(0).immediateData();
                // the Q_Key librdmacm gave the id's queue pair (RDMA_UDP_QKEY for the UDP port space)
                node.remoteQkey = CmId.UDP_QKEY;
            } catch (VerbsException e) {
                out.print("udaddy: failed to create reply AH\n");
                return -1;
            }
        }
        return 0;
    }

    /** What udaddy passes to connect and accept: zeros, but for the QP number. */
    private static ConnectionParameters datagramParameters(int qpNum) {
        return new ConnectionParameters(new byte[0], 0, 0, false, 0, 0, false, qpNum);
    }

    private static int port(String service) {
        int p = Integer.parseInt(service.strip());
        if (p < 0 || p > 65535) {
            throw new IllegalArgumentException("port " + service);
        }
        return p;
    }

    private static boolean startsWithIgnoreCase(String s, String prefix) {
        return s.regionMatches(true, 0, prefix, 0, prefix.length());
    }

    private void usage() {
        out.print("usage: udaddy\n"
                + "\t[-s server_address]\n"
                + "\t[-b bind_address]\n"
                + "\t[-f address_format]\n"
                + "\t    name, ip, ipv6, or gid\n"
                + "\t[-P port_space]\n"
                + "\t    udp or ipoib\n"
                + "\t[-c connections]\n"
                + "\t[-C message_count]\n"
                + "\t[-S message_size]\n"
                + "\t[-t type_of_service]\n"
                + "\t[-p port_space - 0x111 for UDP (default), 0x2 for IPOIB]\n");
    }
}
