package dev.verbs4j.verbs;

import java.util.concurrent.CompletableFuture;

/**
 * A blocking call a test makes on another thread (of the common pool) in order to wake it from
 * this one: the future holds what the call threw, or null once it returned.
 */
public final class Blocked {

    /** The call, which may throw anything. */
    @FunctionalInterface
    public interface Call {
        void run() throws Exception;
    }

    private Blocked() {
    }

    /** Starts {@code call}; the future completes with what it threw, or null. */
    public static CompletableFuture<Throwable> start(Call call) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                call.run();
                return null;
            } catch (Throwable e) {
                return e;
            }
        });
    }
}
