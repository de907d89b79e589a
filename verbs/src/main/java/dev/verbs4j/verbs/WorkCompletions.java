package dev.verbs4j.verbs;

import dev.verbs4j.bindings.ibv_wc;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A reusable native array of {@code struct ibv_wc} that {@link CompletionQueue#poll} fills, read
 * through one {@link WorkCompletion} flyweight: polling and reading allocate nothing. Owns its
 * native memory; close it when done.
 *
 * <p>A close while a poll fills the array is refused ({@link IllegalStateException}). A shared
 * array is taken by a poll with one compare-and-set and handed to the provider by address (the
 * taking, not the arena, keeps the memory alive for the call); a second poll at the same time
 * passes the segment itself, whose arena then holds it.
 */
public final class WorkCompletions implements AutoCloseable {

    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(WorkCompletions.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private static final int FREE = 0;
    private static final int POLLING = 1;
    private static final int CLOSED = 2;

    private final Arena arena;
    private final MemorySegment array;
    private final int capacity;
    private final WorkCompletion flyweight;
    private final boolean confined;
    /** The array's address, for a poll that took a shared array. */
    private final MemorySegment address;
    /** FREE, taken by a POLLING thread, or CLOSED (shared arrays only). */
    @SuppressWarnings("unused") // through STATE
    private volatile int state;
    private int count;

    /** An array of {@code capacity} completions. */
    public WorkCompletions(int capacity) {
        this(capacity, false);
    }

    /**
     * The same for one thread only: the memory lies in a confined arena, which makes each
     * poll cheaper (no atomic bookkeeping of the memory's lifetime in the downcall); any other
     * thread that uses it gets a {@link WrongThreadException}.
     */
    public static WorkCompletions confined(int capacity) {
        return new WorkCompletions(capacity, true);
    }

    private WorkCompletions(int capacity, boolean confined) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be at least 1, got " + capacity);
        }
        this.capacity = capacity;
        this.confined = confined;
        this.arena = confined ? Arena.ofConfined() : Arena.ofShared();
        this.array = arena.allocate(ibv_wc.layout(), capacity);
        this.address = MemorySegment.ofAddress(array.address());
        this.flyweight = new WorkCompletion(array);
    }

    /** How many completions one poll can return. */
    public int capacity() {
        return capacity;
    }

    /** How many completions the last poll returned. */
    public int count() {
        return count;
    }

    /**
     * The completion at {@code index} (below {@link #count()}). The returned flyweight is the same
     * object for every index: read it before asking for the next one.
     */
    public WorkCompletion get(int index) {
        if (index < 0 || index >= count) {
            throw new IndexOutOfBoundsException("completion " + index + " of " + count + " polled");
        }
        return flyweight.moveTo(index);
    }

    MemorySegment segment() {
        return array;
    }

    /**
     * Takes a shared array for a poll: true when this poll may pass {@link #address()} (it then
     * calls {@link #release()}), false when it passes {@link #segment()} (confined, or another
     * poll has it).
     *
     * @throws IllegalStateException when the array is closed
     */
    boolean take() {
        if (confined) {
            return false;
        }
        int was = (int) STATE.compareAndExchange(this, FREE, POLLING);
        if (was == CLOSED) {
            throw new IllegalStateException("WorkCompletions is closed");
        }
        return was == FREE;
    }

    /** The array by address, for a poll that {@link #take() took} it. */
    MemorySegment address() {
        return address;
    }

    /** Ends what {@link #take()} began. */
    void release() {
        STATE.setRelease(this, FREE);
    }

    void filled(int n) {
        count = n;
    }

    @Override
    public void close() {
        if (confined) {
            arena.close();
            return;
        }
        int was = (int) STATE.compareAndExchange(this, FREE, CLOSED);
        if (was == POLLING) {
            throw beingFilled(null);
        }
        try {
            arena.close();
        } catch (IllegalStateException e) {
            if (was == FREE) {
                // a second poll, which passed the segment, holds the arena: still open
                STATE.setRelease(this, FREE);
                throw beingFilled(e);
            }
            throw e;
        }
    }

    private static IllegalStateException beingFilled(Throwable cause) {
        return new IllegalStateException("WorkCompletions is being filled by a poll: close it once the poll has returned",
                cause);
    }
}
