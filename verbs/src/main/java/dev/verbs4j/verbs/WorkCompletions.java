package dev.verbs4j.verbs;

import dev.verbs4j.bindings.ibv_wc;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A reusable native array of {@code struct ibv_wc} that {@link CompletionQueue#poll} fills, read
 * through one {@link WorkCompletion} flyweight: polling and reading allocate nothing. Owns its
 * native memory; close it when done.
 */
public final class WorkCompletions implements AutoCloseable {

    private final Arena arena;
    private final MemorySegment array;
    private final int capacity;
    private final WorkCompletion flyweight;
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
        this.arena = confined ? Arena.ofConfined() : Arena.ofShared();
        this.array = arena.allocate(ibv_wc.layout(), capacity);
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

    void filled(int n) {
        count = n;
    }

    @Override
    public void close() {
        arena.close();
    }
}
