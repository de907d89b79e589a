package com.example.downstream;

import dev.verbs4j.rdmacm.EventChannel;
import dev.verbs4j.verbs.Access;
import dev.verbs4j.verbs.CompletionQueue;
import dev.verbs4j.verbs.Context;
import dev.verbs4j.verbs.MemoryRegion;
import dev.verbs4j.verbs.Opcode;
import dev.verbs4j.verbs.ProtectionDomain;
import dev.verbs4j.verbs.QpType;
import dev.verbs4j.verbs.QueuePair;
import dev.verbs4j.verbs.QueuePairEndpoint;
import dev.verbs4j.verbs.QueuePairInit;
import dev.verbs4j.verbs.RdmaArena;
import dev.verbs4j.verbs.ReceiveRequests;
import dev.verbs4j.verbs.SendFlags;
import dev.verbs4j.verbs.SendRequests;
import dev.verbs4j.verbs.WcOpcode;
import dev.verbs4j.verbs.WorkCompletion;
import dev.verbs4j.verbs.WorkCompletions;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;

/**
 * Sends a message from one RC queue pair to another on the same device and checks that it
 * arrived: {@code Main [DEVICE [GID_INDEX]]}, by default the first device and its preferred GID.
 * Prints one line starting with {@code OK} and exits 0, or exits 1 with the reason.
 */
public final class Main {

    private static final int PORT = 1;
    private static final int SIZE = 4096;

    private Main() {
    }

    public static void main(String[] args) {
        try {
            System.out.println(run(args));
        } catch (RuntimeException | AssertionError e) {
            System.out.println("FAILED: " + e);
            e.printStackTrace();
            System.exit(1);
        }
    }

    static String run(String[] args) {
        // librdmacm: an event channel opened and closed (no device needed)
        int channelFd;
        try (EventChannel events = EventChannel.create()) {
            channelFd = events.fd();
        }
        try (Context ctx = args.length > 0 ? Context.open(args[0]) : Context.openFirst();
             RdmaArena memory = RdmaArena.ofShared();
             SendRequests sends = new SendRequests(1, 1);
             ReceiveRequests recvs = new ReceiveRequests(1, 1);
             WorkCompletions wcs = new WorkCompletions(4)) {
            int gid = args.length > 1 ? Integer.parseInt(args[1]) : ctx.preferredGidIndex(PORT);
            ProtectionDomain pd = ctx.allocateProtectionDomain();
            CompletionQueue cq = ctx.createCompletionQueue(16);
            QueuePair a = pd.createQueuePair(QueuePairInit.of(QpType.RC, cq));
            QueuePair b = pd.createQueuePair(QueuePairInit.of(QpType.RC, cq));
            MemorySegment buffer = memory.allocate(2 * SIZE, 4096);
            MemoryRegion mr = pd.register(buffer, Access.LOCAL_WRITE);

            a.init(PORT);
            b.init(PORT);
            QueuePairEndpoint ea = a.localEndpoint(gid, 0x1111);
            QueuePairEndpoint eb = b.localEndpoint(gid, 0x2222);
            a.readyToReceive(eb, gid);
            b.readyToReceive(ea, gid);
            a.readyToSend(ea.psn());
            b.readyToSend(eb.psn());

            byte[] message = "hello from a verbs4j user".getBytes(StandardCharsets.US_ASCII);
            for (int i = 0; i < SIZE; i++) {
                buffer.set(ValueLayout.JAVA_BYTE, i, message[i % message.length]);
            }
            recvs.get(0).wrId(2).sge(mr, SIZE, SIZE);
            b.postReceive(recvs, 1);
            sends.get(0).wrId(1).opcode(Opcode.SEND).flags(SendFlags.SIGNALED).sge(mr, 0, SIZE);
            a.postSend(sends, 1);

            boolean sent = false;
            boolean received = false;
            long deadline = System.nanoTime() + 30_000_000_000L;
            while (!(sent && received)) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("no completion within 30 s (sent " + sent + ", received " + received + ")");
                }
                int n = cq.poll(wcs);
                for (int i = 0; i < n; i++) {
                    WorkCompletion wc = wcs.get(i);
                    if (!wc.isSuccess()) {
                        throw new IllegalStateException("work request " + wc.wrId() + ": " + wc.status().description());
                    }
                    if (wc.opcode() == WcOpcode.SEND && wc.wrId() == 1) {
                        sent = true;
                    } else if (wc.opcode() == WcOpcode.RECV && wc.wrId() == 2 && wc.byteLength() == SIZE) {
                        received = true;
                    } else {
                        throw new IllegalStateException("unexpected completion " + wc.opcode() + " of " + wc.wrId());
                    }
                }
                if (n == 0) {
                    Thread.onSpinWait();
                }
            }
            long mismatch = buffer.asSlice(0, SIZE).mismatch(buffer.asSlice(SIZE, SIZE));
            if (mismatch != -1) {
                throw new IllegalStateException("received bytes differ from the sent ones at offset " + mismatch);
            }
            return "OK: RC SEND/RECV of " + SIZE + " bytes on " + ctx.name() + " (GID index " + gid + ", QPs "
                    + a.qpNum() + " -> " + b.qpNum() + "), rdmacm event channel fd " + channelFd;
        }
    }
}
