package dev.verbs4j.perf.tools;

import dev.verbs4j.rdmacm.CmId;
import dev.verbs4j.tools.ToolExit;
import dev.verbs4j.verbs.Access;
import dev.verbs4j.verbs.Closeables;
import dev.verbs4j.verbs.CompletionQueue;
import dev.verbs4j.verbs.MemoryRegion;
import dev.verbs4j.verbs.Opcode;
import dev.verbs4j.verbs.ProtectionDomain;
import dev.verbs4j.verbs.QpType;
import dev.verbs4j.verbs.QueuePairInit;
import dev.verbs4j.verbs.ReceiveRequests;
import dev.verbs4j.verbs.SendFlags;
import dev.verbs4j.verbs.SendRequests;
import dev.verbs4j.verbs.WorkCompletion;
import dev.verbs4j.verbs.WorkCompletions;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The control connection of the {@code -R} mode ({@link CmRun}): an RC queue pair on an RDMA CM
 * id with one 56-byte receive always posted; every message is one signaled SEND. The client
 * sends first, the server answers. Owns the id and its verbs objects.
 */
final class CmControlChannel implements Wire.Channel {

    /** The length of every control message: a queue-pair description in binary form. */
    static final int MESSAGE = Wire.BINARY;
    private static final int RECV_WRID = 5;
    private static final int SEND_WRID = 6;

    private static final long LAST_SEND_GRACE_NANOS = 10_000_000_000L;
    private static final System.Logger LOG = System.getLogger(CmControlChannel.class.getName());

    final CmId id;
    private final boolean client;
    private final ProtectionDomain pd;
    private final CompletionQueue sendCq;
    private final CompletionQueue recvCq;
    private final MemoryRegion mr;
    private final SendRequests send = new SendRequests(1, 1);
    private final ReceiveRequests recv = new ReceiveRequests(1, 1);
    private final WorkCompletions wcs = new WorkCompletions(1);

    /** The channel on the connection of {@code id}; {@code t} says how a failure ends the run. */
    CmControlChannel(CmId id, Perftest t) throws ToolExit {
        this.id = id;
        this.client = t.o.serverName != null; // perftest orders the exchanges by the host given, not by --reversed
        try {
            pd = id.context().allocateProtectionDomain();
            sendCq = id.context().createCompletionQueue(1);
            recvCq = id.context().createCompletionQueue(1);
            mr = pd.allocateRegion(4096, Access.LOCAL_WRITE);
            id.createQueuePair(pd, QueuePairInit.of(QpType.RC, sendCq, recvCq).maxSendWr(1).maxRecvWr(1)
                    .maxSendSge(1).maxRecvSge(1).maxInlineData(0));
            recv.get(0).wrId(RECV_WRID).sge(mr, 0, MESSAGE);
            id.queuePair().postReceive(recv, 1);
        } catch (RuntimeException e) {
            throw t.exit("Failed to create the RDMA CM control resources: " + e.getMessage(), 1);
        }
    }

    @Override
    public byte[] exchange(byte[] mine) throws IOException {
        if (client) {
            send(mine);
            return receive(mine.length);
        }
        byte[] theirs = receive(mine.length);
        send(mine);
        return theirs;
    }

    @Override
    public byte[] lastExchange(byte[] mine) throws IOException {
        if (client) {
            return exchange(mine);
        }
        byte[] theirs = receive(mine.length);
        post(mine);
        // the client closes once it has this answer; if the acknowledgement is lost with its
        // queue pair, the completion may never come: the answer was sent, so stop waiting
        await(sendCq, System.nanoTime() + LAST_SEND_GRACE_NANOS);
        return theirs;
    }

    private void send(byte[] data) throws IOException {
        post(data);
        await(sendCq);
    }

    private void post(byte[] data) throws IOException {
        MemorySegment s = mr.segment();
        s.asSlice(1024, data.length).copyFrom(MemorySegment.ofArray(data));
        send.reset(0).wrId(SEND_WRID).opcode(Opcode.SEND).flags(SendFlags.SIGNALED).sge(mr, 1024, data.length);
        try {
            id.queuePair().postSend(send, 1);
        } catch (RuntimeException e) {
            throw new IOException("Couldn't post send on the RDMA CM control connection", e);
        }
    }

    private byte[] receive(int n) throws IOException {
        await(recvCq);
        byte[] b = new byte[n];
        MemorySegment.copy(mr.segment(), ValueLayout.JAVA_BYTE, 0, b, 0, n);
        try {
            id.queuePair().postReceive(recv, 1);
        } catch (RuntimeException e) {
            throw new IOException("Couldn't post receive on the RDMA CM control connection", e);
        }
        return b;
    }

    private void await(CompletionQueue cq) throws IOException {
        await(cq, Long.MAX_VALUE);
    }

    /** Spins for one completion; returns without one at {@code deadline} (System.nanoTime). */
    private void await(CompletionQueue cq, long deadline) throws IOException {
        int spins = 0;
        while (true) {
            int n;
            try {
                n = cq.poll(wcs);
            } catch (RuntimeException e) {
                throw new IOException("poll failed", e);
            }
            if (n > 0) {
                WorkCompletion wc = wcs.get(0);
                if (!wc.isSuccess()) {
                    throw new Wire.ProtocolException("control message failed: " + wc.status());
                }
                return;
            }
            if ((++spins & 0x3ff) == 0) {
                if (Thread.currentThread().isInterrupted()) {
                    throw new InterruptedIOException("interrupted while waiting for the peer");
                }
                if (deadline != Long.MAX_VALUE && System.nanoTime() - deadline > 0) {
                    return;
                }
                Thread.onSpinWait();
            }
        }
    }

    @Override
    public void finish(boolean sayDone) {
        // no "done" over RDMA CM; the connections end in close()
    }

    @Override
    public void close() {
        Closeables.closeLogged(LOG, id, mr, sendCq, recvCq, pd, send, recv, wcs);
    }
}
