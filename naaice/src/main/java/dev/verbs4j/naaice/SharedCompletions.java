package dev.verbs4j.naaice;

import dev.verbs4j.rdmacm.CmId;
import dev.verbs4j.verbs.CompletionChannel;
import dev.verbs4j.verbs.CompletionQueue;
import dev.verbs4j.verbs.Context;
import dev.verbs4j.verbs.ProtectionDomain;
import dev.verbs4j.verbs.QueuePair;
import dev.verbs4j.verbs.QueuePairInit;
import dev.verbs4j.verbs.QueuePairTable;
import dev.verbs4j.verbs.WorkCompletions;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The completion queues a {@link NaaServer}'s connections share: a few queues per device, each
 * serving up to {@link #perQueue} connections, each with one virtual thread that sleeps on the
 * queue's completion channel (parked: the readiness poller wakes it) and hands every completion to
 * the connection whose queue pair it belongs to. So the server has one completion queue, channel
 * and waiting thread per few hundred connections instead of one per connection.
 *
 * <p>The polling thread serves the connections it handed completions to itself, one after the
 * other (no thread switch between a client's RPC and the reply); before a kernel runs it hands the
 * polling on to a new virtual thread ({@link Queue#handOff}) and ends after that connection, so
 * a long kernel delays no other connection.
 *
 * <p>Queue pair numbers: a completion of a destroyed queue pair can still be in its queue, and the
 * device may give the number to a new queue pair. A connection's queue pair is therefore created
 * (and registered) and destroyed (then its queue drained, its leftover completions dropped) under
 * one lock ({@link #create}, {@link #destroy}): no queue pair can take a number whose completions
 * are still queued, so none reaches a connection it does not belong to.
 *
 * <p>Owns the queues, their channels and native completion arrays; {@link #close()} frees them once
 * every connection has destroyed its queue pair.
 */
final class SharedCompletions implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(NaaServer.class.getName());
    /** How long a queue's thread sleeps at a time; completions and {@link #close()} wake it before. */
    private static final Duration SLEEP = Duration.ofHours(1);
    /** The largest queue made, whatever the device allows. */
    private static final int MAX_DEPTH = 16384;
    /** Completions taken per poll. */
    private static final int POLL = 64;

    /** One shared completion queue, its channel and its thread; members and their queue pairs guarded by {@link SharedCompletions#lock}. */
    final class Queue {
        final Context context;
        final CompletionChannel channel;
        final CompletionQueue cq;
        final int capacity;
        private final WorkCompletions completions = new WorkCompletions(POLL);
        /** The connection of each polled completion, while {@link #dispatch} hands them out (under {@link #pollLock}). */
        private final ServerConnection[] owners = new ServerConnection[POLL];
        private final QueuePairTable<ServerConnection> byQueuePair;
        private final ReentrantLock pollLock = new ReentrantLock();
        /** The thread that polls the queue now (guarded by {@link SharedCompletions#lock}); a kernel about to run hands the role on. */
        private Thread leader;
        private int members;
        private volatile boolean closed;

        Queue(Context context, int capacity, int depth) {
            this.context = context;
            CompletionChannel ch = context.createCompletionChannel();
            try {
                this.cq = context.createCompletionQueue(depth, ch, 0);
            } catch (RuntimeException e) {
                ch.close();
                completions.close();
                throw e;
            }
            this.channel = ch;
            this.capacity = capacity;
            this.byQueuePair = new QueuePairTable<>(capacity);
            this.leader = Thread.ofVirtual().name("naaice-completions").unstarted(this::run);
        }

        /**
         * Before a kernel runs on the calling thread: when it is this queue's polling thread, a
         * new one takes over the polling (the caller serves its connection and then ends), so a
         * long kernel delays no other connection of the queue.
         */
        void handOff() {
            Thread successor;
            lock.lock();
            try {
                if (leader != Thread.currentThread() || closed) {
                    return;
                }
                successor = Thread.ofVirtual().name("naaice-completions").unstarted(this::run);
                leader = successor;
            } finally {
                lock.unlock();
            }
            successor.start();
        }

        private boolean leads() {
            lock.lock();
            try {
                return leader == Thread.currentThread();
            } finally {
                lock.unlock();
            }
        }

        /**
         * The polling thread: takes the completions, hands them out, serves the connections that
         * had none waiting right here (no thread switch before the reply), arms the queue, sleeps;
         * until {@link #close}, or until a kernel it runs has handed the polling on.
         */
        private void run() {
            List<ServerConnection> claimed = new ArrayList<>();
            while (true) {
                boolean again;
                claimed.clear();
                pollLock.lock();
                try {
                    if (closed) {
                        return;
                    }
                    while (channel.tryGetEvent() != null) {
                        // acknowledged in batches by the channel
                    }
                    dispatch(claimed);
                    cq.requestNotify(false);
                    // a completion between the last poll and the arming raised no event
                    again = dispatch(claimed);
                } catch (RuntimeException e) {
                    LOG.log(System.Logger.Level.WARNING, "NAAICE server: polling a shared completion queue failed", e);
                    return;
                } finally {
                    pollLock.unlock();
                }
                for (int i = 0; i < claimed.size(); i++) {
                    if (!leads()) {
                        // a kernel handed the polling on: the others are served on threads of their own
                        for (ServerConnection c : claimed.subList(i, claimed.size())) {
                            c.serveElsewhere();
                        }
                        return;
                    }
                    claimed.get(i).serve();
                }
                if (!leads()) {
                    return;
                }
                if (!again) {
                    try {
                        channel.await(SLEEP);
                    } catch (IllegalStateException e) {
                        return; // closed
                    }
                }
            }
        }

        /**
         * Polls the queue empty (under {@link #pollLock}), handing each connection its completions
         * of a poll at once, in order; the connections that are to be served now (none served
         * them) go to {@code claimed}, in the order of their first completion. Whether there were
         * any completions. Allocates nothing per completion (the arrays are the queue's; {@code claimed} may grow).
         */
        private boolean dispatch(List<ServerConnection> claimed) {
            boolean any = false;
            int got;
            while ((got = cq.poll(completions)) > 0) {
                any = true;
                lock.lock();
                try {
                    for (int i = 0; i < got; i++) {
                        owners[i] = byQueuePair.get(completions.get(i).qpNum());
                    }
                } finally {
                    lock.unlock();
                }
                for (int i = 0; i < got; i++) {
                    ServerConnection target = owners[i];
                    // (a connection that offer claimed stays claimed until served: it is not in claimed twice)
                    if (target != null && target.offer(completions, owners, i, got)) {
                        claimed.add(target);
                    }
                }
            }
            return any;
        }

        private void close() {
            pollLock.lock();
            try {
                closed = true;
                closeQuietly(cq);
                closeQuietly(channel); // wakes the thread, which then finds the queue closed
                completions.close();
            } finally {
                pollLock.unlock();
            }
            boolean interrupted = false;
            while (true) {
                Thread t;
                lock.lock();
                try {
                    t = leader;
                } finally {
                    lock.unlock();
                }
                if (!t.isAlive() && t.getState() != Thread.State.NEW) {
                    break;
                }
                try {
                    t.join(1000);
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private final int perConnection;
    private final ReentrantLock lock = new ReentrantLock();
    /** Held while a queue pair is created and registered, and while one is destroyed and its queue drained. */
    private final ReentrantLock queuePairs = new ReentrantLock();
    private final List<Queue> queues = new ArrayList<>();
    private boolean closed;

    /** Queues for connections that each need {@code perConnection} entries. */
    SharedCompletions(int perConnection) {
        this.perConnection = perConnection;
    }

    /** Connections one queue serves at most on {@code context}. */
    int perQueue(Context context) {
        int depth = Math.min(MAX_DEPTH, Math.max(perConnection, context.queryDevice().maxCqe()));
        return Math.max(1, depth / perConnection);
    }

    /** The queues made so far. */
    int queueCount() {
        lock.lock();
        try {
            return queues.size();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Creates the queue pair of {@code connection} on {@code id} in a shared queue of its device
     * with room for it (made when none has), from {@code init} given that queue's completion
     * queue, and registers it; returns the queue.
     *
     * @throws IllegalStateException when closed
     */
    Queue create(CmId id, ProtectionDomain pd, Function<CompletionQueue, QueuePairInit> init, ServerConnection connection) {
        queuePairs.lock();
        try {
            Queue q = join(id.context());
            try {
                QueuePair qp = id.createQueuePair(pd, init.apply(q.cq));
                lock.lock();
                try {
                    q.byQueuePair.put(qp.qpNum(), connection);
                } finally {
                    lock.unlock();
                }
                return q;
            } catch (RuntimeException e) {
                leave(q);
                throw e;
            }
        } finally {
            queuePairs.unlock();
        }
    }

    /**
     * Destroys a connection's queue pair ({@code destroy}: closes its id) and drains the shared
     * queue before another queue pair can be created: the completions of the destroyed one are
     * dropped, the others' handed out. The connection has left the queue then.
     */
    void destroy(Queue q, int qpNum, ServerConnection connection, Runnable destroy) {
        queuePairs.lock();
        try {
            try {
                destroy.run();
            } finally {
                q.pollLock.lock();
                try {
                    lock.lock();
                    try {
                        q.byQueuePair.remove(qpNum, connection);
                    } finally {
                        lock.unlock();
                    }
                    if (!q.closed) {
                        List<ServerConnection> claimed = new ArrayList<>();
                        q.dispatch(claimed);
                        // served on threads of their own: the caller is freeing a connection
                        for (ServerConnection c : claimed) {
                            c.serveElsewhere();
                        }
                    }
                } catch (RuntimeException e) {
                    LOG.log(System.Logger.Level.WARNING, "NAAICE server: draining a shared completion queue failed", e);
                } finally {
                    q.pollLock.unlock();
                }
                leave(q);
            }
        } finally {
            queuePairs.unlock();
        }
    }

    private Queue join(Context context) {
        lock.lock();
        try {
            if (closed) {
                throw new IllegalStateException("the server is closing");
            }
            for (Queue q : queues) {
                if (q.context == context && q.members < q.capacity) {
                    q.members++;
                    return q;
                }
            }
            int n = perQueue(context);
            Queue q = new Queue(context, n, n * perConnection);
            queues.add(q);
            q.members++;
            q.leader.start();
            return q;
        } finally {
            lock.unlock();
        }
    }

    private void leave(Queue q) {
        lock.lock();
        try {
            q.members--;
        } finally {
            lock.unlock();
        }
    }

    /** Closes every queue (after every connection destroyed its queue pair) and waits for their threads. */
    @Override
    public void close() {
        List<Queue> all;
        lock.lock();
        try {
            closed = true;
            all = new ArrayList<>(queues);
        } finally {
            lock.unlock();
        }
        for (Queue q : all) {
            q.close();
        }
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception e) {
            LOG.log(System.Logger.Level.DEBUG, "NAAICE server: closing " + c, e);
        }
    }
}
