package dev.verbs4j.naaice;

import dev.verbs4j.verbs.WcOpcode;
import dev.verbs4j.verbs.WcStatus;

/**
 * A {@link ServerConnection}'s work completions that its shared queue handed over and nobody has
 * served yet, oldest first: a ring of parallel arrays (no object per completion), which doubles
 * when full. Heap memory only; not thread-safe (the connection's lock guards it).
 */
final class CompletionInbox {

    private long[] wrIds;
    private WcStatus[] statuses;
    private WcOpcode[] opcodes;
    private int[] lengths;
    private int[] immediates;
    private int head;
    private int size;

    /** An empty inbox with room for {@code capacity} completions before it grows. */
    CompletionInbox(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity " + capacity + " < 1");
        }
        allocate(capacity);
    }

    private void allocate(int capacity) {
        wrIds = new long[capacity];
        statuses = new WcStatus[capacity];
        opcodes = new WcOpcode[capacity];
        lengths = new int[capacity];
        immediates = new int[capacity];
    }

    /** Appends a completion; {@code opcode} is null for a failed one (it is valid only on success). */
    void add(long wrId, WcStatus status, WcOpcode opcode, int byteLength, int immediate) {
        if (size == wrIds.length) {
            grow();
        }
        int i = (head + size) % wrIds.length;
        wrIds[i] = wrId;
        statuses[i] = status;
        opcodes[i] = opcode;
        lengths[i] = byteLength;
        immediates[i] = immediate;
        size++;
    }

    private void grow() {
        long[] w = wrIds;
        WcStatus[] s = statuses;
        WcOpcode[] o = opcodes;
        int[] l = lengths;
        int[] m = immediates;
        allocate(2 * w.length);
        for (int k = 0; k < size; k++) {
            int from = (head + k) % w.length;
            wrIds[k] = w[from];
            statuses[k] = s[from];
            opcodes[k] = o[from];
            lengths[k] = l[from];
            immediates[k] = m[from];
        }
        head = 0;
    }

    boolean isEmpty() {
        return size == 0;
    }

    int size() {
        return size;
    }

    /** Room before the inbox grows. */
    int capacity() {
        return wrIds.length;
    }

    /** The oldest completion's work request id (the inbox is not empty). */
    long wrId() {
        return wrIds[first()];
    }

    /** The oldest completion's status. */
    WcStatus status() {
        return statuses[first()];
    }

    /** The oldest completion's operation, null when it failed. */
    WcOpcode opcode() {
        return opcodes[first()];
    }

    /** The oldest completion's byte length. */
    int byteLength() {
        return lengths[first()];
    }

    /** The oldest completion's immediate data (host byte order). */
    int immediate() {
        return immediates[first()];
    }

    /** Drops the oldest completion. */
    void removeFirst() {
        int i = first();
        statuses[i] = null;
        opcodes[i] = null;
        head = (head + 1) % wrIds.length;
        size--;
    }

    /** Drops every completion. */
    void clear() {
        while (size > 0) {
            removeFirst();
        }
        head = 0;
    }

    private int first() {
        if (size == 0) {
            throw new IllegalStateException("the inbox is empty");
        }
        return head;
    }
}
