package dev.verbs4j.verbs.event;

import dev.verbs4j.verbs.CompletionChannel;
import dev.verbs4j.verbs.CompletionQueue;
import dev.verbs4j.verbs.WorkCompletions;

/**
 * What a {@link CompletionDispatcher} polls and watches: a completion queue and the channel it
 * signals on (a fake one in the host tests). Owns nothing.
 */
interface CompletionSource {

    /** Polls into {@code into}; how many completions came (0: none). */
    int poll(WorkCompletions into);

    /** Arms the queue: the next completion signals the channel. */
    void requestNotify();

    /** Takes the channel's pending events (acknowledged in batches by the queue). */
    void takeEvents();

    /** Runs {@code task} once the channel is readable or closes, unless cancelled first. */
    Readiness.Watch whenReadable(Runnable task);

    /** The source of {@code cq}, which signals on {@code channel}. */
    static CompletionSource of(CompletionQueue cq, CompletionChannel channel) {
        return new CompletionSource() {
            @Override
            public int poll(WorkCompletions into) {
                return cq.poll(into);
            }

            @Override
            public void requestNotify() {
                cq.requestNotify(false);
            }

            @Override
            public void takeEvents() {
                while (channel.tryGetEvent() != null) {
                    // acknowledged in batches by the queue
                }
            }

            @Override
            public Readiness.Watch whenReadable(Runnable task) {
                return channel.whenReadable(task);
            }
        };
    }
}
