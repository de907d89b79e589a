package dev.verbs4j.vipl;

import dev.verbs4j.verbs.ProtectionDomain;

import java.util.HashSet;
import java.util.Set;

/**
 * A protection tag ({@code VIP_PROTECTION_HANDLE}, §3.2.2.1): a verbs protection domain of the
 * NIC. VIs and regions with the same tag may be used together. Created by {@link
 * Vipl#createPtag}; {@link #close()} is VipDestroyPtag. The protection domain belongs to the tag.
 */
public final class VipPtag implements AutoCloseable {

    final VipNic nic;
    final ProtectionDomain pd;
    final Set<Object> users = new HashSet<>();
    boolean destroyed;

    VipPtag(VipNic nic, ProtectionDomain pd) {
        this.nic = nic;
        this.pd = pd;
    }

    /** The NIC of this tag. */
    public VipNic nic() {
        return nic;
    }

    /** Whether VipDestroyPtag (or VipCloseNic) destroyed it. */
    public boolean isDestroyed() {
        return destroyed;
    }

    boolean usableOn(VipNic n) {
        return !destroyed && nic == n;
    }

    /** VipDestroyPtag. @throws VipException unless it returns VIP_SUCCESS */
    @Override
    public void close() {
        Vipl.check(Vipl.destroyPtag(nic, this), "VipDestroyPtag");
    }

    @Override
    public String toString() {
        return "VipPtag[" + nic.name() + (destroyed ? ", destroyed]" : "]");
    }
}
