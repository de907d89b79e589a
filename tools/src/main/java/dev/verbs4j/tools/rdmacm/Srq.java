package dev.verbs4j.tools.rdmacm;

import dev.verbs4j.rdmacm.AddressInfo;
import dev.verbs4j.rdmacm.CmId;
import dev.verbs4j.rdmacm.ConnectionParameters;
import dev.verbs4j.rdmacm.PortSpace;
import dev.verbs4j.tools.Getopt;
import dev.verbs4j.verbs.Access;
import dev.verbs4j.verbs.CompletionChannel;
import dev.verbs4j.verbs.CompletionQueue;
import dev.verbs4j.verbs.Context;
import dev.verbs4j.verbs.MemoryRegion;
import dev.verbs4j.verbs.Opcode;
import dev.verbs4j.verbs.ProtectionDomain;
import dev.verbs4j.verbs.QpState;
import dev.verbs4j.verbs.QpType;
import dev.verbs4j.verbs.QueuePair;
import dev.verbs4j.verbs.QueuePairInit;
import dev.verbs4j.verbs.ReceiveRequests;
import dev.verbs4j.verbs.SendFlags;
import dev.verbs4j.verbs.SendRequests;
import dev.verbs4j.verbs.SharedReceiveQueue;
import dev.verbs4j.verbs.WorkCompletion;
import dev.verbs4j.verbs.WorkCompletions;

import java.io.PrintStream;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The shared receive queue example of the RDMA programming manual ({@code srq}): synchronous
 * RDMA CM ids, {@code qp_count} RC queue pairs whose receives all go to one SRQ and one
 * completion queue with a completion channel (arm, wait, acknowledge, re-arm). The client sends
 * {@code msg_count} messages round-robin over the queue pairs, {@code max_wr} at a time, and waits
 * for the server's "continue" message after each batch. Unlike the manual's code, every wait is
 * bounded and the receive queue is drained before it is armed again, so a second completion
 * arriving with the first is never missed. Owns every resource it creates.
 *
 * <pre>srq [-s] -a ADDR [-p PORT] [-c MSG_COUNT] [-l MSG_LENGTH] [-q QP_COUNT] [-w MAX_WR] [-t SECONDS]</pre>
 */
public final class Srq extends ManualExample {

    private static final Duration RESOLVE = Duration.ofMillis(1000);

    private boolean server;
    private String address;
    private String port = "51216";
    private int msgCount = 100;
    private int msgLength = 100_000;
    private int qpCount = 4;
    private int maxWr = 64;

    private ProtectionDomain pd;
    private SharedReceiveQueue srq;
    private CompletionQueue srqCq;
    private MemoryRegion sendMr;
    private MemoryRegion recvMr;
    private final List<CmId> conns = new ArrayList<>();
    private final List<CompletionQueue> sendCqs = new ArrayList<>();

    private Srq(PrintStream out, PrintStream err) {
        super("srq", out, err);
    }

    /** Runs srq; returns its status (0 on success). */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        return new Srq(out, err).run(args, "a:p:c:l:q:w:st:");
    }

    @Override
    boolean option(int c, String a, Getopt opts) {
        switch (c) {
            case 'a' -> address = a;
            case 'p' -> port = a;
            case 'c' -> msgCount = opts.positiveArgument('c');
            case 'l' -> msgLength = opts.positiveArgument('l');
            case 'q' -> qpCount = opts.positiveArgument('q');
            case 'w' -> maxWr = opts.positiveArgument('w');
            case 's' -> server = true;
            default -> {
                return false;
            }
        }
        return true;
    }

    @Override
    boolean complete() {
        return address != null;
    }

    @Override
    void usage() {
        out.print("usage: srq [-s] -a address [-p port] [-c msg_count] [-l msg_length] [-q qp_count] [-w max_wr] [-t seconds]\n");
        out.print("\t-s\tserver mode (default: client)\n");
        out.print("\t-a\tthe server's address (the server binds to it)\n");
        out.print("\t-p\tport (default 51216)\n");
        out.print("\t-c\tmessages (default 100)\n");
        out.print("\t-l\tmessage length (default 100000)\n");
        out.print("\t-q\tqueue pairs sharing the SRQ (default 4)\n");
        out.print("\t-w\treceives in the SRQ and messages per batch (default 64)\n");
        out.print("\t-t\tseconds to wait for each step (default 30)\n");
    }

    @Override
    int execute() {
        try (AddressInfo rai = AddressInfo.resolve(address, port, server ? AddressInfo.PASSIVE : 0, PortSpace.TCP);
             CmId srqId = CmId.createSynchronous(PortSpace.TCP)) {
            AddressInfo.Entry entry = rai.first();
            if (server) {
                srqId.bind(entry.source());
            } else {
                srqId.resolveAddress(null, entry.destination(), RESOLVE);
            }
            Context ctx = srqId.context();
            try (ProtectionDomain pd = ctx.allocateProtectionDomain();
                 SharedReceiveQueue srq = pd.createSharedReceiveQueue(maxWr, 1);
                 CompletionChannel channel = ctx.createCompletionChannel();
                 CompletionQueue srqCq = ctx.createCompletionQueue(maxWr, channel, 0);
                 MemoryRegion sendMr = pd.allocateRegion(msgLength, Access.LOCAL_WRITE);
                 MemoryRegion recvMr = pd.allocateRegion(msgLength, Access.LOCAL_WRITE)) {
                this.pd = pd;
                this.srq = srq;
                this.srqCq = srqCq;
                this.sendMr = sendMr;
                this.recvMr = recvMr;
                for (int i = 0; i < maxWr; i++) {
                    postReceive();
                }
                srqCq.requestNotify(false);
                try {
                    return server ? serve(srqId) : send(entry);
                } finally {
                    closeConnections();
                }
            }
        }
    }

    private int serve(CmId listener) {
        listener.listen(4);
        for (int i = 0; i < qpCount; i++) {
            CmId conn = listener.getRequest();
            conns.add(conn);
            createQueuePair(conn);
            conn.accept(ConnectionParameters.DEFAULT);
        }
        int received = 0;
        try (WorkCompletions wcs = new WorkCompletions(1)) {
            while (received < msgCount) {
                for (int i = 0; i < maxWr && received < msgCount; i++) {
                    WorkCompletion wc = awaitReceive(wcs, "message " + (received + 1));
                    if (!wc.isSuccess()) {
                        err.print("srq: receive " + (received + 1) + " failed: " + wc.status().description() + "\n");
                        return 1;
                    }
                    if (!intact(wc.byteLength())) {
                        err.print("srq: message " + (received + 1) + " (" + wc.byteLength() + " bytes) is not what was sent\n");
                        return 1;
                    }
                    received++;
                    out.print("recv count: " + received + ", qp_num: " + wc.qpNum() + "\n");
                    postReceive();
                }
                // tell the client to go on
                sendOne(0, 1, wcs);
            }
        }
        return 0;
    }

    private int send(AddressInfo.Entry entry) {
        for (int i = 0; i < qpCount; i++) {
            CmId conn = CmId.createEndpoint(entry);
            conns.add(conn);
            createQueuePair(conn);
            conn.connect(ConnectionParameters.DEFAULT);
        }
        for (long j = 0; j < msgLength; j++) {
            sendMr.segment().set(ValueLayout.JAVA_BYTE, j, (byte) j);
        }
        int sent = 0;
        try (WorkCompletions wcs = new WorkCompletions(1)) {
            while (sent < msgCount) {
                for (int i = 0; i < maxWr && sent < msgCount; i++) {
                    WorkCompletion wc = sendOne(i % qpCount, msgLength, wcs);
                    sent++;
                    out.print("send count: " + sent + ", qp num: " + wc.qpNum() + "\n");
                }
                WorkCompletion wc = awaitReceive(wcs, "the server's message to continue");
                if (!wc.isSuccess()) {
                    err.print("srq: receive failed: " + wc.status().description() + "\n");
                    return 1;
                }
                postReceive();
            }
        }
        return 0;
    }

    /**
     * Whether the received message is the client's: byte j is j. All receives share one buffer as
     * in the manual's code, which is safe here because every message carries the same bytes.
     */
    private boolean intact(int length) {
        for (long j = 0; j < length; j++) {
            if (recvMr.segment().get(ValueLayout.JAVA_BYTE, j) != (byte) j) {
                return false;
            }
        }
        return true;
    }

    /** The connection's RC queue pair: its own send queue, receives through the SRQ to the shared queue. */
    private void createQueuePair(CmId conn) {
        CompletionQueue sendCq = conn.context().createCompletionQueue(1);
        sendCqs.add(sendCq);
        conn.createQueuePair(pd, QueuePairInit.of(QpType.RC, sendCq, srqCq).sharedReceiveQueue(srq)
                .maxSendWr(1).maxSendSge(1).signalAll(false));
    }

    private void postReceive() {
        try (ReceiveRequests rr = new ReceiveRequests(1, 1)) {
            rr.get(0).wrId(0).sge(recvMr, 0, msgLength);
            srq.postReceive(rr, 1);
        }
    }

    /** A signalled SEND of {@code length} bytes on connection {@code index}; waits for its completion. */
    private WorkCompletion sendOne(int index, int length, WorkCompletions wcs) {
        QueuePair qp = conns.get(index).queuePair();
        CompletionQueue cq = sendCqs.get(index);
        try (SendRequests sr = new SendRequests(1, 1)) {
            sr.reset(0).wrId(index).opcode(Opcode.SEND).flags(SendFlags.SIGNALED).sge(sendMr, 0, length);
            qp.postSend(sr, 1);
        }
        WorkCompletion wc = pollOne(cq, wcs, "a send did not complete");
        if (!wc.isSuccess()) {
            throw new IllegalStateException("send on queue pair " + wc.qpNum() + " failed: " + wc.status().description());
        }
        return wc;
    }

    /**
     * The next completion of the shared receive queue: taken at once when one is queued, else
     * after a completion event (acknowledged, then the queue armed again before it is drained).
     */
    private WorkCompletion awaitReceive(WorkCompletions wcs, String what) {
        long deadline = System.nanoTime() + limit.toNanos();
        while (srqCq.poll(wcs) == 0) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw timedOut("no " + what);
            }
            if (srqCq.channel().await(Duration.ofNanos(left)) != null) {
                srqCq.requestNotify(false);
            }
        }
        return wcs.get(0);
    }

    private void closeConnections() {
        for (CmId conn : conns) {
            try {
                QueuePair qp = conn.queuePair();
                if (qp != null && qp.queryState() == QpState.RTS) {
                    conn.disconnect();
                }
            } catch (RuntimeException e) {
                err.print("srq: disconnect: " + e.getMessage() + "\n");
            } finally {
                conn.close();
            }
        }
        for (CompletionQueue cq : sendCqs) {
            cq.close();
        }
    }
}
