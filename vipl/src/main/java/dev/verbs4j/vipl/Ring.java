package dev.verbs4j.vipl;

import java.util.Iterator;
import java.util.NoSuchElementException;

/**
 * The FIFO of one work queue's descriptors, in post order: an array ring read by index on the
 * data path (no iterator), growing by doubling. Removal only at the head. Under the NIC lock.
 */
final class PostedQueue implements Iterable<Posted> {

    private Posted[] items = new Posted[16];
    private int head;
    private int size;

    boolean isEmpty() {
        return size == 0;
    }

    int size() {
        return size;
    }

    /** The {@code i}-th descriptor from the head. */
    Posted get(int i) {
        return items[(head + i) & (items.length - 1)];
    }

    Posted peekFirst() {
        return size == 0 ? null : items[head];
    }

    Posted peekLast() {
        return size == 0 ? null : get(size - 1);
    }

    void addLast(Posted p) {
        if (size == items.length) {
            Posted[] bigger = new Posted[items.length * 2];
            for (int i = 0; i < size; i++) {
                bigger[i] = get(i);
            }
            items = bigger;
            head = 0;
        }
        items[(head + size) & (items.length - 1)] = p;
        size++;
    }

    Posted pollFirst() {
        if (size == 0) {
            return null;
        }
        Posted p = items[head];
        items[head] = null;
        head = (head + 1) & (items.length - 1);
        size--;
        return p;
    }

    /** Iterates from the head (allocates an iterator: for the paths off the data path). */
    @Override
    public Iterator<Posted> iterator() {
        return new Iterator<>() {
            private int i;

            @Override
            public boolean hasNext() {
                return i < size;
            }

            @Override
            public Posted next() {
                if (i >= size) {
                    throw new NoSuchElementException();
                }
                return get(i++);
            }
        };
    }
}
