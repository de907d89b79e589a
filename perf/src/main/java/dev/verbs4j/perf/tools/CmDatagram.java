package dev.verbs4j.perf.tools;

import dev.verbs4j.tools.ToolExit;
import dev.verbs4j.verbs.AddressHandle;
import dev.verbs4j.verbs.Opcode;
import dev.verbs4j.verbs.ReceiveRequests;
import dev.verbs4j.verbs.SendFlags;
import dev.verbs4j.verbs.SendRequest;
import dev.verbs4j.verbs.WcOpcode;
import dev.verbs4j.verbs.WorkCompletion;

import java.io.PrintStream;

/**
 * UD over RDMA CM, the QPN message: in the latency test and with {@code -b}, the client tells the
 * server its queue pair's number with a 4-byte SEND with immediate on the test queue pair, and the
 * server makes its address handle towards the client from that message's completion and GRH.
 */
final class CmDatagram {

    private final PrintStream err;
    private final PerftestResources res;
    private final DataPath path;

    CmDatagram(PrintStream err, PerftestResources res, DataPath path) {
        this.err = err;
        this.res = res;
        this.path = path;
    }

    private ToolExit exit(String message, int status) {
        return ToolExit.printed(err, message, status);
    }

    /** Posts the receive of the client's QPN message: its GRH and 4 bytes at the start of QP {@code i}'s send area. */
    void postQpnReceive(int i) throws ToolExit {
        ReceiveRequests r = res.recvs(i);
        r.get(0).wrId(0).sge(res.mr(i), res.localOffset(i), PerftestResources.UD_ADDITION + 4);
        try {
            res.qp(i).postReceive(r, 1);
        } catch (RuntimeException e) {
            throw exit("Failed to post receive for connection " + i + " for RDMA CM UD request connection parameters.", 1);
        }
    }

    /** Tells the peer this QP's number: a 4-byte SEND with the QPN as immediate data, waited for. */
    void sendQpn(int i) throws ToolExit {
        SendRequest wr = res.sends(i).reset(0).wrId(0).opcode(Opcode.SEND_WITH_IMM).flags(SendFlags.SIGNALED)
                .sge(res.mr(i), res.localOffset(i), 4).immediateData(res.qp(i).qpNum());
        wr.ud(res.ah(i), res.peerQpn(i), res.peerQkey(i));
        try {
            res.qp(i).postSend(res.sends(i), 1);
        } catch (RuntimeException e) {
            throw exit("Failed to post send for connection " + i + " for RDMA CM UD send connection parameters.", 1);
        }
        WorkCompletion wc = path.awaitSetup(res.sendCq());
        if (!wc.isSuccess() || wc.wrId() != 0) {
            err.print("Failed to poll CQ.\nBad WQE status when trying to send UD connection parameters in RDMA CM:\n Status: "
                    + wc.statusCode() + " ; ID: " + (int) wc.wrId() + ".\n");
            throw exit("Failed to send UD connection parameters to the remote node.", 1);
        }
    }

    /**
     * Takes the peer's address from the QPN message of {@link #postQpnReceive}: an address handle
     * from the completion and its GRH, the QPN from the immediate data; {@code qkey} is this side's.
     */
    void peerFromQpnMessage(int i, int portNum, int qkey) throws ToolExit {
        WorkCompletion wc = path.awaitSetup(res.recvCq());
        if (!wc.isSuccess() || wc.opcode() != WcOpcode.RECV || wc.wrId() != 0) {
            err.print("Failed to poll CQ.\nBad WQE status when trying to create AH for UD connection in RDMA CM:\n Status: "
                    + wc.statusCode() + " ; ID: " + (int) wc.wrId() + ".\n");
            throw exit("Failed to initialize UD connection parameters for RDMA CM.", 1);
        }
        AddressHandle ah;
        try {
            ah = res.pd().createAddressHandle(wc, res.buffer(i).asSlice(res.localOffset(i), PerftestResources.UD_ADDITION), portNum);
        } catch (RuntimeException e) {
            throw exit("Failed to create AH for RDMA CM connection.", 1);
        }
        res.datagramPeer(i, ah, wc.immediateData(), qkey);
    }
}
