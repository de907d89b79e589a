/**
 * The verbs API: devices ({@link dev.verbs4j.verbs.Context}), protection domains, memory regions
 * and windows, completion queues and channels, queue pairs, address handles, shared receive
 * queues, and the zero-copy data path ({@link dev.verbs4j.verbs.SendRequests}, {@link
 * dev.verbs4j.verbs.ReceiveRequests}, {@link dev.verbs4j.verbs.WorkCompletions}).
 *
 * <h2>Lifetimes: what the native side can reach stays alive</h2>
 * No sequence of calls through this API, from any threads, lets the provider or a remote peer
 * reach freed memory; misuse is an exception (or an error completion), never a crash. One model
 * gives that, everywhere:
 * <ol>
 *   <li><b>Objects.</b> Every verbs object is closed once; a parent closes what was created from it
 *       first (a context its domains and queues, a domain its regions, windows, queue pairs and
 *       address handles), and an object closes before what it uses (a queue pair before its
 *       completion queues, a completion queue before its channel, a window before the region it
 *       is bound to; a queue pair leaves its multicast groups before it is destroyed). Every call that touches a native object holds it for its duration; a
 *       close waits for the calls in progress, and calls after it throw
 *       {@link java.lang.IllegalStateException}. Creating an object holds its parent and the
 *       objects it uses the same way.</li>
 *   <li><b>Descriptors.</b> A work request names objects (the regions of its scatter/gather entries,
 *       a UD address handle, a window and region to bind). The batch remembers them; posting
 *       checks them, and holds those the provider reads while posting (address handles, windows,
 *       and the regions of INLINE requests) until the post returns. A request that names a closed
 *       object is an {@link java.lang.IllegalStateException} at the post, naming the request.
 *       Inline data is copied into the batch's own memory when it is set. After the post the
 *       device refers to regions by key only: a region closed while its request is outstanding
 *       makes that request complete with an error.</li>
 *   <li><b>Registered memory.</b> {@link dev.verbs4j.verbs.ProtectionDomain#register} takes memory
 *       whose lifetime the library controls: an {@link dev.verbs4j.verbs.RdmaArena}, whose close
 *       deregisters every region over its memory before freeing it, or the global arena, which is
 *       never freed; {@link dev.verbs4j.verbs.ProtectionDomain#allocateRegion} memory belongs to the
 *       region. A region whose deregistration fails keeps its memory allocated. Other memory needs
 *       {@link dev.verbs4j.verbs.ProtectionDomain#registerUnchecked}, whose name says that the
 *       caller keeps it alive.</li>
 *   <li><b>Threads.</b> Objects may be used from any thread. A send or receive batch is filled and
 *       posted by one thread at a time (a concurrent post of the same batch is refused, and so
 *       is closing a batch or completion array while a post or poll uses it); an
 *       extended send batch ({@link dev.verbs4j.verbs.ExtendedQueuePair}) and an extended polling
 *       pass ({@link dev.verbs4j.verbs.ExtendedPoller}) belong to the thread that started them.</li>
 *   <li><b>Confinement, the fast path.</b> Counting the calls in progress costs atomic operations
 *       on every post and poll. A thread that owns a queue pair's or completion queue's data path
 *       confines it ({@link dev.verbs4j.verbs.QueuePair#confine()}, {@link
 *       dev.verbs4j.verbs.CompletionQueue#confine()}) and uses confined batches ({@link
 *       dev.verbs4j.verbs.SendRequests#confined}, {@link dev.verbs4j.verbs.WorkCompletions#confined}):
 *       its posts and polls then take no atomic operation at all. In exchange, as for a confined
 *       {@code Arena}, only that thread may close the object, or anything whose close would close
 *       it (its domain, queues, channel, context, connection id): a close from another thread is
 *       an {@link java.lang.IllegalStateException} before anything is closed, until the owner has
 *       closed the object or has terminated. Other threads may still use it, counted as before.
 *       Choose confinement for a data path with one thread per queue (a poller loop, a benchmark,
 *       perftest); keep the default where several threads share a queue pair or close it.</li>
 * </ol>
 */
package dev.verbs4j.verbs;
