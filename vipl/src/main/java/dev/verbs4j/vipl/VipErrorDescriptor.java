package dev.verbs4j.vipl;

/**
 * An asynchronous error as the error callback receives it ({@code VIP_ERROR_DESCRIPTOR},
 * §9.10.3). A value; the descriptor address is the application's descriptor, or 0.
 *
 * @param nic               the NIC reporting the error
 * @param vi                the VI involved, or null
 * @param cq                the completion queue involved, or null
 * @param descriptorAddress the address of the descriptor involved, or 0
 * @param opCode            the operation in progress, encoded as the Status op bits ({@code VipStatus.OP_*})
 * @param resourceCode      which kind of object the error concerns
 * @param errorCode         the error
 */
public record VipErrorDescriptor(VipNic nic, VipVi vi, VipCq cq, long descriptorAddress, int opCode,
                                 VipResourceCode resourceCode, VipErrorCode errorCode) {
}
