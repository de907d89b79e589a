/**
 * The VI Provider Library (VIPL): the functions of Appendix A of the Virtual Interface
 * Architecture specification (§9), the descriptor format of Appendix B and the name service of
 * later VIPL, on the verbs and RDMA CM layers of this project. {@link dev.verbs4j.vipl.Vipl}
 * holds the functions; the handles are {@code AutoCloseable} objects whose {@code close()} is the
 * matching destroy function.
 *
 * <h2>Mapping onto verbs</h2>
 * <table class="striped">
 * <caption>VIPL objects and what they are made of</caption>
 * <tr><th>VIPL</th><th>verbs / RDMA CM</th></tr>
 * <tr><td>NIC ({@link dev.verbs4j.vipl.VipNic})</td><td>a device context, port 1</td></tr>
 * <tr><td>protection tag ({@link dev.verbs4j.vipl.VipPtag})</td><td>a protection domain</td></tr>
 * <tr><td>memory handle ({@link dev.verbs4j.vipl.VipMemHandle})</td><td>a memory region; the
 *   32-bit handle value is its key (lkey, equal to the rkey where remote access is enabled, which
 *   registration checks), so a peer's handle goes straight into an address segment</td></tr>
 * <tr><td>VI ({@link dev.verbs4j.vipl.VipVi}), Reliable Delivery and Reliable Reception</td>
 *   <td>an RC queue pair in the tag's domain, created by the library (not by RDMA CM), moved
 *   through INIT, RTR and RTS with the attributes RDMA CM gives for the connection; RNR retry 0,
 *   so a missing receive is an error at once</td></tr>
 * <tr><td>VI, Unreliable</td><td>a UC queue pair (D18), connected the same way with the
 *   attributes a UC queue pair takes: no acknowledgements, so a message the peer cannot take
 *   (no receive posted, receive too small, RDMA Write not enabled) is dropped there and the
 *   sender's descriptor still completes; no RDMA Read (FORMAT_ERROR); the VI never enters the
 *   Error state: an error completion is reported in its descriptor, and a queue pair the error
 *   stopped is reset and re-armed with the connection's attributes, the queued descriptors
 *   handed to it again. Provided on IB transports (InfiniBand, RoCE); an iWARP device has no UC
 *   and returns INVALID_RELIABILITY_LEVEL</td></tr>
 * <tr><td>CQ ({@link dev.verbs4j.vipl.VipCq})</td><td>a completion queue with its completion
 *   channel; queues without a CQ get a hidden one each, which serves Done and Wait</td></tr>
 * <tr><td>RDMA enables</td><td>the queue pair's remote access flags (VI) and the memory
 *   region's (region): the device checks both, so the more restrictive wins (§3.2.2.2)</td></tr>
 * <tr><td>connection, VI network address</td><td>RDMA CM over the TCP port space on
 *   {@link dev.verbs4j.vipl.Vipl#port()} of the host address; the discriminators, reliability
 *   level, RDMA enables, MaxTransferSize and QoS travel in the private data of the request and of
 *   the reply</td></tr>
 * </table>
 *
 * <h2>Descriptors</h2>
 * {@link dev.verbs4j.vipl.VipDescriptor} is the Appendix B layout in application memory that the
 * application registers. Posting checks it (format, length, protection against the registered
 * regions and the VI's tag) and translates it into one work request whose scatter/gather entries
 * point at the application's buffers: no payload is copied. A descriptor that fails a check
 * completes at once with its error bits; it is never an exception. Completion writes Length,
 * ImmediateData and then Status (release store) into the descriptor; the Done functions dequeue
 * in post order only (§6.3.1), and keep Next/NextHandle linking the queued descriptors. A
 * descriptor whose memory (its arena) is closed while it is queued is dequeued with the return
 * code DESCRIPTOR_ERROR, nothing written into it, and the other completions are unaffected; a
 * region deregistered while a descriptor using it is queued gives that descriptor
 * PROTECTION_ERROR (§3.2.1). Posting and dequeuing allocate no Java objects.
 *
 * <h2>Memory and threads</h2>
 * Memory registered with VipRegisterMem comes from an open {@link dev.verbs4j.verbs.RdmaArena} (or
 * the global arena); any other memory is INVALID_PARAMETER. Closing the RdmaArena deregisters its
 * regions before it frees the memory, so neither the NIC nor a peer ever reaches freed memory: the
 * handles of those regions are then invalid (descriptors naming them complete with
 * PROTECTION_ERROR, the memory functions return INVALID_PARAMETER), and a descriptor in the freed
 * memory is INVALID_PARAMETER to post (DESCRIPTOR_ERROR when dequeued, if it was queued). Every
 * function may be called from any thread: the NIC's lock orders them; a connection attempt
 * changes its VI only under that lock and is cancelled by VipDisconnect, VipDestroyVi and
 * VipCloseNic; blocking calls (the Wait functions, VipConnectWait, VipConnectPeerWait) hold no
 * lock while they wait and end when what they wait on is destroyed; the error handler runs
 * without the lock. The locks are {@code java.util.concurrent} locks and every wait parks: a
 * virtual thread waiting in VIPL leaves its carrier free, and the library's own threads (Notify
 * handlers, connection watches, VipConnectPeerRequest attempts, completion watches) are virtual
 * threads.
 *
 * <h2>States</h2>
 * Idle → Pending Connect (ConnectRequest, ConnectAccept) → Connected; back to Idle on a failed
 * connect and on Disconnect (from any state; every queued descriptor completes with
 * DESC_FLUSHED_ERROR); Connected → Error on any error of a reliable VI (the queue pair goes to the
 * error state and flushes the rest, and the connection is closed, so that the peer VI goes to
 * Error at once too and reports CONN_LOST: "the VIs go to ERROR", §12 tests 7 and 20); an
 * Unreliable VI stays Connected (§2.5.1). Receives posted while Idle wait for the connection; sends
 * posted while not Connected complete flushed (D10).
 *
 * <h2>Completion discipline</h2>
 * Done and Wait per work queue; a CQ shared by several work queues gives entries (VI, queue), then
 * the consumer dequeues with SendDone/RecvDone (§6.4.2). Wait on a CQ-attached queue is
 * ERROR_RESOURCE (D2). Every completion is processed by whichever call polls its verbs CQ; one lock
 * per NIC orders it.
 *
 * <h2>Decisions on the specification's gaps (§14 of the requirements)</h2>
 * Each is documented on the function it touches: D1 (REJECT) {@link dev.verbs4j.vipl.VipReturn},
 * D2 {@link dev.verbs4j.vipl.Vipl#sendWait}, D3 {@link dev.verbs4j.vipl.Vipl#connectRequest}, D5
 * (INVALID_STATE appended as in later VIPL) {@link dev.verbs4j.vipl.Vipl#connectAccept}, D6 {@link
 * dev.verbs4j.vipl.VipReliabilityLevel}, D7/D11 {@link dev.verbs4j.vipl.VipNicAttributes}, D8
 * {@link dev.verbs4j.vipl.Vipl#connectAccept}, D9 {@link dev.verbs4j.vipl.VipViAttributes}, D10/D13
 * {@link dev.verbs4j.vipl.Vipl#postSend}, D12 {@link dev.verbs4j.vipl.Vipl#setViAttributes}, D14
 * {@link dev.verbs4j.vipl.VipVi}, D15 {@link dev.verbs4j.vipl.Vipl#createVi}, D16 {@link
 * dev.verbs4j.vipl.Vipl#closeNic}, D17 {@link dev.verbs4j.vipl.Vipl#sendDone}, D18 {@link
 * dev.verbs4j.vipl.Vipl#createVi}, D19 {@link dev.verbs4j.vipl.Vipl#sendNotify}, D20 {@link
 * dev.verbs4j.vipl.Vipl#setMemAttributes}, D21 {@link dev.verbs4j.vipl.Vipl#connectPeerRequest}.
 * */
package dev.verbs4j.vipl;
