package dev.verbs4j.vipl;

import java.lang.foreign.MemorySegment;

/**
 * The VI Provider Library: the functions of Appendix A (§9) of the VI Architecture specification,
 * and the name service of later VIPL (§13), one static method each, named as in C without the
 * {@code Vip} prefix.
 *
 * <p>Return codes ({@link VipReturn}, §9.10.1): a function whose C form hands back a new object
 * through an OUT parameter (OpenNic, CreatePtag, RegisterMem, CreateCQ, CreateVi, ConnectWait,
 * the queries, NSGetHostByName/Addr) returns that object and throws {@link VipException} carrying
 * the code the C function would return; every other function returns its {@code VipReturn}, with
 * its OUT parameters in a caller-owned holder ({@link VipDescriptor} for Done/Wait, {@link
 * VipCqEntry} for CQDone/CQWait) or, for ConnectRequest's remote attributes, on the VI ({@link
 * VipVi#remoteAttributes()}). A null, destroyed or foreign handle is {@link
 * VipReturn#INVALID_PARAMETER}, never an exception from the layers below.
 *
 * <p>Timeouts are milliseconds as unsigned 32-bit values; {@link #INFINITE} waits forever.
 */
public final class Vipl {

    /** {@code VIP_INFINITE}. */
    public static final long INFINITE = 0xFFFF_FFFFL;
    /** The provider version VipQueryNic reports. */
    public static final long PROVIDER_VERSION = 0x0001_0000L;
    /** VipQuerySystemManagementInfo: the port attributes ({@code dev.verbs4j.verbs.PortAttributes}). */
    public static final int SMI_PORT_ATTRIBUTES = 0;
    /** VipQuerySystemManagementInfo: the device attributes ({@code dev.verbs4j.verbs.DeviceAttributes}). */
    public static final int SMI_DEVICE_ATTRIBUTES = 1;

    private Vipl() {
    }

    /**
     * The RDMA CM port the connection functions listen on and connect to: the system property
     * {@code dev.verbs4j.vipl.port}, default 7723. The discriminator, not the port, tells VIs apart.
     */
    public static int port() {
        return Integer.getInteger("dev.verbs4j.vipl.port", 7723);
    }

    static void check(VipReturn rc, String function) {
        if (rc != VipReturn.SUCCESS) {
            throw new VipException(rc, function, null);
        }
    }

    private static VipException fail(VipReturn rc, String function, String detail) {
        return new VipException(rc, function, detail);
    }

    private static boolean bad(VipNic nic) {
        return nic == null || nic.closed;
    }

    private static boolean bad(VipVi vi) {
        return vi == null || vi.destroyed;
    }

    private static boolean bad(VipCq cq) {
        return cq == null || cq.destroyed;
    }

    /** {@code nic}, unless it is a bad handle: then {@code function} fails with INVALID_PARAMETER. */
    private static VipNic open(VipNic nic, String function) {
        if (bad(nic)) {
            throw fail(VipReturn.INVALID_PARAMETER, function, "bad NIC handle");
        }
        return nic;
    }

    private static boolean badAddress(VipNetAddress a) {
        return a == null || a.inetAddress() == null || a.discriminator().length > ConnectMessage.MAX_DISCRIMINATOR;
    }

    private static boolean badTimeout(long t) {
        return t < 0 || t > INFINITE;
    }

    // ===== §9.2 NIC =====

    /**
     * VipOpenNic (§9.2.1): opens the verbs device {@code deviceName}. Every call gives a new,
     * independent NIC handle (a gap the specification leaves open).
     *
     * @throws VipException INVALID_PARAMETER for an unknown name, ERROR_RESOURCE when it cannot be opened
     */
    public static VipNic openNic(String deviceName) {
        if (deviceName == null) {
            throw fail(VipReturn.INVALID_PARAMETER, "VipOpenNic", "no device name");
        }
        return VipNic.open(deviceName);
    }

    /**
     * VipCloseNic (§9.2.2). Decision D16: closing a NIC with VIs, CQs, regions or tags still open
     * cleans them all up (connected VIs are disconnected first; their handles become invalid),
     * as the provider does when a process exits (§3.1). Calls under way on other threads finish or
     * fail with INVALID_PARAMETER (a VipConnectRequest or VipConnectAccept in progress is
     * cancelled, a VipConnectPeerRequest's outcome is INVALID_PARAMETER, a VipConnectWait ends);
     * calls made after it has started return INVALID_PARAMETER.
     */
    public static VipReturn closeNic(VipNic nic) {
        return bad(nic) || !nic.closeAll() ? VipReturn.INVALID_PARAMETER : VipReturn.SUCCESS;
    }

    // ===== §9.3 VIs =====

    /**
     * VipCreateVi (§9.3.1): a VI in the Idle state with an RC queue pair (a UC one for Unreliable) in its tag's protection
     * domain; a null CQ means the queue has none (a hidden verbs CQ serves Wait). The verbs CQ of an
     * attached VIPL CQ grows so that it can hold every descriptor of the queues attached to it (D15).
     *
     * <p>D18: Unreliable is a UC queue pair where the device has UC (IB transports: InfiniBand,
     * RoCE; not iWARP, where it is INVALID_RELIABILITY_LEVEL). RDMA Read enabled on an Unreliable
     * VI is accepted and ignored: every RDMA Read posted on it completes with FORMAT_ERROR (§2.5.1),
     * and VipQueryNic's RDMA Read support leaves the level out.
     *
     * @throws VipException INVALID_PARAMETER (bad NIC, a CQ of another NIC), INVALID_RELIABILITY_LEVEL
     *                      (none given, or Unreliable without UC: D18), INVALID_MTU, INVALID_QOS
     *                      (anything but 0: D9), INVALID_PTAG, ERROR_RESOURCE
     */
    public static VipVi createVi(VipNic nic, VipViAttributes attributes, VipCq sendCq, VipCq recvCq) {
        open(nic, "VipCreateVi");
        for (VipCq c : new VipCq[]{sendCq, recvCq}) {
            if (c != null && (c.destroyed || c.nic != nic)) {
                throw fail(VipReturn.INVALID_PARAMETER, "VipCreateVi", "bad CQ handle " + c);
            }
        }
        VipReturn rc = QueueRegistry.checkAttributes(nic, attributes);
        if (rc != VipReturn.SUCCESS) {
            throw fail(rc, "VipCreateVi", String.valueOf(attributes));
        }
        return QueueRegistry.createVi(nic, attributes, sendCq, recvCq);
    }

    /**
     * VipDestroyVi (§9.3.2): only an Idle VI whose descriptors were all dequeued; otherwise
     * ERROR_RESOURCE (the code the specification names). The handle is invalid afterwards.
     */
    public static VipReturn destroyVi(VipVi vi) {
        return bad(vi) ? VipReturn.INVALID_PARAMETER : vi.machine.destroy();
    }

    // ===== §9.4 connections =====

    /**
     * VipConnectWait (§9.4.1): waits for a connection request to {@code localAddr}'s host address
     * and discriminator. The discriminator travels in the request's private data; a request for
     * another discriminator does not complete this wait (it stays queued for a wait on its own).
     * Timeout 0 polls. Several waits may be outstanding on one address, from several threads: each
     * ends at its own timeout.
     *
     * @return the request, to accept or reject; its requester's address and VI attributes
     * @throws VipException TIMEOUT when none came in time, INVALID_PARAMETER (bad NIC, an address
     *                      not of this NIC, a discriminator longer than MaxDiscriminatorLen),
     *                      ERROR_RESOURCE
     */
    public static VipConnHandle connectWait(VipNic nic, VipNetAddress localAddr, long timeoutMillis) {
        if (bad(nic) || badAddress(localAddr) || badTimeout(timeoutMillis)) {
            throw fail(VipReturn.INVALID_PARAMETER, "VipConnectWait", String.valueOf(localAddr));
        }
        return ViConnector.await(nic, localAddr, timeoutMillis, null);
    }

    /**
     * VipConnectAccept (§9.4.2): connects the Idle VI {@code vi} to the request. Attributes that do
     * not match the requester's (reliability level, MaxTransferSize — which must be equal, D8 — and
     * QoS) fail with their code, tell the requester nothing and leave the request valid for another
     * accept or a reject. A VI that is not Idle gives INVALID_STATE (D5); a consumed request
     * INVALID_PARAMETER. A VipDisconnect of the VI on another thread while the connection is being
     * set up cancels it (INVALID_STATE; a VipCloseNic: INVALID_PARAMETER); the VI is then Idle (or
     * destroyed) and the requester's VipConnectRequest fails.
     */
    public static VipReturn connectAccept(VipConnHandle conn, VipVi vi) {
        return conn == null || conn.consumed || conn.nic.closed || bad(vi) || vi.nic != conn.nic
                ? VipReturn.INVALID_PARAMETER : vi.machine.accept(conn);
    }

    /** VipConnectReject (§9.4.3): the requester's VipConnectRequest returns REJECT; the handle is consumed. */
    public static VipReturn connectReject(VipConnHandle conn) {
        return conn == null ? VipReturn.INVALID_PARAMETER : ViConnector.reject(conn);
    }

    /**
     * VipConnectRequest (§9.4.4): connects the Idle VI {@code vi} from {@code localAddr} (whose host
     * address must be one of this NIC's) to the VI waiting on {@code remoteAddr}; on success the
     * remote VI's attributes are {@link VipVi#remoteAttributes()}. Timeout 0 returns TIMEOUT at
     * once (D3). REJECT when the server rejected; NOT_REACHABLE (a later VIPL code) when nobody
     * listens there or the address does not resolve; INVALID_STATE when the VI is not Idle (D5).
     * On any failure the VI is Idle again. A VipDisconnect of the VI on another thread meanwhile
     * cancels the attempt: it returns INVALID_STATE and the VI is Idle (VipCloseNic:
     * INVALID_PARAMETER, the VI destroyed).
     */
    public static VipReturn connectRequest(VipVi vi, VipNetAddress localAddr, VipNetAddress remoteAddr, long timeoutMillis) {
        if (bad(vi) || badAddress(localAddr) || badAddress(remoteAddr) || badTimeout(timeoutMillis)) {
            return VipReturn.INVALID_PARAMETER;
        }
        if (vi.state() != VipViState.IDLE) {
            return VipReturn.INVALID_STATE;
        }
        if (timeoutMillis == 0) {
            return VipReturn.TIMEOUT;
        }
        return vi.machine.connectRequest(localAddr, remoteAddr, timeoutMillis);
    }

    /**
     * VipConnectPeerRequest (later VIPL, §13): starts connecting the Idle VI {@code vi} to the peer
     * VI that makes the mirror request (its local address is this call's remote one and the other
     * way round) and returns at once; VipConnectPeerDone polls and VipConnectPeerWait waits for the
     * outcome. On success the peer's attributes are {@link VipVi#remoteAttributes()}.
     *
     * <p>D21 (the matching, which the specification of later VIPL leaves to the provider): of the two
     * addresses compared as bytes (host address, then discriminator), the lower one waits for the
     * other's request as VipConnectWait does and accepts it if it comes from the peer's host (a
     * request from elsewhere is rejected); the higher one sends VipConnectRequest, again 50 ms
     * after each NOT_REACHABLE while nobody listens yet. {@code timeoutMillis} bounds the whole
     * attempt: TIMEOUT as the outcome when the peer did not come. VipDestroyVi (allowed while the
     * VI waits, Idle, for the peer) and VipCloseNic cancel the attempt: its outcome is
     * INVALID_PARAMETER and its thread ends at once, woken from whatever it waits for.
     *
     * @return SUCCESS when the attempt started; INVALID_PARAMETER (bad VI or addresses, both
     *         addresses equal), INVALID_STATE (the VI is not Idle or has an attempt outstanding),
     *         TIMEOUT for a timeout of 0 (D3)
     */
    public static VipReturn connectPeerRequest(VipVi vi, VipNetAddress localAddr, VipNetAddress remoteAddr, long timeoutMillis) {
        return bad(vi) || badAddress(localAddr) || badAddress(remoteAddr) || badTimeout(timeoutMillis)
                ? VipReturn.INVALID_PARAMETER : PeerConnect.start(vi, localAddr, remoteAddr, timeoutMillis);
    }

    /**
     * VipConnectPeerDone (later VIPL, §13): the outcome of the VI's VipConnectPeerRequest once it
     * is known (then the attempt is over), NOT_DONE while it is still under way.
     *
     * @return the outcome (SUCCESS, TIMEOUT, REJECT, NOT_REACHABLE, ...), NOT_DONE,
     *         INVALID_PARAMETER (bad VI), INVALID_STATE (no attempt outstanding)
     */
    public static VipReturn connectPeerDone(VipVi vi) {
        return bad(vi) ? VipReturn.INVALID_PARAMETER : PeerConnect.outcome(vi, false);
    }

    /**
     * VipConnectPeerWait (later VIPL, §13): waits for the outcome of the VI's VipConnectPeerRequest
     * (at most that request's timeout) and returns it, as {@link #connectPeerDone} would. A
     * VipDestroyVi or VipCloseNic meanwhile ends the wait with INVALID_PARAMETER.
     */
    public static VipReturn connectPeerWait(VipVi vi) {
        return bad(vi) ? VipReturn.INVALID_PARAMETER : PeerConnect.outcome(vi, true);
    }

    /**
     * VipDisconnect (§9.4.5): aborts the connection; every descriptor still posted completes with
     * DESC_FLUSHED_ERROR and the VI is Idle (from Connected, Pending Connect, Error, or Idle, where
     * receives waiting for a connection are flushed too).
     */
    public static VipReturn disconnect(VipVi vi) {
        return bad(vi) ? VipReturn.INVALID_PARAMETER : vi.machine.disconnect();
    }

    // ===== §9.5 protection tags and memory =====

    /** VipCreatePtag (§9.5.1): a new protection domain. @throws VipException INVALID_PARAMETER, ERROR_RESOURCE */
    public static VipPtag createPtag(VipNic nic) {
        return MemoryRegistry.createPtag(open(nic, "VipCreatePtag"));
    }

    /**
     * VipDestroyPtag (§9.5.2): ERROR_RESOURCE while a VI or region still uses the tag (the tag
     * stays valid), or when the provider refuses to free its protection domain
     * ({@code ibv_dealloc_pd} fails): then the tag is invalid all the same, and the provider's
     * domain is released with the NIC.
     */
    public static VipReturn destroyPtag(VipNic nic, VipPtag ptag) {
        return bad(nic) || ptag == null || !ptag.usableOn(nic)
                ? VipReturn.INVALID_PARAMETER : MemoryRegistry.destroyPtag(nic, ptag);
    }

    /**
     * VipRegisterMem (§9.5.3): registers {@code memory} (the Java form of VirtualAddress and Length)
     * under the attributes' tag; every call gives a new handle. Local write access is always given;
     * the RDMA enables become remote write/read access.
     *
     * <p>The memory must come from an open {@link dev.verbs4j.verbs.RdmaArena}, whose close
     * deregisters every region over it before it frees the memory (the handle is then invalid,
     * see {@link VipMemHandle}), or from {@link java.lang.foreign.Arena#global()}, which is never
     * freed: so neither the NIC nor a remote peer can ever reach memory that was freed. Memory of
     * any other arena (confined, shared, automatic) is INVALID_PARAMETER, the exception's message
     * saying why, and nothing is registered.
     *
     * @throws VipException INVALID_PARAMETER (bad NIC; heap, empty or closed memory; memory of
     *                      neither an RdmaArena nor the global arena), INVALID_PTAG, ERROR_RESOURCE
     */
    public static VipMemHandle registerMem(VipNic nic, MemorySegment memory, VipMemAttributes attributes) {
        if (bad(nic) || memory == null || !memory.isNative() || memory.byteSize() == 0 || attributes == null) {
            throw fail(VipReturn.INVALID_PARAMETER, "VipRegisterMem", memory == null ? "no memory" : memory.toString());
        }
        if (attributes.ptag() == null || !attributes.ptag().usableOn(nic)) {
            throw fail(VipReturn.INVALID_PTAG, "VipRegisterMem", String.valueOf(attributes.ptag()));
        }
        return MemoryRegistry.register(nic, memory, attributes);
    }

    /**
     * VipDeregisterMem (§9.5.4): {@code address} must be the registered start address. Descriptors
     * still posted that use the region are not touched; their data transfers fail with a
     * protection error when the device reaches them (§3.2.1).
     *
     * @return SUCCESS; INVALID_PARAMETER (bad NIC or handle, or an address that is not the region's
     *         base, or a handle whose memory's RdmaArena was closed, which deregistered it already);
     *         ERROR_RESOURCE when the provider refuses to deregister it ({@code ibv_dereg_mr}
     *         fails, e.g. while a memory window is bound to it). The handle is invalid afterwards
     *         either way: the library no longer uses the region, and the provider's region (which
     *         keeps the tag from being destroyed) is released with the NIC.
     */
    public static VipReturn deregisterMem(VipNic nic, long address, VipMemHandle handle) {
        return bad(nic) || handle == null || handle.destroyed || handle.nic != nic || handle.address() != address
                ? VipReturn.INVALID_PARAMETER : MemoryRegistry.deregister(nic, handle);
    }

    /**
     * VipSetMemAttributes (§9.8.4): gives the region at {@code address} (its base) a new protection
     * tag and RDMA enables. Changing it while a transfer uses the region is undefined (§9.8.4): the
     * old registration is gone when this returns.
     *
     * <p>D20 (the handle must stay valid while verbs may change the keys): the handle value stays
     * what VipRegisterMem returned, an indirection to the current verbs region, so descriptors keep
     * working unchanged. New RDMA enables under the same tag change the registration in place
     * ({@code ibv_rereg_mr}, keys kept where the provider keeps them; when remote access is
     * enabled and the provider gives no usable remote key that way, a new registration); a new tag registers the
     * memory again under the tag's protection domain, with new keys. Peers then need {@link
     * VipMemHandle#remoteKey()} for RDMA to the region. A provider that refuses the new
     * registration leaves the region as it was and gives ERROR_RESOURCE.
     *
     * @return SUCCESS, INVALID_PARAMETER (bad NIC or handle, an address that is not the region's
     *         base, no attributes, a handle whose memory's RdmaArena was closed), INVALID_PTAG (a
     *         tag destroyed or of another NIC), ERROR_RESOURCE
     */
    public static VipReturn setMemAttributes(VipNic nic, long address, VipMemHandle handle, VipMemAttributes attributes) {
        if (bad(nic) || handle == null || handle.destroyed || handle.nic != nic || handle.address() != address
                || attributes == null) {
            return VipReturn.INVALID_PARAMETER;
        }
        if (attributes.ptag() == null || !attributes.ptag().usableOn(nic)) {
            return VipReturn.INVALID_PTAG;
        }
        return MemoryRegistry.setAttributes(nic, handle, attributes);
    }

    /** VipQueryMem (§9.8.5). @throws VipException INVALID_PARAMETER for a bad NIC, handle or address */
    public static VipMemAttributes queryMem(VipNic nic, long address, VipMemHandle handle) {
        if (bad(nic) || handle == null || handle.invalid() || handle.nic != nic || handle.address() != address) {
            throw fail(VipReturn.INVALID_PARAMETER, "VipQueryMem", String.valueOf(handle));
        }
        return handle.attributes;
    }

    // ===== §9.6 data transfer and completion =====

    private static boolean badDescriptor(VipDescriptor d) {
        return d == null || !d.segment().isNative() || d.segment().byteSize() < VipDescriptor.CONTROL_SIZE
                || !d.segment().scope().isAlive();
    }

    /**
     * VipPostSend (§9.6.1): appends the descriptor, which lies in the region of {@code memHandle}, to
     * the send queue and translates it into one work request without copying data. Errors in the
     * descriptor are reported in its Status, never as the return code: FORMAT_ERROR (reserved bits or
     * words, op 11b, not 64-byte aligned, more data segments than MaxSegmentsPerDesc), LENGTH_ERROR
     * (Length ≠ Σ segments, above MaxTransferSize), PROTECTION_ERROR (a data segment outside a
     * region of the VI's tag — checked in software, D13 — or the descriptor outside the region of
     * {@code memHandle}, which is also reported as the asynchronous POST_DESC error). A send posted
     * while the VI is not Connected completes with DESC_FLUSHED_ERROR (D10). Under a reliable level a
     * local error on a Connected VI breaks the connection (Error state, §2.5).
     *
     * @return SUCCESS, or INVALID_PARAMETER for a bad VI handle or a descriptor not in native memory
     *         (or in memory whose arena is closed, or confined to another thread)
     */
    public static VipReturn postSend(VipVi vi, VipDescriptor descriptor, VipMemHandle memHandle) {
        return bad(vi) || badDescriptor(descriptor) ? VipReturn.INVALID_PARAMETER : vi.post(descriptor, memHandle, false);
    }

    /**
     * VipPostRecv (§9.6.4): appends the descriptor to the receive queue. While the VI is Idle or
     * Pending Connect it waits for the connection (§5.1); in the Error state it completes with
     * DESC_FLUSHED_ERROR. An RDMA operation on the receive queue is a FORMAT_ERROR.
     */
    public static VipReturn postRecv(VipVi vi, VipDescriptor descriptor, VipMemHandle memHandle) {
        return bad(vi) || badDescriptor(descriptor) ? VipReturn.INVALID_PARAMETER : vi.post(descriptor, memHandle, true);
    }

    /**
     * VipSendDone (§9.6.2): dequeues the head of the send queue into {@code out} if it is done.
     * Allowed on a CQ-attached queue, where it is how the descriptor of a CQ entry is dequeued (D17).
     *
     * @return SUCCESS, NOT_DONE, INVALID_PARAMETER (a bad VI handle), or DESCRIPTOR_ERROR when the
     *         head was dequeued but its memory was closed while it was queued (nothing was written
     *         into it; the same holds for the Wait functions, and a Notify handler is not called for it)
     */
    public static VipReturn sendDone(VipVi vi, VipDescriptor out) {
        return bad(vi) || out == null ? VipReturn.INVALID_PARAMETER : vi.send.done(out);
    }

    /** VipRecvDone (§9.6.5): as {@link #sendDone} for the receive queue. */
    public static VipReturn recvDone(VipVi vi, VipDescriptor out) {
        return bad(vi) || out == null ? VipReturn.INVALID_PARAMETER : vi.recv.done(out);
    }

    /**
     * VipSendWait (§9.6.3): waits for the head of the send queue to complete and dequeues it.
     * ERROR_RESOURCE on a CQ-attached queue (D2: the function's own return list, not §9.6.8's).
     */
    public static VipReturn sendWait(VipVi vi, long timeoutMillis, VipDescriptor out) {
        return bad(vi) || out == null || badTimeout(timeoutMillis) ? VipReturn.INVALID_PARAMETER : vi.await(false, timeoutMillis, out);
    }

    /** VipRecvWait (§9.6.6): as {@link #sendWait} for the receive queue. */
    public static VipReturn recvWait(VipVi vi, long timeoutMillis, VipDescriptor out) {
        return bad(vi) || out == null || badTimeout(timeoutMillis) ? VipReturn.INVALID_PARAMETER : vi.await(true, timeoutMillis, out);
    }

    /**
     * VipCQDone (§9.6.7): takes one entry (VI and queue) into {@code out}; the descriptor is then
     * dequeued with VipSendDone/VipRecvDone. NOT_DONE when the queue is empty.
     */
    public static VipReturn cqDone(VipCq cq, VipCqEntry out) {
        return bad(cq) || out == null ? VipReturn.INVALID_PARAMETER : CqCompletions.done(cq, out);
    }

    /** VipCQWait (§9.6.8): as {@link #cqDone}, waiting up to the timeout on the CQ's completion channel. */
    public static VipReturn cqWait(VipCq cq, long timeoutMillis, VipCqEntry out) {
        return bad(cq) || out == null || badTimeout(timeoutMillis)
                ? VipReturn.INVALID_PARAMETER : CqCompletions.await(cq, timeoutMillis, out);
    }

    /**
     * VipSendNotify (§9.6.9): calls {@code handler} once with the next completed descriptor of the
     * send queue, dequeued. When the head is already done the handler runs at once on this thread;
     * otherwise a notification thread waits for it, and destroying the VI first cancels it (the
     * handler is never called). One-shot: call again for the next descriptor.
     *
     * <p>D19 (a Wait and a Notify outstanding on one queue, which the specification leaves open):
     * they are served in turn, each taking one descriptor, in the order the completions find them;
     * neither is refused. Several Notify calls outstanding are served the same way.
     *
     * @return SUCCESS, INVALID_PARAMETER (a bad VI handle or a null handler), ERROR_RESOURCE (the
     *         queue is attached to a CQ: use VipCQNotify)
     */
    public static VipReturn sendNotify(VipVi vi, Object context, VipNotifyHandler handler) {
        return bad(vi) || handler == null ? VipReturn.INVALID_PARAMETER : vi.notifyHandler(false, context, handler);
    }

    /** VipRecvNotify (§9.6.10): as {@link #sendNotify} for the receive queue (D19 applies). */
    public static VipReturn recvNotify(VipVi vi, Object context, VipNotifyHandler handler) {
        return bad(vi) || handler == null ? VipReturn.INVALID_PARAMETER : vi.notifyHandler(true, context, handler);
    }

    /**
     * VipCQNotify (§9.6.11): calls {@code handler} once with the next entry of the CQ, taken from
     * it (the consumer still dequeues the descriptor with VipSendDone/VipRecvDone). An entry already
     * there is handed over at once on this thread; otherwise a notification thread waits, and
     * VipDestroyCQ first cancels it. Outstanding VipCQWait and VipCQNotify calls take entries in
     * turn (D19).
     *
     * @return SUCCESS, INVALID_PARAMETER (a bad CQ handle or a null handler)
     */
    public static VipReturn cqNotify(VipCq cq, Object context, VipCqNotifyHandler handler) {
        return bad(cq) || handler == null ? VipReturn.INVALID_PARAMETER : CqCompletions.notify(cq, context, handler);
    }

    // ===== §9.7 completion queues =====

    /**
     * VipCreateCQ (§9.7.1): a verbs CQ of {@code entryCount} entries with its completion channel.
     *
     * @throws VipException INVALID_PARAMETER (bad NIC, 0 entries), ERROR_RESOURCE (above MaxCQEntries)
     */
    public static VipCq createCQ(VipNic nic, long entryCount) {
        if (bad(nic) || entryCount <= 0) {
            throw fail(VipReturn.INVALID_PARAMETER, "VipCreateCQ", "entries " + entryCount);
        }
        if (entryCount > nic.device.maxCqe()) {
            throw fail(VipReturn.ERROR_RESOURCE, "VipCreateCQ", entryCount + " > MaxCQEntries " + nic.device.maxCqe());
        }
        return QueueRegistry.createCq(nic, entryCount);
    }

    /** VipDestroyCQ (§9.7.2): ERROR_RESOURCE while a work queue is attached. */
    public static VipReturn destroyCQ(VipCq cq) {
        return bad(cq) || cq.nic.closed ? VipReturn.INVALID_PARAMETER : QueueRegistry.destroyCq(cq);
    }

    /**
     * VipResizeCQ (§9.7.3): grows or shrinks; fewer entries than are waiting to be taken is
     * ERROR_RESOURCE. The verbs CQ never gets smaller than the attached queues' descriptors (D15).
     */
    public static VipReturn resizeCQ(VipCq cq, long entryCount) {
        return bad(cq) || entryCount <= 0 ? VipReturn.INVALID_PARAMETER : QueueRegistry.resizeCq(cq, entryCount);
    }

    // ===== §9.8 queries and attributes =====

    /**
     * VipQueryNic (§9.8.1).
     *
     * <p>MaxVI is the device's queue pair limit clamped to its protection domain limit (MaxPtags),
     * which VipCreateVi enforces too: every VI may have a tag of its own, so the attributes stay
     * consistent (MaxPtags ≥ MaxVI, §12 test 43) even on a device, such as Soft-RoCE, that allows
     * more queue pairs than protection domains.
     *
     * @throws VipException INVALID_PARAMETER for a bad NIC
     */
    public static VipNicAttributes queryNic(VipNic nic) {
        return open(nic, "VipQueryNic").attributes();
    }

    /**
     * VipSetViAttributes (§9.8.2): only while the VI is Idle (INVALID_STATE otherwise, D5), so that
     * a server can fix its VI and retry VipConnectAccept. A new tag gives the VI a new queue pair in
     * that tag's protection domain (D12). Values are checked as VipCreateVi checks them.
     */
    public static VipReturn setViAttributes(VipVi vi, VipViAttributes attributes) {
        return bad(vi) ? VipReturn.INVALID_PARAMETER : vi.machine.setAttributes(attributes);
    }

    /** VipQueryVi (§9.8.3). @throws VipException INVALID_PARAMETER for a bad VI */
    public static VipViQuery queryVi(VipVi vi) {
        if (bad(vi)) {
            throw fail(VipReturn.INVALID_PARAMETER, "VipQueryVi", "bad VI handle");
        }
        return vi.query();
    }

    /**
     * VipQuerySystemManagementInfo (§9.8.6): {@link #SMI_PORT_ATTRIBUTES} gives the verbs port
     * attributes, {@link #SMI_DEVICE_ATTRIBUTES} the device attributes.
     *
     * @throws VipException INVALID_PARAMETER for a bad NIC or an unknown info type
     */
    public static Object querySystemManagementInfo(VipNic nic, int infoType) {
        return open(nic, "VipQuerySystemManagementInfo").systemManagementInfo(infoType);
    }

    // ===== §9.9 asynchronous errors =====

    /**
     * VipErrorCallback (§9.9.1): {@code handler} receives the NIC's asynchronous errors, on the
     * thread that detects them, before the call that detected them returns, and never while the
     * library holds the NIC's lock (so the handler may call VIPL functions, and does not hold up
     * other threads); null restores the default handler, which logs them ({@code System.Logger}
     * "dev.verbs4j.vipl", WARNING).
     */
    public static VipReturn errorCallback(VipNic nic, Object context, VipErrorHandler handler) {
        return bad(nic) ? VipReturn.INVALID_PARAMETER : nic.setErrorHandler(handler, context);
    }

    // ===== §13.1 name service (later VIPL) =====

    /** VipNSInit: the name service is the platform's resolver; nothing to set up. */
    public static VipReturn nsInit(VipNic nic, Object initInfo) {
        return bad(nic) ? VipReturn.INVALID_PARAMETER : VipReturn.SUCCESS;
    }

    /**
     * VipNSGetHostByName: the {@code nameIndex}-th address of {@code name}, as a host address with
     * an empty discriminator (append one with {@code new VipNetAddress(a.hostAddress(), disc)}).
     *
     * @throws VipException INVALID_PARAMETER (bad NIC or name), ERROR_NAMESERVICE when it does not resolve
     */
    public static VipNetAddress nsGetHostByName(VipNic nic, String name, int nameIndex) {
        if (bad(nic) || name == null || nameIndex < 0) {
            throw fail(VipReturn.INVALID_PARAMETER, "VipNSGetHostByName", name);
        }
        return NameService.hostByName(name, nameIndex);
    }

    /** VipNSGetHostByAddr: the host name of {@code address}'s host address. @throws VipException as GetHostByName */
    public static String nsGetHostByAddr(VipNic nic, VipNetAddress address) {
        if (bad(nic) || address == null || address.inetAddress() == null) {
            throw fail(VipReturn.INVALID_PARAMETER, "VipNSGetHostByAddr", String.valueOf(address));
        }
        return NameService.hostByAddr(address);
    }

    /** VipNSShutdown. */
    public static VipReturn nsShutdown(VipNic nic) {
        return bad(nic) ? VipReturn.INVALID_PARAMETER : VipReturn.SUCCESS;
    }
}
