package dev.verbs4j.vipl;

import dev.verbs4j.verbs.Access;
import dev.verbs4j.verbs.Errno;
import dev.verbs4j.verbs.MemoryRegion;
import dev.verbs4j.verbs.NativeResource;
import dev.verbs4j.verbs.VerbsException;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;

/**
 * A NIC's protection tags and memory handles (§3.2, §9.5, §9.8.4): what creates, registers,
 * re-registers and destroys them under the NIC lock, and keeps each tag's users and the NIC's
 * handle table in step. Arguments are checked by {@link Vipl} first; here they are checked again
 * under the lock, against a concurrent close.
 */
final class MemoryRegistry {

    private static final System.Logger LOG = System.getLogger("dev.verbs4j.vipl");

    private MemoryRegistry() {
    }

    private static VipException fail(VipReturn rc, String function, String detail) {
        return new VipException(rc, function, detail);
    }

    /** VipCreatePtag on a NIC found open. */
    static VipPtag createPtag(VipNic nic) {
        nic.lock.lock();
        try {
            if (nic.closed) {
                throw fail(VipReturn.INVALID_PARAMETER, "VipCreatePtag", "bad NIC handle");
            }
            try {
                VipPtag p = new VipPtag(nic, nic.context.allocateProtectionDomain());
                nic.ptags.add(p);
                return p;
            } catch (RuntimeException e) {
                throw fail(VipReturn.ERROR_RESOURCE, "VipCreatePtag", e.getMessage());
            }
        } finally {
            nic.lock.unlock();
        }
    }

    /** VipDestroyPtag on a tag found usable on the NIC. */
    static VipReturn destroyPtag(VipNic nic, VipPtag ptag) {
        nic.lock.lock();
        try {
            if (!ptag.usableOn(nic)) {
                return VipReturn.INVALID_PARAMETER;
            }
            // regions whose RdmaArena was closed (which deregistered them) no longer use the tag
            for (Object u : new ArrayList<>(ptag.users)) {
                if (u instanceof VipMemHandle h && h.invalid()) {
                    nic.forget(h);
                }
            }
            if (!ptag.users.isEmpty()) {
                return VipReturn.ERROR_RESOURCE;
            }
            ptag.destroyed = true;
            nic.ptags.remove(ptag);
            // ibv_dealloc_pd fails e.g. when a region it could not deregister still uses the domain
            return providerClose(ptag.pd, "VipDestroyPtag: ibv_dealloc_pd refused");
        } finally {
            nic.lock.unlock();
        }
    }

    /** VipRegisterMem of memory and attributes checked. */
    static VipMemHandle register(VipNic nic, MemorySegment memory, VipMemAttributes attributes) {
        nic.lock.lock();
        try {
            int access = access(attributes);
            if (nic.closed) {
                throw fail(VipReturn.INVALID_PARAMETER, "VipRegisterMem", "bad NIC handle");
            }
            if (!attributes.ptag().usableOn(nic)) {
                throw fail(VipReturn.INVALID_PTAG, "VipRegisterMem", String.valueOf(attributes.ptag()));
            }
            MemoryRegion mr;
            try {
                mr = attributes.ptag().pd.register(memory, access);
            } catch (VerbsException e) {
                throw fail(e.errno() == Errno.EFAULT ? VipReturn.INVALID_PARAMETER : VipReturn.ERROR_RESOURCE, "VipRegisterMem",
                        e.getMessage());
            } catch (IllegalArgumentException e) {
                throw fail(VipReturn.INVALID_PARAMETER, "VipRegisterMem", "the memory is not of an open RdmaArena or the"
                        + " global arena, so it could be freed while the NIC can reach it: allocate it from an RdmaArena"
                        + " (whose close deregisters the region first) [" + e.getMessage() + "]");
            } catch (RuntimeException e) {
                throw fail(VipReturn.INVALID_PARAMETER, "VipRegisterMem", e.getMessage());
            }
            if (!keysUsable(mr, access)) {
                mr.close();
                throw fail(VipReturn.ERROR_RESOURCE, "VipRegisterMem", "the provider gives different local and remote keys");
            }
            VipMemHandle h = new VipMemHandle(nic, mr, memory, attributes);
            VipMemHandle stale = nic.regions.get(h.value());
            if (stale != null) {
                nic.forget(stale); // its RdmaArena's close deregistered it, and the provider reuses its key
            }
            nic.regions.put(h.value(), h);
            attributes.ptag().users.add(h);
            return h;
        } finally {
            nic.lock.unlock();
        }
    }

    /** VipDeregisterMem of a handle found valid on the NIC, at its base address. */
    static VipReturn deregister(VipNic nic, VipMemHandle handle) {
        nic.lock.lock();
        try {
            if (handle.destroyed || nic.closed) {
                return VipReturn.INVALID_PARAMETER;
            }
            if (handle.invalid()) {
                nic.forget(handle); // its RdmaArena's close deregistered it already
                return VipReturn.INVALID_PARAMETER;
            }
            nic.regions.remove(handle.value());
            handle.attributes.ptag().users.remove(handle);
            handle.destroyed = true;
            return providerClose(handle.mr, "VipDeregisterMem: ibv_dereg_mr refused");
        } finally {
            nic.lock.unlock();
        }
    }

    /** VipSetMemAttributes of a handle found valid on the NIC and attributes with a usable tag (D20). */
    static VipReturn setAttributes(VipNic nic, VipMemHandle handle, VipMemAttributes attributes) {
        int access = access(attributes);
        nic.lock.lock();
        try {
            if (handle.destroyed || nic.closed) {
                return VipReturn.INVALID_PARAMETER;
            }
            if (handle.invalid()) {
                nic.forget(handle); // its RdmaArena's close deregistered it
                return VipReturn.INVALID_PARAMETER;
            }
            if (!attributes.ptag().usableOn(nic)) {
                return VipReturn.INVALID_PTAG;
            }
            VipPtag old = handle.attributes.ptag();
            if (old == attributes.ptag()) {
                if (access != handle.mr.access()) {
                    try {
                        handle.mr.reregister(access);
                    } catch (RuntimeException e) {
                        LOG.log(System.Logger.Level.DEBUG, "VipSetMemAttributes: ibv_rereg_mr refused, registering again", e);
                        return replaceRegistration(handle, attributes, access);
                    }
                    if (!keysUsable(handle.mr, access)) {
                        // Soft-RoCE keeps the remote key of a region registered without remote
                        // access at 0 through ibv_rereg_mr: such a region needs a new registration
                        return replaceRegistration(handle, attributes, access);
                    }
                }
                handle.attributes = attributes;
                return VipReturn.SUCCESS;
            }
            return replaceRegistration(handle, attributes, access);
        } finally {
            nic.lock.unlock();
        }
    }

    /** The verbs access flags of a region with {@code attributes}. */
    private static int access(VipMemAttributes attributes) {
        return Access.LOCAL_WRITE | (attributes.enableRdmaWrite() ? Access.REMOTE_WRITE : 0)
                | (attributes.enableRdmaRead() ? Access.REMOTE_READ : 0);
    }

    /** Whether a peer can use the handle value as the remote key: no remote access, or equal keys. */
    private static boolean keysUsable(MemoryRegion mr, int access) {
        return (access & (Access.REMOTE_READ | Access.REMOTE_WRITE)) == 0 || mr.rkey() == mr.lkey();
    }

    /** Registers the handle's memory under {@code attributes} and drops the old registration. Under the lock. */
    private static VipReturn replaceRegistration(VipMemHandle handle, VipMemAttributes attributes, int access) {
        MemoryRegion mr;
        try {
            mr = attributes.ptag().pd.register(handle.memory, access);
        } catch (RuntimeException e) {
            return VipReturn.ERROR_RESOURCE;
        }
        if (!keysUsable(mr, access)) {
            mr.close();
            return VipReturn.ERROR_RESOURCE;
        }
        MemoryRegion previous = handle.mr;
        handle.attributes.ptag().users.remove(handle);
        attributes.ptag().users.add(handle);
        handle.mr = mr;
        handle.attributes = attributes;
        previous.close();
        return VipReturn.SUCCESS;
    }

    /**
     * Closes a verbs object for a VIPL destroy: ERROR_RESOURCE when the provider refused (logged
     * as {@code refusal}; the object is closed for the library all the same), else SUCCESS.
     */
    private static VipReturn providerClose(NativeResource object, String refusal) {
        try {
            object.close();
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, refusal, e);
            return VipReturn.ERROR_RESOURCE;
        }
        return VipReturn.SUCCESS;
    }
}
