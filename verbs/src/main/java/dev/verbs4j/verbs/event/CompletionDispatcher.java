package dev.verbs4j.verbs.event;

import dev.verbs4j.verbs.CompletionChannel;
import dev.verbs4j.verbs.CompletionQueue;
import dev.verbs4j.verbs.WorkCompletion;
import dev.verbs4j.verbs.WorkCompletions;
import dev.verbs4j.verbs.internal.QueuePairTable;

import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.IntFunction;

/**
 * Hands the completions of one completion queue that several queue pairs share to their handlers,
 * by queue pair number, with no thread of its own: {@link CompletionChannel#whenReadable} runs a
 * polling round on a virtual thread whenever the queue's channel is readable (the queue armed
 * before), which takes every completion, gives each handler its completions of a poll in one
 * {@link Sink#take} (in the order polled, the handlers in the order of their first completion),
 * then lets the sink act on them ({@link Sink#afterPoll}) and watches the channel again. Polling
 * reuses one native completion array and one owners array: nothing is allocated per completion.
 *
 * <p><b>Queue pair numbers.</b> A completion of a destroyed queue pair can still be in the queue,
 * and the device may give its number to a new queue pair. So a queue pair on the queue is created
 * and {@link #register registered} under {@link #queuePairLock()}, and {@link #retire} destroys
 * one and takes every completion left in the queue under that lock (the retired one's go to {@link
 * Sink#orphan}, the others' to their handlers): no queue pair of the queue can take a number whose
 * completions are still queued, so a completion never reaches a handler it does not belong to.
 *
 * <p><b>Threads.</b> One round polls at a time ({@link #retire} polls under the same lock), so
 * each handler gets its completions in order. A handler about to run long on the polling thread
 * calls {@link #handOff}: the channel is watched again at once, and the next round runs on a new
 * thread while this one finishes.
 *
 * <p>Owns the completion array, which {@link #close} frees; the queue and its channel belong to
 * the caller, who closes them after the dispatcher.
 *
 * @param <H> the handlers (compared by identity)
 */
public final class CompletionDispatcher<H> implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(CompletionDispatcher.class.getName());

    /**
     * What a dispatcher's completions go to. {@link #polled}, {@link #take} and {@link #orphan}
     * run under the dispatcher's poll lock (one at a time, on a polling thread or in {@link
     * CompletionDispatcher#retire}): they must not wait for a thread that may be retiring a queue
     * pair.
     *
     * @param <H> the handlers
     */
    public interface Sink<H> {

        /** Every completion of a poll, before they are handed out (for counting what a poll took). */
        default void polled(WorkCompletions polled, int count) {
        }

        /**
         * The completions of {@code handler} among {@code polled}: those at {@code first} and
         * after, below {@code count}, whose {@code owners} entry is {@code handler}, in the order
         * polled ({@code owners[first]} is one). The dispatcher clears their entries afterwards.
         */
        void take(H handler, WorkCompletions polled, H[] owners, int first, int count);

        /** A completion of a queue pair without a handler (a retired one): dropped once this returns. */
        default void orphan(WorkCompletion completion) {
        }

        /**
         * After a round of polling, the poll lock released: on the polling thread ({@code
         * pollingThread}: it may act on what it took here, and {@link
         * CompletionDispatcher#polling} tells whether it still leads), or on the thread that
         * {@link CompletionDispatcher#retire retired} a queue pair (which may hold a handler's
         * lock: act elsewhere).
         */
        default void afterPoll(boolean pollingThread) {
        }
    }

    /** The dispatcher's state; guarded by {@link #lock}. */
    private enum State {
        /** Made, not {@link #start started}. */
        NEW,
        /** The channel is watched: the next round starts when it is readable. */
        ARMED,
        /** A round runs on {@link #poller}. */
        POLLING,
        /** Closed: nothing polls any more. */
        CLOSED
    }

    private final CompletionSource source;
    private final Sink<H> sink;
    private final WorkCompletions polled;
    /** The handler of each polled completion, while a poll hands them out (under {@link #pollLock}). */
    private final H[] owners;
    /** Held while a queue pair of the queue is created and registered, and while one is retired. */
    private final ReentrantLock queuePairs = new ReentrantLock();
    /** Held while the queue is polled and its completions handed to the sink. */
    private final ReentrantLock pollLock = new ReentrantLock();
    /** Guards the state, the watch, the polling thread and the table; never held while calling out. */
    private final ReentrantLock lock = new ReentrantLock();
    private final QueuePairTable<H> handlers;
    private State state = State.NEW;
    private Readiness.Watch watch;
    private Thread poller;
    /** Written under {@link #pollLock}. */
    private volatile long completionsPolled;

    /**
     * A dispatcher of {@code cq}'s completions, which signals on {@code channel}; it watches once
     * {@link #start started}.
     *
     * @param pollSize     completions taken per poll
     * @param ownersArray  makes the owners array ({@code H[]::new})
     * @param expected     about how many queue pairs the queue serves (the table's initial size)
     */
    public CompletionDispatcher(CompletionQueue cq, CompletionChannel channel, int pollSize, IntFunction<H[]> ownersArray,
                                int expected, Sink<H> sink) {
        this(CompletionSource.of(Objects.requireNonNull(cq, "cq"), Objects.requireNonNull(channel, "channel")),
                pollSize, ownersArray, expected, sink);
    }

    CompletionDispatcher(CompletionSource source, int pollSize, IntFunction<H[]> ownersArray, int expected, Sink<H> sink) {
        this.source = source;
        this.sink = Objects.requireNonNull(sink, "sink");
        this.owners = ownersArray.apply(pollSize);
        this.handlers = new QueuePairTable<>(expected);
        this.polled = new WorkCompletions(pollSize);
    }

    /**
     * Arms the queue and watches its channel.
     *
     * @throws IllegalStateException when started before or closed
     */
    public void start() {
        lock.lock();
        try {
            if (state != State.NEW) {
                throw new IllegalStateException("the dispatcher is " + state);
            }
            source.requestNotify();
            arm();
        } finally {
            lock.unlock();
        }
    }

    /**
     * The lock to hold while a queue pair on the queue is created and {@link #register registered}
     * (see the class documentation); {@link #retire} holds it too.
     */
    public ReentrantLock queuePairLock() {
        return queuePairs;
    }

    /**
     * From now on the completions of queue pair {@code qpNum} go to {@code handler}; under {@link
     * #queuePairLock()}, with the queue pair's creation.
     *
     * @throws IllegalStateException when closed
     */
    public void register(int qpNum, H handler) {
        Objects.requireNonNull(handler, "handler");
        lock.lock();
        try {
            if (state == State.CLOSED) {
                throw new IllegalStateException("the completion dispatcher is closed");
            }
            handlers.put(qpNum, handler);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Destroys queue pair {@code qpNum} of {@code handler} ({@code destroy}) and takes every
     * completion left in the queue before another queue pair of it can be created: the destroyed
     * one's go to {@link Sink#orphan}, the others' to their handlers; then {@link Sink#afterPoll}
     * on this thread. The handler is unregistered (also when {@code destroy} throws, which is
     * passed on); a failing poll is logged. After {@link #close}, only unregisters.
     */
    public void retire(int qpNum, H handler, Runnable destroy) {
        queuePairs.lock();
        try {
            destroy.run();
        } finally {
            try {
                drain(qpNum, handler);
            } finally {
                queuePairs.unlock();
            }
            sink.afterPoll(false);
        }
    }

    /** Unregisters {@code handler} of {@code qpNum} and polls the queue empty; under {@link #queuePairLock()}. */
    private void drain(int qpNum, H handler) {
        pollLock.lock();
        try {
            boolean open;
            lock.lock();
            try {
                handlers.remove(qpNum, handler);
                open = state != State.CLOSED;
            } finally {
                lock.unlock();
            }
            if (open) {
                pollAll();
            }
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "draining a shared completion queue failed", e);
        } finally {
            pollLock.unlock();
        }
    }

    /**
     * On the polling thread, before it runs long (an application's code): the channel is watched
     * again at once, and the next round runs on a new thread; this one no longer {@link #polling
     * polls}. Elsewhere nothing happens.
     */
    public void handOff() {
        lock.lock();
        try {
            if (state == State.POLLING && poller == Thread.currentThread()) {
                rearm();
            }
        } finally {
            lock.unlock();
        }
    }

    /** Whether the calling thread runs the current round (and has not {@link #handOff handed it off}). */
    public boolean polling() {
        lock.lock();
        try {
            return state == State.POLLING && poller == Thread.currentThread();
        } finally {
            lock.unlock();
        }
    }

    /** How many completions were polled since the start, those of retired queue pairs too. */
    public long completionsPolled() {
        return completionsPolled;
    }

    /** Watches the channel for the next round; under {@link #lock}. */
    private void arm() {
        watch = source.whenReadable(this::round);
        state = State.ARMED;
    }

    /** The polling thread lets go and the channel is watched again; under {@link #lock}. */
    private void rearm() {
        poller = null;
        try {
            arm();
        } catch (RuntimeException e) {
            // the channel was closed before the dispatcher: no round starts any more
            state = State.ARMED;
            LOG.log(System.Logger.Level.WARNING, "watching a shared completion queue's channel failed", e);
        }
    }

    /**
     * The channel is readable: takes the events and the completions, hands them out, arms the
     * queue, lets the sink act; again while the second poll found completions (one that came just
     * before the arming raised no event); then watches again, unless handed off or closed.
     */
    private void round() {
        lock.lock();
        try {
            if (state != State.ARMED) {
                return; // closed
            }
            state = State.POLLING;
            poller = Thread.currentThread();
            watch = null;
        } finally {
            lock.unlock();
        }
        while (true) {
            boolean again = false;
            pollLock.lock();
            try {
                if (closed()) {
                    return;
                }
                source.takeEvents();
                pollAll();
                source.requestNotify();
                again = pollAll();
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "polling a shared completion queue failed", e);
            } finally {
                pollLock.unlock();
            }
            sink.afterPoll(true);
            lock.lock();
            try {
                if (state != State.POLLING || poller != Thread.currentThread()) {
                    return; // handed off or closed
                }
                if (!again) {
                    rearm();
                    return;
                }
            } finally {
                lock.unlock();
            }
        }
    }

    private boolean closed() {
        lock.lock();
        try {
            return state == State.CLOSED;
        } finally {
            lock.unlock();
        }
    }

    /** Polls the queue empty, handing out the completions; under {@link #pollLock}. Whether there were any. */
    private boolean pollAll() {
        boolean any = false;
        int got;
        while ((got = source.poll(polled)) > 0) {
            any = true;
            completionsPolled += got;
            try {
                sink.polled(polled, got);
                lock.lock();
                try {
                    for (int i = 0; i < got; i++) {
                        owners[i] = handlers.get(polled.get(i).qpNum());
                    }
                } finally {
                    lock.unlock();
                }
                for (int i = 0; i < got; i++) {
                    if (owners[i] == null) {
                        sink.orphan(polled.get(i));
                    }
                }
                for (int i = 0; i < got; i++) {
                    H handler = owners[i];
                    if (handler != null) {
                        sink.take(handler, polled, owners, i, got);
                        for (int j = i; j < got; j++) {
                            if (owners[j] == handler) {
                                owners[j] = null;
                            }
                        }
                    }
                }
            } finally {
                for (int i = 0; i < got; i++) {
                    owners[i] = null;
                }
            }
        }
        return any;
    }

    /**
     * Stops watching and polling (a round in progress ends first) and frees the completion array;
     * {@link #retire} only unregisters from now on. Idempotent. Close the queue and its channel
     * after this.
     */
    @Override
    public void close() {
        lock.lock();
        try {
            if (state == State.CLOSED) {
                return;
            }
            if (watch != null) {
                watch.cancel();
                watch = null;
            }
            state = State.CLOSED;
            poller = null;
        } finally {
            lock.unlock();
        }
        pollLock.lock(); // a poll in progress ends before the array goes
        try {
            polled.close();
        } finally {
            pollLock.unlock();
        }
    }
}
