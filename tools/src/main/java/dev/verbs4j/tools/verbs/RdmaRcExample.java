package dev.verbs4j.tools.verbs;

import dev.verbs4j.tools.Getopt;
import dev.verbs4j.verbs.Access;
import dev.verbs4j.verbs.CompletionQueue;
import dev.verbs4j.verbs.Context;
import dev.verbs4j.verbs.Device;
import dev.verbs4j.verbs.Gid;
import dev.verbs4j.verbs.MemoryRegion;
import dev.verbs4j.verbs.Opcode;
import dev.verbs4j.verbs.ProtectionDomain;
import dev.verbs4j.verbs.QpType;
import dev.verbs4j.verbs.QueuePair;
import dev.verbs4j.verbs.QueuePairEndpoint;
import dev.verbs4j.verbs.QueuePairInit;
import dev.verbs4j.verbs.ReceiveRequests;
import dev.verbs4j.verbs.SendFlags;
import dev.verbs4j.verbs.SendRequests;
import dev.verbs4j.verbs.VerbsException;
import dev.verbs4j.verbs.WorkCompletion;
import dev.verbs4j.verbs.WorkCompletions;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.List;

/**
 * {@code rdma_rc_example}: the RDMA Aware Networks Programming manual's RC example in Java. The
 * server sends a message, the client RDMA-reads the server's buffer, then RDMA-writes it; the
 * peers exchange buffer address, rkey, QP number, LID and GID over TCP in network order, as the
 * manual's program does. Same options: {@code [-p port] [-d dev] [-i port] [-g gid_idx] [server]}.
 */
public final class RdmaRcExample {

    private static final int MSG_SIZE = 64;
    private static final String MSG = "SEND operation";
    private static final String RDMA_READ_MSG = "RDMA read operation";
    private static final String RDMA_WRITE_MSG = "RDMA write operation";
    private static final long POLL_TIMEOUT_NANOS = 2_000_000_000L;

    private final PrintStream out;
    private final PrintStream err;

    private RdmaRcExample(PrintStream out, PrintStream err) {
        this.out = out;
        this.err = err;
    }

    /** Runs the example; returns 0 on success. */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        return new RdmaRcExample(out, err).execute(args);
    }

    private int execute(String[] args) {
        int tcpPort = 18515;
        String devName = null;
        int ibPort = 1;
        int gidIndex = -1;
        Getopt opts = new Getopt("rdma_rc_example", args, "p:d:i:g:", "port:p", "ib-dev:d", "ib-port:i", "gid-idx:g");
        for (int c; (c = opts.next(err)) != -1; ) {
            switch (c) {
                case 'p' -> tcpPort = Getopt.strtol(opts.argument());
                case 'd' -> devName = opts.argument();
                case 'i' -> ibPort = Getopt.strtol(opts.argument());
                case 'g' -> gidIndex = Getopt.strtol(opts.argument());
                default -> {
                    usage();
                    return 1;
                }
            }
        }
        if (ibPort < 1 || gidIndex < -1) {
            usage();
            return 1;
        }
        List<String> rest = opts.operands();
        if (rest.size() > 1) {
            usage();
            return 1;
        }
        String server = rest.isEmpty() ? null : rest.get(0);
        int rc = 1;
        try (Socket sock = connect(server, tcpPort)) {
            DataInputStream in = new DataInputStream(sock.getInputStream());
            DataOutputStream os = new DataOutputStream(sock.getOutputStream());
            out.print("TCP connection was established\n");
            rc = exchangeAndTransfer(server != null, devName, ibPort, gidIndex, in, os);
        } catch (IOException e) {
            err.print("failed to establish TCP connection: " + e.getMessage() + "\n");
        } catch (VerbsException e) {
            err.print(e.getMessage() + "\n");
        }
        out.print("\ntest result is " + rc + "\n");
        return rc;
    }

    private Socket connect(String server, int port) throws IOException {
        if (server != null) {
            Socket s = new Socket();
            s.connect(new InetSocketAddress(server, port), 10_000);
            s.setSoTimeout(30_000);
            return s;
        }
        try (ServerSocket listener = new ServerSocket()) {
            listener.setReuseAddress(true);
            listener.bind(new InetSocketAddress(port));
            listener.setSoTimeout(120_000);
            out.print("waiting on port " + port + " for TCP connection\n");
            Socket s = listener.accept();
            s.setSoTimeout(30_000);
            return s;
        }
    }

    private int exchangeAndTransfer(boolean client, String devName, int ibPort, int gidIndex,
                                    DataInputStream in, DataOutputStream os) throws IOException {
        String name = devName;
        if (name == null) {
            List<Device> devices = Device.list();
            out.print("found " + devices.size() + " device(s)\n");
            if (devices.isEmpty()) {
                err.print("No IB devices found\n");
                return 1;
            }
            name = devices.get(0).name();
            out.print("device not specified, using first one found: " + name + "\n");
        }
        try (Context ctx = Context.open(name);
             WorkCompletions wcs = new WorkCompletions(1);
             SendRequests sends = new SendRequests(1, 1);
             ReceiveRequests recvs = new ReceiveRequests(1, 1)) {
            ProtectionDomain pd = ctx.allocateProtectionDomain();
            CompletionQueue cq = ctx.createCompletionQueue(1);
            MemoryRegion mr = pd.allocateRegion(MSG_SIZE, Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE);
            MemorySegment buf = mr.segment();
            if (!client) {
                putString(buf, MSG);
                out.print("going to send the message: '" + MSG + "'\n");
            }
            out.printf("MR was registered with addr=0x%x, lkey=0x%x, rkey=0x%x, flags=0x%x\n", mr.address(), mr.lkey(),
                    mr.rkey(), mr.access());
            QueuePair qp = pd.createQueuePair(QueuePairInit.of(QpType.RC, cq).maxSendWr(1).maxRecvWr(1).signalAll(true));
            out.printf("QP was created, QP number=0x%x\n", qp.qpNum());

            Gid myGid = gidIndex >= 0 ? ctx.queryGid(ibPort, gidIndex) : Gid.of(new byte[Gid.BYTES]);
            int lid = ctx.queryPort(ibPort).lid();
            os.writeLong(mr.remoteAddress());
            os.writeInt(mr.rkey());
            os.writeInt(qp.qpNum());
            os.writeShort(lid);
            os.write(myGid.raw());
            os.flush();
            long remoteAddr = in.readLong();
            int remoteRkey = in.readInt();
            int remoteQpn = in.readInt();
            int remoteLid = in.readUnsignedShort();
            byte[] remoteGid = in.readNBytes(Gid.BYTES);
            out.printf("\nLocal LID = 0x%x\n", lid);
            out.printf("Remote address = 0x%x\n", remoteAddr);
            out.printf("Remote rkey = 0x%x\n", remoteRkey);
            out.printf("Remote QP number = 0x%x\n", remoteQpn);
            out.printf("Remote LID = 0x%x\n", remoteLid);
            if (gidIndex >= 0) {
                out.print("Remote GID = " + HexFormat.ofDelimiter(":").formatHex(remoteGid) + "\n");
            }
            qp.initConnected(ibPort, Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE);
            if (client) {
                recvs.get(0).wrId(0).sge(mr, 0, MSG_SIZE);
                qp.postReceive(recvs, 1);
                out.print("Receive Request was posted\n");
            }
            Gid peer = gidIndex >= 0 ? Gid.of(remoteGid) : Gid.of(new byte[Gid.BYTES]);
            qp.readyToReceive(new QueuePairEndpoint(remoteLid, remoteQpn, 0, peer), Math.max(gidIndex, 0));
            qp.readyToSend(0, 0x12, 6, 0);
            out.print("QP state was change to RTS\n");
            sync(in, os, 'Q');

            if (!client) {
                post(qp, sends, mr, Opcode.SEND, 0, 0);
            }
            if (!pollCompletion(cq, wcs)) {
                return 1;
            }
            if (client) {
                out.print("Message is: '" + getString(buf) + "'\n");
            } else {
                putString(buf, RDMA_READ_MSG);
            }
            sync(in, os, 'R');
            if (client) {
                post(qp, sends, mr, Opcode.RDMA_READ, remoteAddr, remoteRkey);
                if (!pollCompletion(cq, wcs)) {
                    return 1;
                }
                out.print("Contents of server's buffer: '" + getString(buf) + "'\n");
                putString(buf, RDMA_WRITE_MSG);
                out.print("Now replacing it with: '" + getString(buf) + "'\n");
                post(qp, sends, mr, Opcode.RDMA_WRITE, remoteAddr, remoteRkey);
                if (!pollCompletion(cq, wcs)) {
                    return 1;
                }
            }
            sync(in, os, 'W');
            if (!client) {
                out.print("Contents of server buffer: '" + getString(buf) + "'\n");
            }
            return 0;
        }
    }

    private void post(QueuePair qp, SendRequests sends, MemoryRegion mr, Opcode opcode, long remoteAddr, int rkey) {
        sends.reset(0).wrId(0).opcode(opcode).flags(SendFlags.SIGNALED).sge(mr, 0, MSG_SIZE);
        if (opcode != Opcode.SEND) {
            sends.get(0).rdma(remoteAddr, rkey);
        }
        qp.postSend(sends, 1);
        out.print(switch (opcode) {
            case SEND -> "Send Request was posted\n";
            case RDMA_READ -> "RDMA Read Request was posted\n";
            default -> "RDMA Write Request was posted\n";
        });
    }

    private boolean pollCompletion(CompletionQueue cq, WorkCompletions wcs) {
        long deadline = System.nanoTime() + POLL_TIMEOUT_NANOS;
        while (cq.poll(wcs) == 0) {
            if (System.nanoTime() > deadline) {
                err.print("completion wasn't found in the CQ after timeout\n");
                return false;
            }
        }
        WorkCompletion wc = wcs.get(0);
        out.print("completion was found in CQ with status 0x" + Integer.toHexString(wc.statusCode()) + "\n");
        if (!wc.isSuccess()) {
            err.printf("got bad completion with status: 0x%x, vendor syndrome: 0x%x\n", wc.statusCode(), wc.vendorError());
            return false;
        }
        return true;
    }

    private static void sync(DataInputStream in, DataOutputStream os, char c) throws IOException {
        os.writeByte(c);
        os.flush();
        in.readByte();
    }

    private static void putString(MemorySegment buf, String s) {
        buf.fill((byte) 0);
        MemorySegment.copy(s.getBytes(StandardCharsets.US_ASCII), 0, buf, java.lang.foreign.ValueLayout.JAVA_BYTE, 0, s.length());
    }

    private static String getString(MemorySegment buf) {
        return buf.getString(0, StandardCharsets.US_ASCII);
    }

    private void usage() {
        out.print("Usage:\n"
                + " rdma_rc_example            start a server and wait for connection\n"
                + " rdma_rc_example <host>     connect to server at <host>\n\n"
                + "Options:\n"
                + " -p, --port <port>          listen on/connect to port <port> (default 18515)\n"
                + " -d, --ib-dev <dev>         use IB device <dev> (default first device found)\n"
                + " -i, --ib-port <port>       use port <port> of IB device (default 1)\n"
                + " -g, --gid-idx <gid index>  gid index to be used in GRH (default not used)\n");
    }
}
