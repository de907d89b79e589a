package dev.verbs4j.verbs.internal;

import dev.verbs4j.verbs.VerbsException;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * The few C library calls the verbs layer needs to wait with a timeout and to wake waiters:
 * {@code poll}, {@code eventfd}, {@code read}, {@code write}, {@code close}, {@code fcntl}, and
 * the three {@code epoll} calls of the {@link dev.verbs4j.verbs.event.Readiness}; and {@code mmap}/{@code munmap}
 * for memory in huge pages.
 */
public final class Libc {

    /** {@code POLLIN}. */
    public static final short POLLIN = 1;
    private static final int EFD_CLOEXEC = 02000000;
    private static final int EFD_NONBLOCK = 04000;
    private static final int F_GETFL = 3;
    private static final int F_SETFL = 4;
    private static final int O_NONBLOCK = 04000;
    private static final int EINTR = 4;
    private static final int EPOLL_CLOEXEC = 02000000;

    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle POLL = Native.downcallWithErrno(symbol("poll"),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));
    private static final MethodHandle EVENTFD = Native.downcallWithErrno(symbol("eventfd"),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
    private static final MethodHandle WRITE = Native.downcallWithErrno(symbol("write"),
            FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG));
    private static final MethodHandle READ = Native.downcallWithErrno(symbol("read"),
            FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG));
    private static final MethodHandle CLOSE = Native.downcallWithErrno(symbol("close"),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));

    /** The {@link dev.verbs4j.verbs.event.Readiness}'s calls, bound when a virtual thread first waits. */
    private static final class Epoll {
        static final MethodHandle EPOLL_CREATE1 = Native.downcallWithErrno(symbol("epoll_create1"),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
        static final MethodHandle EPOLL_CTL = Native.downcallWithErrno(symbol("epoll_ctl"),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT,
                        ValueLayout.ADDRESS));
        static final MethodHandle EPOLL_WAIT = Native.downcallWithErrno(symbol("epoll_wait"),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT,
                        ValueLayout.JAVA_INT));
    }

    /** Huge-page mapping, bound when first used. */
    private static final class Mapping {
        static final MethodHandle MMAP = Native.downcallWithErrno(symbol("mmap"),
                FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT,
                        ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG));
        static final MethodHandle MUNMAP = Native.downcallWithErrno(symbol("munmap"),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG));
    }

    /**
     * {@code struct epoll_event}: {@code uint32_t events; epoll_data_t data;}, packed on x86-64
     * (12 bytes, data at offset 4), naturally aligned elsewhere (16 bytes, data at 8).
     */
    public static final long EPOLL_EVENT_SIZE;
    /** Offset of {@code data} in {@code struct epoll_event}. */
    public static final long EPOLL_DATA_OFFSET;

    static {
        String arch = System.getProperty("os.arch");
        boolean packed = "amd64".equals(arch) || "x86_64".equals(arch);
        EPOLL_EVENT_SIZE = packed ? 12 : 16;
        EPOLL_DATA_OFFSET = packed ? 4 : 8;
    }

    private static final MethodHandle FCNTL = Native.downcallWithErrno(symbol("fcntl"),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));

    private static final int PROT_READ_WRITE = 0x3;
    private static final int MAP_PRIVATE = 0x02;
    private static final int MAP_ANONYMOUS = 0x20;
    private static final int MAP_HUGETLB = 0x40000;

    private Libc() {
    }

    /**
     * {@code mmap(NULL, length, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS|MAP_HUGETLB, -1, 0)}:
     * private anonymous memory in huge pages of the default size, zeroed; its address.
     *
     * @throws VerbsException naming mmap's errno (ENOMEM: not enough free huge pages) and {@code what}
     */
    public static long mapHugePages(long length, String what) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment capture = Native.captureSegment(arena);
            MemorySegment p = (MemorySegment) Mapping.MMAP.invokeExact(capture, MemorySegment.NULL, length, PROT_READ_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0L);
            if (p.address() == -1L) {
                throw new VerbsException("mmap", Native.errno(capture), what);
            }
            return p.address();
        } catch (Throwable t) {
            throw Ibv.unchecked(t);
        }
    }

    /** {@code munmap(address, length)}; returns 0 or its errno. */
    public static int unmap(long address, long length) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment capture = Native.captureSegment(arena);
            int rc = (int) Mapping.MUNMAP.invokeExact(capture, MemorySegment.ofAddress(address), length);
            return rc == 0 ? 0 : Native.errno(capture);
        } catch (Throwable t) {
            throw Ibv.unchecked(t);
        }
    }

    private static MemorySegment symbol(String name) {
        return LINKER.defaultLookup().find(name).orElseThrow(() -> new IllegalStateException("libc lacks " + name));
    }

    /**
     * Waits until one of {@code fds} is readable or {@code timeoutMillis} pass (-1: forever),
     * retrying on EINTR. Returns the index of the first readable fd, or -1 on timeout.
     */
    public static int pollReadable(int[] fds, int timeoutMillis) {
        if (fds.length > PollBuffer.FDS || Thread.currentThread().isVirtual()) {
            try (Arena arena = Arena.ofConfined()) {
                return poll(fds, timeoutMillis, arena.allocate(8L * fds.length, 4), Native.captureSegment(arena));
            }
        }
        PollBuffer buffer = POLL_BUFFER.get();
        return poll(fds, timeoutMillis, buffer.pollFds, buffer.capture);
    }

    /**
     * Memory for one {@code poll(2)} call of a platform thread (the {@code pollfd} array and errno),
     * reused by its thread's later calls, so that waiting allocates nothing; freed with the
     * thread-local once the thread has ended.
     */
    private static final class PollBuffer {
        static final int FDS = 4;
        final MemorySegment pollFds;
        final MemorySegment capture;

        PollBuffer() {
            Arena arena = Arena.ofAuto();
            pollFds = arena.allocate(8L * FDS, 4);
            capture = Native.captureSegment(arena);
        }
    }

    private static final ThreadLocal<PollBuffer> POLL_BUFFER = ThreadLocal.withInitial(PollBuffer::new);

    private static int poll(int[] fds, int timeoutMillis, MemorySegment pfds, MemorySegment capture) {
        for (int i = 0; i < fds.length; i++) {
            pfds.set(ValueLayout.JAVA_INT, 8L * i, fds[i]);
            pfds.set(ValueLayout.JAVA_SHORT, 8L * i + 4, POLLIN);
            pfds.set(ValueLayout.JAVA_SHORT, 8L * i + 6, (short) 0);
        }
        int wait = timeoutMillis;
        // a finite wait reads the clock once, so that a signal (EINTR) does not restart the count
        long deadline = timeoutMillis > 0 ? System.nanoTime() + timeoutMillis * 1_000_000L : 0;
        try {
            while (true) {
                int n = (int) POLL.invokeExact(capture, pfds, (long) fds.length, wait);
                if (n < 0) {
                    int errno = Native.errno(capture);
                    if (errno != EINTR) {
                        throw new VerbsException("poll", errno, null);
                    }
                    if (timeoutMillis > 0) {
                        wait = (int) Math.max(0, (deadline - System.nanoTime()) / 1_000_000L);
                    }
                    continue;
                }
                if (n == 0) {
                    return -1;
                }
                for (int i = 0; i < fds.length; i++) {
                    if (pfds.get(ValueLayout.JAVA_SHORT, 8L * i + 6) != 0) {
                        return i;
                    }
                }
                return -1;
            }
        } catch (Throwable t) {
            throw Ibv.unchecked(t);
        }
    }

    /** A new non-blocking, close-on-exec eventfd. */
    public static int eventfd() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment capture = Native.captureSegment(arena);
            int fd = (int) EVENTFD.invokeExact(capture, 0, EFD_CLOEXEC | EFD_NONBLOCK);
            if (fd < 0) {
                throw new VerbsException("eventfd", Native.errno(capture), null);
            }
            return fd;
        } catch (Throwable t) {
            throw Ibv.unchecked(t);
        }
    }

    /** Adds 1 to an eventfd, making it readable. */
    public static void signal(int eventFd) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment value = arena.allocate(ValueLayout.JAVA_LONG);
            value.set(ValueLayout.JAVA_LONG, 0, 1L);
            long ignored = (long) WRITE.invokeExact(Native.captureSegment(arena), eventFd, value, 8L);
        } catch (Throwable t) {
            throw Ibv.unchecked(t);
        }
    }



    /** Resets a non-blocking eventfd to not readable (reads its counter; nothing happens when it is zero). */
    public static void drain(int eventFd) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment value = arena.allocate(ValueLayout.JAVA_LONG);
            long ignored = (long) READ.invokeExact(Native.captureSegment(arena), eventFd, value, 8L);
        } catch (Throwable t) {
            throw Ibv.unchecked(t);
        }
    }

    /** Closes a file descriptor. */
    public static void close(int fd) {
        try (Arena arena = Arena.ofConfined()) {
            int ignored = (int) CLOSE.invokeExact(Native.captureSegment(arena), fd);
        } catch (Throwable t) {
            throw Ibv.unchecked(t);
        }
    }

    /** Switches {@code fd} to non-blocking (or back). */
    public static void setNonBlocking(int fd, boolean nonBlocking) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment capture = Native.captureSegment(arena);
            int flags = (int) FCNTL.invokeExact(capture, fd, F_GETFL, 0);
            if (flags < 0) {
                throw new VerbsException("fcntl", Native.errno(capture), "F_GETFL of fd " + fd);
            }
            flags = nonBlocking ? flags | O_NONBLOCK : flags & ~O_NONBLOCK;
            if ((int) FCNTL.invokeExact(capture, fd, F_SETFL, flags) < 0) {
                throw new VerbsException("fcntl", Native.errno(capture), "F_SETFL of fd " + fd);
            }
        } catch (Throwable t) {
            throw Ibv.unchecked(t);
        }
    }

    /** A new close-on-exec epoll instance. */
    public static int epollCreate() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment capture = Native.captureSegment(arena);
            int fd = (int) Epoll.EPOLL_CREATE1.invokeExact(capture, EPOLL_CLOEXEC);
            if (fd < 0) {
                throw new VerbsException("epoll_create1", Native.errno(capture), null);
            }
            return fd;
        } catch (Throwable t) {
            throw Ibv.unchecked(t);
        }
    }

    /**
     * {@code epoll_ctl(epfd, op, fd, {events, data})}; returns 0, or the errno of a failure (the
     * caller decides which failures are errors).
     */
    public static int epollCtl(int epfd, int op, int fd, int events, long data) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment event = arena.allocate(EPOLL_EVENT_SIZE, 8);
            event.set(ValueLayout.JAVA_INT, 0, events);
            event.set(ValueLayout.JAVA_LONG_UNALIGNED, EPOLL_DATA_OFFSET, data);
            MemorySegment capture = Native.captureSegment(arena);
            int rc = (int) Epoll.EPOLL_CTL.invokeExact(capture, epfd, op, fd, event);
            return rc == 0 ? 0 : Native.errno(capture);
        } catch (Throwable t) {
            throw Ibv.unchecked(t);
        }
    }

    /**
     * {@code epoll_wait} into {@code events} (room for {@code max} events) for up to {@code
     * timeoutMillis} (-1: no limit); returns the number of events, 0 on timeout or EINTR.
     */
    public static int epollWait(int epfd, MemorySegment events, int max, int timeoutMillis, MemorySegment capture) {
        try {
            int n = (int) Epoll.EPOLL_WAIT.invokeExact(capture, epfd, events, max, timeoutMillis);
            if (n < 0) {
                int errno = Native.errno(capture);
                if (errno == EINTR) {
                    return 0;
                }
                throw new VerbsException("epoll_wait", errno, null);
            }
            return n;
        } catch (Throwable t) {
            throw Ibv.unchecked(t);
        }
    }
}
