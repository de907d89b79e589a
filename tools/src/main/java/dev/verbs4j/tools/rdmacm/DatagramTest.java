package dev.verbs4j.tools.rdmacm;

import dev.verbs4j.rdmacm.CmEvent;
import dev.verbs4j.rdmacm.CmId;
import dev.verbs4j.rdmacm.EventChannel;
import dev.verbs4j.rdmacm.PortSpace;
import dev.verbs4j.verbs.Errno;
import dev.verbs4j.verbs.VerbsException;
import dev.verbs4j.verbs.WorkCompletions;
import dev.verbs4j.tools.Getopt;

import java.io.PrintStream;
import java.time.Duration;

/**
 * What librdmacm's datagram examples (udaddy, mckey) have in common: the options for the number
 * of ids, messages and their size and the port space, one {@link DatagramNode} per id, the loop
 * over the connection manager's events until every id is set up, and the wait for each node's
 * completions. Each prints and returns the C programs' statuses (0, or a negative errno).
 */
abstract class DatagramTest {

    /** The Global Routing Header in front of every datagram received. */
    static final int GRH = 40;
    static final Duration ROUTE_TIMEOUT = Duration.ofMillis(2000);
    static final Duration EVENT_WAIT = Duration.ofSeconds(60);
    private static final long POLL_NANOS = 60_000_000_000L;

    final PrintStream out;
    final PrintStream err;
    /** The program's name, the prefix of its messages. */
    final String name;
    int connections = 1;
    int messageSize = 100;
    int messageCount = 10;
    PortSpace portSpace = PortSpace.UDP;
    DatagramNode[] nodes;
    int connectsLeft;

    DatagramTest(String name, PrintStream out, PrintStream err) {
        this.name = name;
        this.out = out;
        this.err = err;
    }

    /** What a node's completions are checked with: a status, 0 to go on. */
    interface CompletionCheck {
        /** Looks at the {@code n} completions in {@code wcs}, the first being number {@code done} of the node. */
        int check(DatagramNode node, WorkCompletions wcs, int done, int n);
    }

    /**
     * Runs the program: reads the options, makes the nodes and the event channel, runs the test
     * and prints its closing lines; the exit status.
     */
    final int execute(String[] args, String optstring) {
        if (!readOptions(args, optstring) || !optionsComplete()) {
            return 1;
        }
        makeNodes();
        EventChannel channel = openChannel();
        if (channel == null) {
            return 1;
        }
        int ret;
        try {
            ret = test(channel);
            out.print("test complete\n");
            afterTest();
            destroyNodes();
        } finally {
            afterTest();
            channel.close();
        }
        out.print("return status " + ret + "\n");
        return ret;
    }

    /** Takes one of the program's own options; false (after the message or the usage) to exit with 1. */
    abstract boolean option(int option, String argument);

    /** Whether the options read are enough to run; false (after the message) to exit with 1. */
    boolean optionsComplete() {
        return true;
    }

    /** The test over the nodes, whose ids it creates on {@code channel}; the status. */
    abstract int test(EventChannel channel);

    /** What ends with the test, before the nodes are destroyed. */
    void afterTest() {
    }

    /**
     * Reads {@code args} as getopt with {@code optstring} does: {@code -c}, {@code -C}, {@code -S}
     * and {@code -p} here, the others by {@link #option}; false when the program is to exit with 1.
     */
    private boolean readOptions(String[] args, String optstring) {
        Getopt opts = new Getopt(name, args, optstring);
        for (int c; (c = opts.next(err)) != -1; ) {
            String a = opts.argument();
            switch (c) {
                case 'c' -> connections = atoi(a);
                case 'C' -> messageCount = atoi(a);
                case 'S' -> messageSize = atoi(a);
                case 'p' -> {
                    try {
                        portSpace = PortSpace.of(Getopt.strtol(a));
                    } catch (IllegalArgumentException e) {
                        err.print(name + ": unknown port space " + a + "\n");
                        return false;
                    }
                }
                default -> {
                    if (!option(c, a)) {
                        return false;
                    }
                }
            }
        }
        return true;
    }

    /** Makes the nodes, {@code connections} of them (none for a negative count), with no ids yet. */
    private void makeNodes() {
        connections = Math.max(connections, 0);
        connectsLeft = connections;
        nodes = new DatagramNode[connections];
        for (int i = 0; i < connections; i++) {
            nodes[i] = new DatagramNode(this);
        }
    }

    /** The event channel; null (after the message) when it cannot be made. */
    private EventChannel openChannel() {
        try {
            return EventChannel.create();
        } catch (VerbsException e) {
            err.print(e.errno() == Errno.ENODEV ? "No RDMA devices were detected\n"
                    : "failed to create RDMA CM event channel: " + Errno.message(e.errno()) + "\n");
            return null;
        }
    }

    /** Frees every node's resources and id. */
    private void destroyNodes() {
        for (DatagramNode n : nodes) {
            n.destroy();
        }
    }

    /** Takes connection manager events until every node is set up or one fails; the status. */
    int connectEvents(EventChannel channel) {
        int ret = 0;
        while (connectsLeft > 0 && ret == 0) {
            CmEvent event = channel.getEvent(EVENT_WAIT);
            if (event == null) {
                out.print(name + ": no connection manager event within " + EVENT_WAIT.toSeconds() + " s\n");
                return -Errno.ETIMEDOUT;
            }
            ret = handle(event);
        }
        return ret;
    }

    /** Handles one connection manager event while the nodes are set up; the status. */
    abstract int handle(CmEvent event);

    /** An error event: its message; one node fewer to wait for; the event's status. */
    int eventError(CmEvent event) {
        out.print(name + ": event: " + event.type() + ", error: " + event.status() + "\n");
        connectsLeft--;
        return event.status();
    }

    /** The node of {@code id}. */
    DatagramNode nodeOf(CmId id) {
        for (DatagramNode n : nodes) {
            if (n.id == id) {
                return n;
            }
        }
        throw new IllegalStateException("an event for an unknown id " + id);
    }

    /**
     * Takes {@code -C} completions of every set-up node, each batch shown to {@code check}, within
     * a minute per node; {@code what} names them in the message when some are missing.
     */
    int pollCqs(String what, CompletionCheck check) {
        try (WorkCompletions wcs = new WorkCompletions(8)) {
            for (DatagramNode node : nodes) {
                if (!node.connected) {
                    continue;
                }
                long deadline = System.nanoTime() + POLL_NANOS;
                for (int done = 0, n; done < messageCount; done += n) {
                    try {
                        n = node.cq.poll(wcs);
                    } catch (VerbsException e) {
                        out.print(name + ": failed polling CQ: " + -e.errno() + "\n");
                        return -e.errno();
                    }
                    int ret = check.check(node, wcs, done, n);
                    if (ret != 0) {
                        return ret;
                    }
                    if (n == 0) {
                        if (System.nanoTime() > deadline) {
                            out.print(name + ": " + (messageCount - done) + " " + what + " missing after "
                                    + POLL_NANOS / 1_000_000_000L + " s\n");
                            return -Errno.ETIMEDOUT;
                        }
                        if (Thread.currentThread().isInterrupted()) {
                            return -Errno.EINTR;
                        }
                        Thread.onSpinWait();
                    }
                }
            }
        }
        return 0;
    }

    /** Waits (a minute at most) until {@code node}'s completion queue has a completion; false if none came. */
    boolean awaitCompletion(DatagramNode node, WorkCompletions wcs) {
        long deadline = System.nanoTime() + POLL_NANOS;
        while (node.cq.poll(wcs) == 0) {
            if (System.nanoTime() > deadline || Thread.currentThread().isInterrupted()) {
                return false;
            }
            Thread.onSpinWait();
        }
        return true;
    }

    /** Prints {@code what} and the error's text, as perror() does. */
    void perror(String what, VerbsException e) {
        err.print(what + ": " + Errno.message(e.errno()) + "\n");
    }

    /** C's atoi for the counts: an optional sign and the digits after it; 0 when there are none. */
    static int atoi(String s) {
        String t = s.strip();
        int i = 0;
        if (i < t.length() && (t.charAt(i) == '-' || t.charAt(i) == '+')) {
            i++;
        }
        int start = i;
        while (i < t.length() && Character.isDigit(t.charAt(i))) {
            i++;
        }
        try {
            return i == start ? 0 : Integer.parseInt(t.substring(0, i));
        } catch (NumberFormatException e) {
            return 0;
        }
    }
}
