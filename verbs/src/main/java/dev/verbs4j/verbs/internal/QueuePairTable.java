package dev.verbs4j.verbs.internal;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Values by queue pair number, for handing each {@link dev.verbs4j.verbs.WorkCompletion} of a
 * shared completion queue to its owner ({@code table.get(wc.qpNum())}) without boxing the number
 * or allocating: open addressing with linear probing over an {@code int} array, which doubles when
 * three quarters full. Any other 32-bit key (a memory key, a handle) works as well. The table of
 * {@link dev.verbs4j.verbs.event.CompletionDispatcher}, and VIPL's for its VIs and memory handles
 * (internal: exported to the modules that use it). Heap memory only; not thread-safe: the
 * caller's lock or thread confinement guards it.
 *
 * @param <V> the owners (compared by identity in {@link #remove(int, Object)})
 */
public final class QueuePairTable<V> {

    private int[] keys;
    private Object[] values;
    private int size;

    /** An empty table. */
    public QueuePairTable() {
        this(8);
    }

    /** An empty table for about {@code expected} entries before it grows. */
    public QueuePairTable(int expected) {
        int n = 16;
        while (n < Integer.MAX_VALUE / 4 && n * 3L < expected * 4L) {
            n <<= 1;
        }
        keys = new int[n];
        values = new Object[n];
    }

    private static int slot(int key, int mask) {
        int h = key * 0x9E3779B9;
        return (h ^ h >>> 16) & mask;
    }

    /** The value of {@code key}, or null. */
    @SuppressWarnings("unchecked")
    public V get(int key) {
        int mask = keys.length - 1;
        for (int i = slot(key, mask); values[i] != null; i = (i + 1) & mask) {
            if (keys[i] == key) {
                return (V) values[i];
            }
        }
        return null;
    }

    /**
     * Maps {@code key} to {@code value}; returns the value it replaced, or null.
     *
     * @throws NullPointerException when {@code value} is null
     */
    @SuppressWarnings("unchecked")
    public V put(int key, V value) {
        if (value == null) {
            throw new NullPointerException("QueuePairTable.put: value of " + key + " is null");
        }
        if ((size + 1) * 4L > keys.length * 3L) {
            grow();
        }
        int mask = keys.length - 1;
        int i = slot(key, mask);
        while (values[i] != null) {
            if (keys[i] == key) {
                Object old = values[i];
                values[i] = value;
                return (V) old;
            }
            i = (i + 1) & mask;
        }
        keys[i] = key;
        values[i] = value;
        size++;
        return null;
    }

    /** Removes {@code key}; returns its value, or null when it had none. */
    @SuppressWarnings("unchecked")
    public V remove(int key) {
        int i = find(key);
        if (i < 0) {
            return null;
        }
        V removed = (V) values[i];
        removeAt(i);
        return removed;
    }

    /** Removes {@code key} only while it maps to {@code value} (the same object); whether it did. */
    public boolean remove(int key, V value) {
        int i = find(key);
        if (i < 0 || value == null || values[i] != value) {
            return false;
        }
        removeAt(i);
        return true;
    }

    /** How many keys have a value. */
    public int size() {
        return size;
    }

    /** Whether no key has a value. */
    public boolean isEmpty() {
        return size == 0;
    }

    /** Removes every entry. */
    public void clear() {
        Arrays.fill(values, null);
        size = 0;
    }

    /** A new list of the values, in no particular order (allocates: not for the data path). */
    @SuppressWarnings("unchecked")
    public List<V> values() {
        List<V> all = new ArrayList<>(size);
        for (Object v : values) {
            if (v != null) {
                all.add((V) v);
            }
        }
        return all;
    }

    private int find(int key) {
        int mask = keys.length - 1;
        for (int i = slot(key, mask); values[i] != null; i = (i + 1) & mask) {
            if (keys[i] == key) {
                return i;
            }
        }
        return -1;
    }

    /** Empties slot {@code i}, moving later entries of its probe run back so that each is still found. */
    private void removeAt(int i) {
        int mask = keys.length - 1;
        int gap = i;
        for (int j = (gap + 1) & mask; values[j] != null; j = (j + 1) & mask) {
            int home = slot(keys[j], mask);
            // the entry at j stays unless its home lies cyclically outside (gap, j]
            boolean stays = gap <= j ? gap < home && home <= j : gap < home || home <= j;
            if (!stays) {
                keys[gap] = keys[j];
                values[gap] = values[j];
                gap = j;
            }
        }
        values[gap] = null;
        size--;
    }

    private void grow() {
        int[] oldKeys = keys;
        Object[] oldValues = values;
        keys = new int[oldKeys.length * 2];
        values = new Object[oldValues.length * 2];
        int mask = keys.length - 1;
        for (int k = 0; k < oldKeys.length; k++) {
            if (oldValues[k] != null) {
                int i = slot(oldKeys[k], mask);
                while (values[i] != null) {
                    i = (i + 1) & mask;
                }
                keys[i] = oldKeys[k];
                values[i] = oldValues[k];
            }
        }
    }
}
