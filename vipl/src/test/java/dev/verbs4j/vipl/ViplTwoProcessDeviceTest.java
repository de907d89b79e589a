package dev.verbs4j.vipl;

import dev.verbs4j.verbs.RdmaArena;
import dev.verbs4j.verbs.TestBed;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The two-process scenario across the two test hosts: a server process ({@link
 * ViplPeerMain}, host B) and this JVM (host A). Connect rejected, then accepted; send/receive with
 * and without immediate data, RDMA write with immediate, RDMA read; an RDMA write into a region
 * without RDMA write drives this Reliable Delivery VI into Error (RDMAW_PROT); the server's
 * disconnect flushes its last posted receive with DESC_FLUSHED. Each side checks its half.
 */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_3)
@Timeout(400)
class ViplTwoProcessDeviceTest {

    @Test
    void twoProcessesAcrossTheHosts() throws Exception {
        TestBed.Host a = TestBed.hostA();
        TestBed.Host b = TestBed.hostB();
        String java = ProcessHandle.current().info().command().orElseThrow();
        Process server = new ProcessBuilder(List.of(java, "--enable-native-access=ALL-UNNAMED", "-cp",
                System.getProperty("java.class.path"), ViplPeerMain.class.getName(), b.device(), b.address()))
                .redirectErrorStream(true).start();
        LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
        List<String> all = new CopyOnWriteArrayList<>();
        Thread.ofPlatform().daemon().start(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(server.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    System.out.println("server: " + line);
                    all.add(line);
                    lines.add(line);
                }
            } catch (Exception ignored) {
                // the process ended
            }
        });
        try (RdmaArena arena = RdmaArena.ofShared(); VipNic nic = Vipl.openNic(a.device())) {
            // a new JVM is slow to start while other VMs share the host
            await(lines, "LISTENING", 240, all);
            VipPtag ptag = Vipl.createPtag(nic);
            MemorySegment data = arena.allocate(1 << 16, 4096);
            MemorySegment descs = arena.allocate(16 * 256, 4096);
            VipMemHandle dataH = Vipl.registerMem(nic, data, new VipMemAttributes(ptag, true, true));
            VipMemHandle descH = Vipl.registerMem(nic, descs, VipMemAttributes.of(ptag));
            List<VipErrorDescriptor> errors = new CopyOnWriteArrayList<>();
            Vipl.errorCallback(nic, null, (ctx, e) -> errors.add(e));
            VipNetAddress local = VipNetAddress.of(a.address(), new byte[]{'c'});

            VipVi vi = Vipl.createVi(nic, VipViAttributes.of(ptag).withRdma(true, true), null, null);
            assertThat(Vipl.connectRequest(vi, local, VipNetAddress.of(b.address(), ViplPeerMain.REJECTED), 60_000))
                    .isEqualTo(VipReturn.REJECT);
            assertThat(Vipl.queryVi(vi).state()).isEqualTo(VipViState.IDLE);
            VipDescriptor info = desc(descs, 0).sendReceive(0).addData(data.asSlice(0, 64), dataH);
            assertThat(Vipl.postRecv(vi, info, descH)).isEqualTo(VipReturn.SUCCESS);
            assertThat(Vipl.connectRequest(vi, local, VipNetAddress.of(b.address(), ViplPeerMain.ACCEPTED), 60_000))
                    .isEqualTo(VipReturn.SUCCESS);
            VipDescriptor out = VipDescriptor.empty();
            assertThat(Vipl.recvWait(vi, 60_000, out)).isEqualTo(VipReturn.SUCCESS);
            assertThat(out.length()).isEqualTo(24);
            long remote = data.get(ValueLayout.JAVA_LONG_UNALIGNED, 0);
            int remoteH = data.get(ValueLayout.JAVA_INT_UNALIGNED, 8);
            long noWrite = data.get(ValueLayout.JAVA_LONG_UNALIGNED, 12);
            int noWriteH = data.get(ValueLayout.JAVA_INT_UNALIGNED, 20);

            data.asSlice(1024, 32).fill((byte) 0x11);
            data.asSlice(2048, 8).fill((byte) 0x22);
            data.asSlice(3072, 64).fill((byte) 0x33);
            post(vi, desc(descs, 1).sendReceive(0).addData(data.asSlice(1024, 32), dataH), descH);
            post(vi, desc(descs, 2).sendReceive(VipControl.IMMEDIATE).immediateData(0xCAFE).addData(data.asSlice(2048, 8), dataH),
                    descH);
            post(vi, desc(descs, 3).rdma(VipControl.OP_RDMAWRITE, VipControl.IMMEDIATE, remote + ViplPeerMain.WRITE_AT, remoteH)
                    .immediateData(0xBEEF).addData(data.asSlice(3072, 64), dataH), descH);
            post(vi, desc(descs, 4).rdma(VipControl.OP_RDMAREAD, 0, remote + ViplPeerMain.READ_AT, remoteH)
                    .addData(data.asSlice(4096, 64), dataH), descH);
            int[] ops = {VipStatus.OP_SEND, VipStatus.OP_SEND, VipStatus.OP_RDMA_WRITE, VipStatus.OP_RDMA_READ};
            for (int op : ops) {
                assertThat(Vipl.sendWait(vi, 60_000, out)).isEqualTo(VipReturn.SUCCESS);
                assertThat(out.status() & ~VipStatus.IMMEDIATE).as(out.toString()).isEqualTo(VipStatus.DONE | op);
            }
            assertThat(data.get(ValueLayout.JAVA_BYTE, 4096)).isEqualTo((byte) ViplPeerMain.READ_FILL);
            assertThat(data.get(ValueLayout.JAVA_BYTE, 4096 + 63)).isEqualTo((byte) ViplPeerMain.READ_FILL);
            await(lines, "RECEIVED", 60, all);

            // a protection violation under Reliable Delivery: the VI goes to Error
            post(vi, desc(descs, 5).rdma(VipControl.OP_RDMAWRITE, 0, noWrite, noWriteH).addData(data.asSlice(3072, 64), dataH),
                    descH);
            assertThat(Vipl.sendWait(vi, 60_000, out)).isEqualTo(VipReturn.SUCCESS);
            assertThat(out.status() & VipStatus.ERROR_MASK).as(VipStatus.describe(out.status())).isNotZero();
            assertThat(Vipl.queryVi(vi).state()).isEqualTo(VipViState.ERROR);
            assertThat(errors).extracting(VipErrorDescriptor::errorCode).contains(VipErrorCode.RDMAW_PROT);
            // posted in Error: flushed at once
            post(vi, desc(descs, 6).sendReceive(0).addData(data.asSlice(0, 8), dataH), descH);
            assertThat(Vipl.sendWait(vi, 60_000, out)).isEqualTo(VipReturn.SUCCESS);
            assertThat(out.status() & VipStatus.DESC_FLUSHED_ERROR).isNotZero();

            OutputStream toServer = server.getOutputStream();
            toServer.write("DISCONNECT\n".getBytes(StandardCharsets.US_ASCII));
            toServer.flush();
            assertThat(server.waitFor(120, TimeUnit.SECONDS)).as("the server ends").isTrue();
            assertThat(all).as(String.join("\n", all)).contains("DONE").noneMatch(l -> l.startsWith("FAIL"));
            assertThat(server.exitValue()).isZero();
            assertThat(Vipl.disconnect(vi)).isEqualTo(VipReturn.SUCCESS);
            assertThat(Vipl.destroyVi(vi)).isEqualTo(VipReturn.SUCCESS);
        } finally {
            server.destroyForcibly();
        }
    }

    private static VipDescriptor desc(MemorySegment descs, int slot) {
        return VipDescriptor.at(descs, slot * 256L, 8);
    }

    private static void post(VipVi vi, VipDescriptor d, VipMemHandle h) {
        assertThat(Vipl.postSend(vi, d, h)).isEqualTo(VipReturn.SUCCESS);
    }

    private static void await(LinkedBlockingQueue<String> lines, String what, int seconds, List<String> all) throws Exception {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (System.nanoTime() < until) {
            String l = lines.poll(Math.max(1, (until - System.nanoTime()) / 1_000_000), TimeUnit.MILLISECONDS);
            if (l == null) {
                break;
            }
            if (l.equals(what)) {
                return;
            }
            assertThat(l).as(String.join("\n", all)).doesNotStartWith("FAIL");
        }
        throw new AssertionError("the server did not print " + what + " in " + seconds + " s; so far:\n" + String.join("\n", all));
    }
}
