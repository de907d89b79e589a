package dev.verbs4j.vipl;

import dev.verbs4j.verbs.ParkedWaits;
import dev.verbs4j.verbs.TestBed;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Wait functions of VIPL on virtual threads: more virtual threads than carriers wait in
 * VipRecvWait, VipSendWait, VipCQWait or VipConnectWait at once, parked (their carriers run other
 * virtual threads meanwhile, JFR reports none pinned), beside one platform thread in the same
 * call; destroying the VI or CQ, or closing the NIC, ends them all with the code the platform
 * thread gets; a message, and a connection request, wake a virtual thread.
 */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_1)
@Timeout(150)
class ViplVirtualThreadWaitsDeviceTest extends ViplTwoHosts {

    @Test
    void recvAndSendWaitersParkAndDestroyingTheViEndsThemAsItEndsAPlatformThread() throws Exception {
        for (boolean receive : new boolean[]{true, false}) {
            String what = receive ? "VipRecvWait" : "VipSendWait";
            ParkedWaits.rehearsed(checked -> {
                VipVi vi = Vipl.createVi(a.nic, rd(a), null, null);
                try (ParkedWaits waits = ParkedWaits.start(what, "CompletionWatch.await", () -> receive
                        ? Vipl.recvWait(vi, Vipl.INFINITE, VipDescriptor.empty())
                        : Vipl.sendWait(vi, Vipl.INFINITE, VipDescriptor.empty()))) {
                    waits.assertWokenAlike(checked, () -> assertThat(Vipl.destroyVi(vi)).isEqualTo(VipReturn.SUCCESS),
                            "returned " + VipReturn.INVALID_PARAMETER);
                }
            });
        }
    }

    @Test
    void cqWaitersParkAndDestroyingTheCqEndsThemAsItEndsAPlatformThread() throws Exception {
        ParkedWaits.rehearsed(checked -> {
            VipCq cq = Vipl.createCQ(a.nic, 16);
            try (ParkedWaits waits = ParkedWaits.start("VipCQWait", "CompletionWatch.await",
                    () -> Vipl.cqWait(cq, Vipl.INFINITE, new VipCqEntry()))) {
                waits.assertWokenAlike(checked, () -> assertThat(Vipl.destroyCQ(cq)).isEqualTo(VipReturn.SUCCESS),
                        "returned " + VipReturn.INVALID_PARAMETER);
            }
        });
    }

    /** On a NIC of its own (closed here), listening on a port of its own. */
    @Test
    void connectWaitersParkAndClosingTheNicEndsThemAsItEndsAPlatformThread() throws Exception {
        String property = "dev.verbs4j.vipl.port";
        String saved = System.getProperty(property);
        try {
            ParkedWaits.rehearsed(checked -> {
                VipNic nic = Vipl.openNic(TestBed.hostB().device());
                System.setProperty(property, checked ? "7791" : "7792");
                VipNetAddress address = VipNetAddress.of(b.address, new byte[]{'v', 't'});
                try (ParkedWaits waits = ParkedWaits.startWaitingIn("VipConnectWait", "VipListener.await",
                        () -> Vipl.connectWait(nic, address, Vipl.INFINITE))) {
                    assertThat(waits.assertWokenAlike(checked, () -> assertThat(Vipl.closeNic(nic)).isEqualTo(VipReturn.SUCCESS),
                            "threw " + VipException.class.getName())).contains(VipReturn.INVALID_PARAMETER.cName());
                } finally {
                    Vipl.closeNic(nic);
                }
            });
        } finally {
            if (saved == null) {
                System.clearProperty(property);
            } else {
                System.setProperty(property, saved);
            }
        }
    }

    @Test
    void aConnectionRequestWakesAVirtualThreadInConnectWaitAndAMessageOneInRecvWait() throws Exception {
        byte[] disc = {'v', 't', 'w'};
        VipVi client = Vipl.createVi(a.nic, rd(a), null, null);
        VipVi server = Vipl.createVi(b.nic, rd(b), null, null);
        AtomicReference<VipConnHandle> request = new AtomicReference<>();
        try (ParkedWaits waits = ParkedWaits.startOne("VipConnectWait", () -> {
            request.set(Vipl.connectWait(b.nic, b.addr(disc), Vipl.INFINITE));
            return "a request";
        })) {
            waits.awaitParked();
            waits.assertCarriersFree();
            Future<VipReturn> requested = pool.submit(() -> Vipl.connectRequest(client, a.addr(new byte[]{1}), b.addr(disc), WAIT));
            assertThat(waits.virtualOutcomes()).containsExactly("returned a request");
            assertThat(Vipl.connectAccept(request.get(), server)).isEqualTo(VipReturn.SUCCESS);
            assertThat(await(requested)).isEqualTo(VipReturn.SUCCESS);
            waits.assertNonePinned();
        }
        VipDescriptor r = b.desc(90).sendReceive(0).addData(b.data.asSlice(0, 64), b.dataH);
        assertThat(Vipl.postRecv(server, r, b.descH)).isEqualTo(VipReturn.SUCCESS);
        try (ParkedWaits waits = ParkedWaits.startOne("VipRecvWait", () -> {
            VipDescriptor out = VipDescriptor.empty();
            VipReturn rc = Vipl.recvWait(server, Vipl.INFINITE, out);
            return rc + " " + out.address() + " " + out.length();
        })) {
            waits.awaitParked();
            waits.assertCarriersFree();
            assertThat(Vipl.postSend(client, a.desc(90).sendReceive(0).addData(a.data.asSlice(0, 24), a.dataH), a.descH))
                    .isEqualTo(VipReturn.SUCCESS);
            assertThat(waits.virtualOutcomes()).containsExactly("returned " + VipReturn.SUCCESS + " " + r.address() + " 24");
            waits.assertNonePinned();
        }
        sent(client);
        teardown(client, server);
    }
}
