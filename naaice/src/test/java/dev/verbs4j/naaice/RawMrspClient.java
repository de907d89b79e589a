package dev.verbs4j.naaice;

import dev.verbs4j.rdmacm.CmEvent;
import dev.verbs4j.rdmacm.CmEventType;
import dev.verbs4j.rdmacm.CmId;
import dev.verbs4j.rdmacm.ConnectionParameters;
import dev.verbs4j.rdmacm.EventChannel;
import dev.verbs4j.rdmacm.PortSpace;
import dev.verbs4j.verbs.Access;
import dev.verbs4j.verbs.CompletionChannel;
import dev.verbs4j.verbs.CompletionQueue;
import dev.verbs4j.verbs.MemoryRegion;
import dev.verbs4j.verbs.Opcode;
import dev.verbs4j.verbs.ProtectionDomain;
import dev.verbs4j.verbs.QpType;
import dev.verbs4j.verbs.QueuePair;
import dev.verbs4j.verbs.QueuePairInit;
import dev.verbs4j.verbs.ReceiveRequests;
import dev.verbs4j.verbs.SendFlags;
import dev.verbs4j.verbs.SendRequests;
import dev.verbs4j.verbs.WorkCompletion;
import dev.verbs4j.verbs.WorkCompletions;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.time.Duration;

/**
 * A test peer that speaks raw MRSP: connects like a NAAICE host and sends arbitrary bytes as MRSP
 * messages (SEND with SE), returning the NAA's answer. Owns all it creates; closed with {@link #close()}.
 */
final class RawMrspClient implements AutoCloseable {

    /** What came back for one message. */
    enum Outcome {
        /** An MRSP answer arrived ({@link #answer()}). */
        ANSWER,
        /** Nothing arrived within the wait (expected after a client error message). */
        NOTHING,
        /** The connection failed or was closed by the NAA. */
        CLOSED
    }

    private static final int BUFFER = 16384;
    private final EventChannel events = EventChannel.create();
    private final CmId id;
    private ProtectionDomain pd;
    private CompletionChannel channel;
    private CompletionQueue cq;
    private QueuePair qp;
    private MemoryRegion buffer;
    private final SendRequests sends = new SendRequests(1, 1);
    private final ReceiveRequests receives = new ReceiveRequests(1, 1);
    private final WorkCompletions wcs = new WorkCompletions(8);
    private boolean receivePosted;
    private MrspMessage answer;
    private boolean broken;
    /** Whether the SEND of the exchange under way completed. */
    private boolean sent;

    RawMrspClient(InetSocketAddress naa, InetSocketAddress local, Duration timeout) {
        id = events.createId(PortSpace.TCP);
        id.resolveAddress(local, naa, Duration.ofSeconds(2));
        expect(CmEventType.ADDR_RESOLVED, timeout);
        pd = id.context().allocateProtectionDomain();
        channel = id.context().createCompletionChannel();
        cq = id.context().createCompletionQueue(16, channel, 0);
        qp = id.createQueuePair(pd, QueuePairInit.of(QpType.RC, cq).maxSendWr(4).maxRecvWr(4).maxSendSge(1).maxRecvSge(1));
        buffer = pd.allocateRegion(2L * BUFFER, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
        id.resolveRoute(Duration.ofSeconds(2));
        expect(CmEventType.ROUTE_RESOLVED, timeout);
        id.connect(new ConnectionParameters(new byte[0], 1, 1, false, 7, 6, false, 0));
        expect(CmEventType.ESTABLISHED, timeout);
    }

    private void expect(CmEventType type, Duration timeout) {
        CmEvent ev = events.getEvent(timeout);
        if (ev == null || ev.type() != type) {
            throw new IllegalStateException("expected " + type + ", got " + ev);
        }
    }

    boolean broken() {
        return broken;
    }

    MrspMessage answer() {
        return answer;
    }

    /** Sends {@code message} and waits up to {@code wait} for an answer. */
    Outcome send(byte[] message, Duration wait) {
        if (broken) {
            return Outcome.CLOSED;
        }
        if (!receivePosted) {
            receives.get(0).wrId(1).sge(buffer, 0, BUFFER);
            qp.postReceive(receives, 1);
            receivePosted = true;
        }
        MemorySegment.copy(MemorySegment.ofArray(message), 0, buffer.segment(), BUFFER, message.length);
        var w = sends.reset(0).wrId(2).opcode(Opcode.SEND).flags(SendFlags.SIGNALED | SendFlags.SOLICITED);
        if (message.length > 0) {
            w.sge(buffer, BUFFER, message.length); // none: a zero-length SEND
        }
        qp.postSend(sends, 1);
        sent = false;
        answer = null;
        long deadline = System.nanoTime() + wait.toNanos();
        long sendDeadline = System.nanoTime() + 30_000_000_000L;
        while (true) {
            CmEvent ev = events.tryGetEvent();
            if (ev != null && ev.type() != CmEventType.TIMEWAIT_EXIT) {
                broken = true;
                return Outcome.CLOSED;
            }
            int n;
            while ((n = cq.poll(wcs)) > 0) {
                if (!take(n)) {
                    return Outcome.CLOSED;
                }
            }
            if (sent && answer != null) {
                return Outcome.ANSWER;
            }
            long left = deadline - System.nanoTime();
            if (left <= 0 && sent) {
                return Outcome.NOTHING;
            }
            if (!sent) {
                left = sendDeadline - System.nanoTime();
                if (left <= 0) {
                    broken = true;
                    return Outcome.CLOSED;
                }
            }
            cq.requestNotify(false);
            if ((n = cq.poll(wcs)) > 0) {
                if (!take(n)) {
                    return Outcome.CLOSED;
                }
                continue;
            }
            channel.await(Duration.ofNanos(Math.min(left, 50_000_000L)));
        }
    }

    /** Takes the {@code n} completions polled into {@link #wcs}; false after a failed one (the connection is broken). */
    private boolean take(int n) {
        for (int i = 0; i < n; i++) {
            WorkCompletion wc = wcs.get(i);
            if (!wc.isSuccess()) {
                broken = true;
                return false;
            }
            if (wc.wrId() == 2) {
                sent = true;
            } else {
                receivePosted = false;
                answer = Mrsp.decode(buffer.segment(), wc.byteLength());
            }
        }
        return true;
    }

    @Override
    public void close() {
        try {
            id.disconnect();
        } catch (RuntimeException e) {
            // already gone
        }
        for (AutoCloseable c : new AutoCloseable[]{id, cq, channel, pd, events, sends, receives, wcs}) {
            try {
                if (c != null) {
                    c.close();
                }
            } catch (Exception e) {
                // best effort
            }
        }
    }
}
