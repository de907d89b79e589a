package dev.verbs4j.vipl;

import java.util.Arrays;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.function.Predicate;

/**
 * A FIFO on an array ring, read by index on the data path (no iterator), growing by doubling:
 * a work queue's descriptors in post order, a completion queue's entries. Not thread-safe: used
 * under the NIC lock.
 */
final class Ring<T> implements Iterable<T> {

    private Object[] items = new Object[16];
    private int head;
    private int size;

    boolean isEmpty() {
        return size == 0;
    }

    int size() {
        return size;
    }

    /** The {@code i}-th element from the head. */
    @SuppressWarnings("unchecked")
    T get(int i) {
        return (T) items[(head + i) & (items.length - 1)];
    }

    T peekFirst() {
        return size == 0 ? null : get(0);
    }

    T peekLast() {
        return size == 0 ? null : get(size - 1);
    }

    void addLast(T item) {
        if (size == items.length) {
            Object[] bigger = new Object[items.length * 2];
            for (int i = 0; i < size; i++) {
                bigger[i] = get(i);
            }
            items = bigger;
            head = 0;
        }
        items[(head + size) & (items.length - 1)] = item;
        size++;
    }

    T pollFirst() {
        if (size == 0) {
            return null;
        }
        T item = get(0);
        items[head] = null;
        head = (head + 1) & (items.length - 1);
        size--;
        return item;
    }

    /** Removes the elements that match, keeping the others in order. */
    void removeIf(Predicate<? super T> match) {
        int kept = 0;
        for (int i = 0; i < size; i++) {
            T item = get(i);
            if (!match.test(item)) {
                items[(head + kept++) & (items.length - 1)] = item;
            }
        }
        for (int i = kept; i < size; i++) {
            items[(head + i) & (items.length - 1)] = null;
        }
        size = kept;
    }

    void clear() {
        Arrays.fill(items, null);
        head = 0;
        size = 0;
    }

    /** Iterates from the head (allocates an iterator: for the paths off the data path). */
    @Override
    public Iterator<T> iterator() {
        return new Iterator<>() {
            private int i;

            @Override
            public boolean hasNext() {
                return i < size;
            }

            @Override
            public T next() {
                if (i >= size) {
                    throw new NoSuchElementException();
                }
                return get(i++);
            }
        };
    }
}
