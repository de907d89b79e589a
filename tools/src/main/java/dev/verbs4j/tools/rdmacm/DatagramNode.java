package dev.verbs4j.tools.rdmacm;

import dev.verbs4j.rdmacm.CmId;
import dev.verbs4j.rdmacm.UdParameters;
import dev.verbs4j.verbs.Access;
import dev.verbs4j.verbs.AddressHandle;
import dev.verbs4j.verbs.CompletionQueue;
import dev.verbs4j.verbs.Errno;
import dev.verbs4j.verbs.MemoryRegion;
import dev.verbs4j.verbs.Opcode;
import dev.verbs4j.verbs.ProtectionDomain;
import dev.verbs4j.verbs.QpType;
import dev.verbs4j.verbs.QueuePair;
import dev.verbs4j.verbs.QueuePairInit;
import dev.verbs4j.verbs.ReceiveRequests;
import dev.verbs4j.verbs.SendRequests;
import dev.verbs4j.verbs.VerbsException;

import java.util.function.IntUnaryOperator;

/**
 * One id of a {@link DatagramTest} and its UD resources: protection domain, completion queue,
 * the id's queue pair, one message buffer (GRH included), and the address handle, QP number and
 * Q_Key of the peer it sends to. Its operations print and return the C programs' statuses.
 */
final class DatagramNode {

    private final DatagramTest test;
    CmId id;
    /** Whether the node is set up and has a peer (or, for a server, is accepted). */
    boolean connected;
    ProtectionDomain pd;
    CompletionQueue cq;
    MemoryRegion mr;
    AddressHandle ah;
    int remoteQpn;
    int remoteQkey;

    DatagramNode(DatagramTest test) {
        this.test = test;
    }

    /**
     * Checks the message size against the port's MTU, creates the resources ({@code loopback}
     * false is refused: the verbs layer cannot block multicast loopback) and, if {@code receive},
     * posts the receives; the status.
     */
    int prepare(boolean loopback, boolean receive) {
        int ret = verifyMtu();
        if (ret == 0) {
            ret = createResources(loopback);
        }
        if (ret == 0 && receive) {
            ret = postReceives();
        }
        return ret;
    }

    private int verifyMtu() {
        int mtu;
        try {
            mtu = 1 << (id.context().queryPort(id.portNumber()).activeMtuCode() + 7);
        } catch (VerbsException e) {
            return -e.errno();
        }
        if (test.messageCount != 0 && test.messageSize > mtu) {
            test.out.print(test.name + ": message_size " + test.messageSize + " is larger than active mtu " + mtu + "\n");
            return -Errno.EINVAL;
        }
        return 0;
    }

    private int createResources(boolean loopback) {
        try {
            pd = id.context().allocateProtectionDomain();
        } catch (VerbsException e) {
            test.out.print(test.name + ": unable to allocate PD\n");
            return -Errno.ENOMEM;
        }
        int count = test.messageCount;
        try {
            cq = id.context().createCompletionQueue(count != 0 ? count * 2 : 2);
        } catch (VerbsException e) {
            test.out.print(test.name + ": unable to create CQ\n");
            return -Errno.ENOMEM;
        }
        if (!loopback) {
            // IBV_QP_CREATE_BLOCK_SELF_MCAST_LB is not offered by the verbs layer's QueuePairInit.
            test.err.print(test.name + ": unable to create QP: " + Errno.message(Errno.EOPNOTSUPP) + "\n");
            return -Errno.EOPNOTSUPP;
        }
        int wr = count != 0 ? count : 1;
        try {
            id.createQueuePair(pd, QueuePairInit.of(QpType.UD, cq).maxSendWr(wr).maxRecvWr(wr)
                    .maxSendSge(1).maxRecvSge(1).signalAll(false));
        } catch (VerbsException e) {
            test.perror(test.name + ": unable to create QP", e);
            return -e.errno();
        }
        if (test.messageSize == 0) {
            test.messageCount = 0;
        }
        if (test.messageCount != 0) {
            try {
                mr = pd.allocateRegion(test.messageSize + DatagramTest.GRH, Access.LOCAL_WRITE);
            } catch (VerbsException e) {
                test.out.print("failed to reg MR\n");
                test.out.print(test.name + ": failed to create messages: -1\n");
                return -1;
            }
        }
        return 0;
    }

    private int postReceives() {
        if (test.messageCount == 0) {
            return 0;
        }
        try (ReceiveRequests rr = new ReceiveRequests(1, 1)) {
            rr.get(0).wrId(0).sge(mr, 0, test.messageSize + DatagramTest.GRH);
            for (int i = 0; i < test.messageCount; i++) {
                id.queuePair().postReceive(rr, 1);
            }
        } catch (VerbsException e) {
            test.out.print("failed to post receives: " + -e.errno() + "\n");
            return -e.errno();
        }
        return 0;
    }

    /**
     * Takes the peer from the connection manager's UD parameters (an accepted service id lookup,
     * a joined group): its QP number, Q_Key and an address handle. The node is then connected and
     * one fewer is waited for; the status.
     */
    int setPeer(UdParameters ud) {
        remoteQpn = ud.qpNum();
        remoteQkey = ud.qkey();
        try {
            ah = pd.createAddressHandle(ud.destination());
        } catch (VerbsException e) {
            test.out.print(test.name + ": failure creating address handle\n");
            test.connectsLeft--;
            return -1;
        }
        connected = true;
        test.connectsLeft--;
        return 0;
    }

    /**
     * Sends the {@code -C} messages to the peer: SEND with immediate data = own QP number, the
     * send flags of message i {@code flags.applyAsInt(i)}; the status.
     */
    int postSends(IntUnaryOperator flags) {
        QueuePair qp = id.queuePair();
        try (SendRequests sr = new SendRequests(1, 1)) {
            for (int i = 0; i < test.messageCount; i++) {
                sr.reset(0).wrId(i).opcode(Opcode.SEND_WITH_IMM).flags(flags.applyAsInt(i)).immediateData(qp.qpNum())
                        .ud(ah, remoteQpn, remoteQkey).sge(mr, 0, test.messageSize);
                qp.postSend(sr, 1);
            }
        } catch (VerbsException e) {
            test.out.print("failed to post sends: " + -e.errno() + "\n");
            return -e.errno();
        }
        return 0;
    }

    /** Frees the resources and the id (none when the node never had one). */
    void destroy() {
        if (id == null) {
            return;
        }
        try {
            if (ah != null) {
                ah.close();
            }
            QueuePair qp = id.queuePair();
            if (qp != null) {
                qp.close();
            }
            if (cq != null) {
                cq.close();
            }
            if (mr != null) {
                mr.close();
            }
            if (pd != null) {
                pd.close();
            }
        } finally {
            id.close();
        }
    }
}
