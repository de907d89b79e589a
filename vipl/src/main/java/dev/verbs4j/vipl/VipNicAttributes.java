package dev.verbs4j.vipl;

/**
 * The attributes of a NIC ({@code VIP_NIC_ATTRIBUTES}, §9.10.4) as VipQueryNic gives them, plus
 * the two fields later VIPL appends (D7). A value; {@code localNicAddress} is a copy.
 *
 * @param name                    the device name given to VipOpenNic
 * @param hardwareVersion         the device's hardware version
 * @param providerVersion         this library's provider version
 * @param localNicAddress         the port's GID (16 bytes)
 * @param threadSafe              whether the functions may be called from several threads (they may)
 * @param maxDiscriminatorLen     the longest connection discriminator in bytes
 * @param maxRegisterBytes        total registrable bytes
 * @param maxRegisterRegions      the most regions
 * @param maxRegisterBlockBytes   the largest region
 * @param maxVi                   the most VIs (never more than {@code maxPtags}: §12 test 43, see {@link Vipl#queryNic})
 * @param maxDescriptorsPerQueue  the depth of each work queue of a VI
 * @param maxSegmentsPerDesc      the most data segments per descriptor: the device's scatter/gather
 *                                limit, below the specification's 252 (D11)
 * @param maxCq                   the most completion queues
 * @param maxCqEntries            the most entries of one completion queue
 * @param maxTransferSize         the largest transfer of one descriptor
 * @param nativeMtu               the network's frame MTU in bytes
 * @param maxPtags                the most protection tags
 * @param reliabilityLevelSupport the supported levels as a mask of {@link VipReliabilityLevel#mask()}
 * @param rdmaReadSupport         the levels under which RDMA Read is supported, as a mask
 */
public record VipNicAttributes(String name, long hardwareVersion, long providerVersion, byte[] localNicAddress,
                               boolean threadSafe, int maxDiscriminatorLen, long maxRegisterBytes, long maxRegisterRegions,
                               long maxRegisterBlockBytes, long maxVi, long maxDescriptorsPerQueue, long maxSegmentsPerDesc,
                               long maxCq, long maxCqEntries, long maxTransferSize, long nativeMtu, long maxPtags,
                               int reliabilityLevelSupport, int rdmaReadSupport) {

    public VipNicAttributes {
        localNicAddress = localNicAddress.clone();
    }

    /** The NIC address (a copy). */
    @Override
    public byte[] localNicAddress() {
        return localNicAddress.clone();
    }
}
