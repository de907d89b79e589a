package dev.verbs4j.vipl;

import dev.verbs4j.verbs.RdmaArena;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

/**
 * The server process of {@link ViplTwoProcessDeviceTest}: on the NIC given as argument 1 and the
 * address of argument 2 it rejects one connection request, accepts the next, tells its peer where
 * its regions are, checks what arrives and reports each step on stdout as one line ({@code OK ...}
 * or {@code FAIL ...}). Exit status 0 when every step held.
 */
final class ViplPeerMain {

    static final byte[] REJECTED = {'r', 'e', 'j'};
    static final byte[] ACCEPTED = {'a', 'c', 'c'};
    /** Offsets in the server's data region the client uses. */
    static final int WRITE_AT = 4096;
    static final int READ_AT = 8192;
    static final int READ_FILL = 0x44;
    static final long WAIT = 60_000;

    private static final List<String> failures = new ArrayList<>();

    private ViplPeerMain() {
    }

    public static void main(String[] args) throws Exception {
        String device = args[0];
        String address = args[1];
        try (RdmaArena arena = RdmaArena.ofShared()) {
            VipNic nic = Vipl.openNic(device);
            VipPtag ptag = Vipl.createPtag(nic);
            MemorySegment data = arena.allocate(1 << 16, 4096);
            MemorySegment noWrite = arena.allocate(4096, 4096);
            MemorySegment descs = arena.allocate(16 * 256, 4096);
            VipMemHandle dataH = Vipl.registerMem(nic, data, new VipMemAttributes(ptag, true, true));
            VipMemHandle noWriteH = Vipl.registerMem(nic, noWrite, VipMemAttributes.of(ptag));
            VipMemHandle descH = Vipl.registerMem(nic, descs, VipMemAttributes.of(ptag));
            data.asSlice(READ_AT, 64).fill((byte) READ_FILL);
            // the NIC's listener for this address starts with the first ConnectWait: a poll
            // (timeout 0) starts it before the client is told to come
            try {
                Vipl.connectWait(nic, VipNetAddress.of(address, REJECTED), 0);
                check(false, "a request before LISTENING");
            } catch (VipException e) {
                check(e.code() == VipReturn.TIMEOUT, "listener up: " + e.code());
            }
            System.out.println("LISTENING");

            // a request to reject
            VipConnHandle first = Vipl.connectWait(nic, VipNetAddress.of(address, REJECTED), WAIT);
            check(Vipl.connectReject(first) == VipReturn.SUCCESS, "reject");

            VipVi vi = Vipl.createVi(nic, VipViAttributes.of(ptag).withRdma(true, true), null, null);
            VipDescriptor[] r = new VipDescriptor[4];
            for (int i = 0; i < r.length; i++) {
                r[i] = VipDescriptor.at(descs, i * 256L, 8).sendReceive(0).addData(data.asSlice(i * 256L, 256), dataH);
                check(Vipl.postRecv(vi, r[i], descH) == VipReturn.SUCCESS, "postRecv " + i);
            }
            VipConnHandle second = Vipl.connectWait(nic, VipNetAddress.of(address, ACCEPTED), WAIT);
            check(Vipl.connectAccept(second, vi) == VipReturn.SUCCESS, "accept");
            // where the regions are: data address, data handle, no-write address, no-write handle
            MemorySegment info = data.asSlice(60_000, 24);
            info.set(ValueLayout.JAVA_LONG_UNALIGNED, 0, data.address());
            info.set(ValueLayout.JAVA_INT, 8, dataH.value());
            info.set(ValueLayout.JAVA_LONG_UNALIGNED, 12, noWrite.address());
            info.set(ValueLayout.JAVA_INT, 20, noWriteH.value());
            VipDescriptor s = VipDescriptor.at(descs, 8 * 256L, 8).sendReceive(0).addData(info, dataH);
            check(Vipl.postSend(vi, s, descH) == VipReturn.SUCCESS, "postSend info");
            VipDescriptor out = VipDescriptor.empty();
            check(Vipl.sendWait(vi, WAIT, out) == VipReturn.SUCCESS && out.status() == (VipStatus.DONE | VipStatus.OP_SEND),
                    "info sent " + VipStatus.describe(out.status()));

            // 1: a send of 32 bytes of 0x11; 2: 8 bytes with immediate 0xCAFE; 3: RDMA write with immediate 0xBEEF
            check(Vipl.recvWait(vi, WAIT, out) == VipReturn.SUCCESS, "receive 1");
            check(out.status() == (VipStatus.DONE | VipStatus.OP_RECEIVE) && out.length() == 32
                    && data.get(ValueLayout.JAVA_BYTE, 31) == 0x11, "plain send: " + out);
            check(Vipl.recvWait(vi, WAIT, out) == VipReturn.SUCCESS, "receive 2");
            check(out.status() == (VipStatus.DONE | VipStatus.OP_RECEIVE | VipStatus.IMMEDIATE) && out.length() == 8
                    && out.immediateData() == 0xCAFE && data.get(ValueLayout.JAVA_BYTE, 256 + 7) == 0x22,
                    "send with immediate: " + out);
            check(Vipl.recvWait(vi, WAIT, out) == VipReturn.SUCCESS, "receive 3");
            check(out.status() == (VipStatus.DONE | VipStatus.OP_REMOTE_RDMA_WRITE | VipStatus.IMMEDIATE)
                    && out.immediateData() == 0xBEEF && data.get(ValueLayout.JAVA_BYTE, WRITE_AT) == 0x33
                    && data.get(ValueLayout.JAVA_BYTE, WRITE_AT + 63) == 0x33, "RDMA write with immediate: " + out);
            System.out.println("RECEIVED");

            // the client then writes into the region without RDMA write, which breaks the
            // connection, and says so on stdin; the last receive is flushed by the disconnect
            String line = new java.io.BufferedReader(new java.io.InputStreamReader(System.in,
                    java.nio.charset.StandardCharsets.US_ASCII)).readLine();
            check("DISCONNECT".equals(line), "told to disconnect: " + line);
            check(Vipl.disconnect(vi) == VipReturn.SUCCESS, "disconnect");
            check(Vipl.recvDone(vi, out) == VipReturn.SUCCESS && out.address() == r[3].address()
                    && (out.status() & VipStatus.DESC_FLUSHED_ERROR) != 0, "the last receive flushed: " + out);
            check(Vipl.queryVi(vi).state() == VipViState.IDLE, "Idle after the disconnect");
            check(noWrite.get(ValueLayout.JAVA_BYTE, 0) == 0, "the region without RDMA write is unchanged");
            check(Vipl.destroyVi(vi) == VipReturn.SUCCESS, "destroyVi");
            Vipl.closeNic(nic);
        }
        System.out.println(failures.isEmpty() ? "DONE" : "FAILED " + failures);
        System.exit(failures.isEmpty() ? 0 : 1);
    }

    private static void check(boolean ok, String what) {
        System.out.println((ok ? "OK " : "FAIL ") + what);
        if (!ok) {
            failures.add(what);
        }
    }
}
