package dev.verbs4j.naaice;

import dev.verbs4j.rdmacm.CmId;
import dev.verbs4j.verbs.Closeables;
import dev.verbs4j.verbs.CompletionChannel;
import dev.verbs4j.verbs.CompletionQueue;
import dev.verbs4j.verbs.Context;
import dev.verbs4j.verbs.ProtectionDomain;
import dev.verbs4j.verbs.QueuePair;
import dev.verbs4j.verbs.QueuePairInit;
import dev.verbs4j.verbs.WorkCompletions;
import dev.verbs4j.verbs.event.CompletionDispatcher;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;

/**
 * The completion queues a {@link NaaServer}'s connections share: a few queues per device, each
 * serving up to {@link #perQueue} connections through a {@link CompletionDispatcher}, which runs a
 * polling round on a virtual thread whenever the queue's channel is readable and hands every
 * completion to the connection whose queue pair it belongs to. So the server has one completion
 * queue and channel per few hundred connections instead of one per connection, and no thread
 * waits for them.
 *
 * <p>The polling thread serves the connections it handed completions to itself, one after the
 * other (no thread switch between a client's RPC and the reply); before a kernel runs it hands the
 * polling on ({@link Queue#handOff}: the next round runs on a new virtual thread) and ends after
 * that connection, so a long kernel delays no other connection.
 *
 * <p>Queue pair numbers: a connection's queue pair is created and registered under its queue's
 * {@link CompletionDispatcher#queuePairLock()} ({@link #create}) and retired there ({@link
 * #destroy}: destroyed, then the queue drained, its leftover completions dropped), so none reaches
 * a connection it does not belong to.
 *
 * <p>Owns the queues, their channels and dispatchers; {@link #close()} frees them once every
 * connection has destroyed its queue pair.
 */
final class SharedCompletions implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(NaaServer.class.getName());
    /** The largest queue made, whatever the device allows. */
    private static final int MAX_DEPTH = 16384;
    /** Completions taken per poll. */
    private static final int POLL = 64;

    /**
     * One shared completion queue, its channel and its dispatcher; members and claimed
     * connections guarded by {@link SharedCompletions#lock}.
     */
    final class Queue implements CompletionDispatcher.Sink<ServerConnection> {
        final Context context;
        final CompletionChannel channel;
        final CompletionQueue cq;
        final int capacity;
        private final CompletionDispatcher<ServerConnection> dispatcher;
        /** Connections that {@link ServerConnection#offer} claimed in a poll, to be served after it, in order. */
        private final ArrayDeque<ServerConnection> claimed = new ArrayDeque<>();
        private int members;

        Queue(Context context, int capacity, int depth) {
            this.context = context;
            CompletionChannel ch = context.createCompletionChannel();
            CompletionQueue q = null;
            try {
                q = context.createCompletionQueue(depth, ch, 0);
                this.dispatcher = new CompletionDispatcher<>(q, ch, POLL, ServerConnection[]::new, capacity, this);
            } catch (RuntimeException e) {
                throw Closeables.closeAfter(e, q, ch);
            }
            this.cq = q;
            this.channel = ch;
            this.capacity = capacity;
        }

        /**
         * Before a kernel runs on the calling thread: when it is this queue's polling thread, the
         * next round runs on a new one (the caller serves its connection and then ends), so a
         * long kernel delays no other connection of the queue.
         */
        void handOff() {
            dispatcher.handOff();
        }

        /** Under the poll lock: hands {@code c} its completions; it is served after the poll when it was claimed. */
        @Override
        public void take(ServerConnection c, WorkCompletions polled, ServerConnection[] owners, int first, int count) {
            // (a connection that offer claimed stays claimed until served: it is not in claimed twice)
            if (c.offer(polled, owners, first, count)) {
                lock.lock();
                try {
                    claimed.addLast(c);
                } finally {
                    lock.unlock();
                }
            }
        }

        /**
         * Serves the claimed connections: right here on the polling thread, until a kernel it runs
         * has handed the polling on (the others then on threads of their own); after a drain,
         * each on a thread of its own (the caller is freeing a connection).
         */
        @Override
        public void afterPoll(boolean pollingThread) {
            while (true) {
                ServerConnection c;
                lock.lock();
                try {
                    c = claimed.pollFirst();
                } finally {
                    lock.unlock();
                }
                if (c == null) {
                    return;
                }
                if (pollingThread && dispatcher.polling()) {
                    c.serve();
                } else {
                    c.serveElsewhere();
                }
            }
        }

        private void close() {
            Closeables.closeLogged(LOG, dispatcher, cq, channel);
        }
    }

    private final int perConnection;
    private final ReentrantLock lock = new ReentrantLock();
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
        Queue q = join(id.context());
        ReentrantLock creating = q.dispatcher.queuePairLock();
        creating.lock();
        try {
            QueuePair qp = id.createQueuePair(pd, init.apply(q.cq));
            q.dispatcher.register(qp.qpNum(), connection);
            return q;
        } catch (RuntimeException e) {
            leave(q);
            throw e;
        } finally {
            creating.unlock();
        }
    }

    /**
     * Destroys a connection's queue pair ({@code destroy}: closes its id) and drains the shared
     * queue before another queue pair can be created: the completions of the destroyed one are
     * dropped, the others' handed out. The connection has left the queue then.
     */
    void destroy(Queue q, int qpNum, ServerConnection connection, Runnable destroy) {
        try {
            q.dispatcher.retire(qpNum, connection, destroy);
        } finally {
            leave(q);
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
            q.dispatcher.start();
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

    /** Closes every queue (after every connection destroyed its queue pair); a round in progress ends first. */
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
}
