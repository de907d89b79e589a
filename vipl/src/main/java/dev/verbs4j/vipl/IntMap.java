package dev.verbs4j.vipl;

import java.util.ArrayList;
import java.util.List;

/**
 * A map from {@code int} keys to non-null values, by open addressing with linear probing, so that
 * a lookup on the data path (a memory handle, a queue pair number) boxes nothing and allocates
 * nothing. Not thread-safe: used under the NIC lock.
 */
final class IntMap<V> {

    private int[] keys;
    private Object[] values;
    private int size;

    IntMap() {
        keys = new int[16];
        values = new Object[16];
    }

    private static int slot(int key, int mask) {
        int h = key * 0x9E3779B9;
        return (h ^ (h >>> 16)) & mask;
    }

    /** The value of {@code key}, or null. */
    @SuppressWarnings("unchecked")
    V get(int key) {
        int mask = keys.length - 1;
        for (int i = slot(key, mask); ; i = (i + 1) & mask) {
            Object v = values[i];
            if (v == null) {
                return null;
            }
            if (keys[i] == key) {
                return (V) v;
            }
        }
    }

    /** Maps {@code key} to {@code value} (not null); returns the previous value, or null. */
    @SuppressWarnings("unchecked")
    V put(int key, V value) {
        if (value == null) {
            throw new NullPointerException("value");
        }
        if ((size + 1) * 4 > keys.length * 3) {
            grow();
        }
        int mask = keys.length - 1;
        for (int i = slot(key, mask); ; i = (i + 1) & mask) {
            Object v = values[i];
            if (v == null) {
                keys[i] = key;
                values[i] = value;
                size++;
                return null;
            }
            if (keys[i] == key) {
                values[i] = value;
                return (V) v;
            }
        }
    }

    /** Removes {@code key}; returns its value, or null. */
    @SuppressWarnings("unchecked")
    V remove(int key) {
        int mask = keys.length - 1;
        int i = slot(key, mask);
        while (true) {
            Object v = values[i];
            if (v == null) {
                return null;
            }
            if (keys[i] == key) {
                break;
            }
            i = (i + 1) & mask;
        }
        V removed = (V) values[i];
        // backward-shift deletion: move later entries of the probe run into the gap
        int gap = i;
        for (int j = (gap + 1) & mask; values[j] != null; j = (j + 1) & mask) {
            int home = slot(keys[j], mask);
            // the entry at j may move to the gap unless its home lies cyclically in (gap, j]
            boolean stays = gap <= j ? gap < home && home <= j : gap < home || home <= j;
            if (!stays) {
                keys[gap] = keys[j];
                values[gap] = values[j];
                gap = j;
            }
        }
        values[gap] = null;
        size--;
        return removed;
    }

    int size() {
        return size;
    }

    void clear() {
        java.util.Arrays.fill(values, null);
        size = 0;
    }

    /** A snapshot of the values (allocates; not for the data path). */
    @SuppressWarnings("unchecked")
    List<V> values() {
        List<V> all = new ArrayList<>(size);
        for (Object v : values) {
            if (v != null) {
                all.add((V) v);
            }
        }
        return all;
    }

    private void grow() {
        int[] oldKeys = keys;
        Object[] oldValues = values;
        keys = new int[oldKeys.length * 2];
        values = new Object[oldValues.length * 2];
        size = 0;
        for (int i = 0; i < oldKeys.length; i++) {
            if (oldValues[i] != null) {
                reinsert(oldKeys[i], oldValues[i]);
            }
        }
    }

    private void reinsert(int key, Object value) {
        int mask = keys.length - 1;
        int i = slot(key, mask);
        while (values[i] != null) {
            i = (i + 1) & mask;
        }
        keys[i] = key;
        values[i] = value;
        size++;
    }
}
