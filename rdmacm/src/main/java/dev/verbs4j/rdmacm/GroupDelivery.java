package dev.verbs4j.rdmacm;

import dev.verbs4j.verbs.WorkCompletion;
import dev.verbs4j.verbs.WorkCompletions;
import dev.verbs4j.verbs.event.CompletionDispatcher;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;

/**
 * How an {@link RdmaEndpointGroup}'s completions reach its connections: its dispatcher gives each
 * connection its completions of a poll, copied out ({@link Completion}: the native array is
 * reused), which wait in a backlog in the order polled; one thread at a time hands the backlog
 * out, holding no lock of the group's (a connection's {@code deliver} takes the connection's lock,
 * and a closing connection holds that lock while its queue pair is retired). Completions of
 * retired queue pairs are dropped, their shared receive slots posted again. Heap memory only.
 */
final class GroupDelivery implements CompletionDispatcher.Sink<RdmaConnection> {

    private static final System.Logger LOG = System.getLogger(RdmaEndpointGroup.class.getName());

    /** One connection's completions of one poll. */
    private record Batch(RdmaConnection connection, List<Completion> completions) {
    }

    private final RdmaEndpointGroup group;
    /** Guards the backlog and {@link #delivering}. */
    private final ReentrantLock lock = new ReentrantLock();
    private final ArrayDeque<Batch> backlog = new ArrayDeque<>();
    /** Whether a thread hands out the backlog (one at a time, so each connection gets its completions in order). */
    private boolean delivering;

    GroupDelivery(RdmaEndpointGroup group) {
        this.group = group;
    }

    @Override
    public void polled(WorkCompletions polled, int count) {
        for (int i = 0; i < count; i++) {
            group.sharedReceiveTaken(polled.get(i).wrId());
        }
    }

    @Override
    public void take(RdmaConnection connection, WorkCompletions polled, RdmaConnection[] owners, int first, int count) {
        List<Completion> mine = new ArrayList<>();
        for (int i = first; i < count; i++) {
            if (owners[i] == connection) {
                mine.add(Completion.of(polled.get(i)));
            }
        }
        lock.lock();
        try {
            backlog.addLast(new Batch(connection, mine));
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void orphan(WorkCompletion completion) {
        group.recycle(completion.wrId());
    }

    @Override
    public void afterPoll(boolean pollingThread) {
        if (pollingThread) {
            deliver();
            return;
        }
        // handed out on a thread of its own: the retiring caller may hold its connection's lock
        lock.lock();
        try {
            if (backlog.isEmpty() || delivering) {
                return;
            }
        } finally {
            lock.unlock();
        }
        Thread.ofVirtual().name("verbs4j-group-deliver").start(this::deliver);
    }

    /**
     * Hands out the backlog on the calling thread, which must hold no lock of the group or of a
     * connection; returns at once when another thread is doing it (which then takes what was
     * added too).
     */
    private void deliver() {
        boolean first = true;
        while (true) {
            List<Batch> batches;
            lock.lock();
            try {
                if (first) {
                    if (delivering) {
                        return;
                    }
                    delivering = true;
                    first = false;
                }
                if (backlog.isEmpty()) {
                    delivering = false;
                    return;
                }
                batches = new ArrayList<>(backlog);
                backlog.clear();
            } finally {
                lock.unlock();
            }
            for (Batch b : batches) {
                try {
                    b.connection().deliver(b.completions());
                } catch (RuntimeException | Error x) {
                    LOG.log(System.Logger.Level.WARNING, group + ": handing out completions failed", x);
                }
            }
        }
    }
}
