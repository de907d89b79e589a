package dev.verbs4j.naaice;

/**
 * The connections of one shared completion queue by queue pair number (a {@link ServerConnection}
 * in the server), looked up for every completion without boxing the number: open addressing with
 * linear probing over an {@code int} array, which doubles when half full. Heap memory only; not
 * thread-safe (the caller's lock guards it).
 */
final class QueuePairTable<T> {

    private int[] keys;
    private Object[] values;
    private int size;

    /** An empty table for about {@code expected} connections before it grows. */
    QueuePairTable(int expected) {
        int n = 8;
        while (n < 2 * expected) {
            n <<= 1;
        }
        keys = new int[n];
        values = new Object[n];
    }

    int size() {
        return size;
    }

    /** The connection of queue pair {@code qpNum}, or null. */
    @SuppressWarnings("unchecked")
    T get(int qpNum) {
        int mask = keys.length - 1;
        for (int i = slot(qpNum, mask); values[i] != null; i = (i + 1) & mask) {
            if (keys[i] == qpNum) {
                return (T) values[i];
            }
        }
        return null;
    }

    /** Maps {@code qpNum} to {@code connection} (not null), replacing what it mapped to. */
    void put(int qpNum, T connection) {
        if (connection == null) {
            throw new IllegalArgumentException("connection is null");
        }
        if (2 * (size + 1) > keys.length) {
            grow();
        }
        insert(qpNum, connection);
    }

    private void insert(int qpNum, Object connection) {
        int mask = keys.length - 1;
        int i = slot(qpNum, mask);
        while (values[i] != null) {
            if (keys[i] == qpNum) {
                values[i] = connection;
                return;
            }
            i = (i + 1) & mask;
        }
        keys[i] = qpNum;
        values[i] = connection;
        size++;
    }

    /** Removes {@code qpNum} when it maps to {@code connection}; whether it did. */
    boolean remove(int qpNum, T connection) {
        int mask = keys.length - 1;
        int i = slot(qpNum, mask);
        while (values[i] != null && keys[i] != qpNum) {
            i = (i + 1) & mask;
        }
        if (values[i] != connection || connection == null) {
            return false;
        }
        values[i] = null;
        size--;
        // shift back the entries of the run after the hole that would no longer be found
        for (int j = (i + 1) & mask; values[j] != null; j = (j + 1) & mask) {
            int home = slot(keys[j], mask);
            boolean movable = i <= j ? (home <= i || home > j) : (home <= i && home > j);
            if (movable) {
                keys[i] = keys[j];
                values[i] = values[j];
                values[j] = null;
                i = j;
            }
        }
        return true;
    }

    private void grow() {
        int[] k = keys;
        Object[] v = values;
        keys = new int[2 * k.length];
        values = new Object[2 * k.length];
        size = 0;
        for (int i = 0; i < k.length; i++) {
            if (v[i] != null) {
                insert(k[i], v[i]);
            }
        }
    }

    private static int slot(int qpNum, int mask) {
        int h = qpNum * 0x9E3779B9;
        return (h ^ h >>> 16) & mask;
    }
}
