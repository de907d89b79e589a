package dev.verbs4j.tools.vipl;

import dev.verbs4j.vipl.VipDescriptor;
import dev.verbs4j.vipl.VipMemHandle;
import dev.verbs4j.vipl.VipReturn;

import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.util.Locale;

/**
 * {@code vipl-bw}: VIPL send bandwidth. The client streams sends of SIZE bytes, keeping up to
 * WINDOW descriptors posted; the server keeps WINDOW receives posted and returns credits (a small
 * send per half window re-posted), then a DONE message once all arrived. Per size a warm-up phase,
 * then the timed one: from the first post to the DONE message, by {@link System#nanoTime}; the
 * client prints bytes, iterations, MB/s (MB = 2^20 bytes) and messages/s. Descriptors and buffers
 * are allocated and registered once, in memory the tool's {@link Endpoint} owns.
 */
public final class ViplBw {

    private static final String PROGRAM = "vipl-bw";
    /** Control receives the client keeps posted (credits and DONE; at most three are outstanding). */
    private static final int CONTROL_RECVS = 8;
    /** Control sends the server may have in flight. */
    private static final int CONTROL_SENDS = 8;
    private static final int CONTROL_SLOT = 64;

    private ViplBw() {
    }

    /** Runs the tool; returns its exit status: 0 success, 1 failure at run time, 2 bad options. */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        return Tools.run(true, args, out, err, ViplBw::server, ViplBw::client);
    }

    // ---- server ----

    /** The server's state: its receive window and its ring of control sends. */
    private static final class Server {
        final Endpoint e;
        final MemorySegment ctl;
        final VipMemHandle ctlH;
        final VipDescriptor[] ctlSends = new VipDescriptor[CONTROL_SENDS];
        int ctlNext;
        int ctlOutstanding;

        Server(Endpoint e) {
            this.e = e;
            ctl = e.allocate((long) CONTROL_SENDS * CONTROL_SLOT);
            ctlH = e.handle(ctl);
            for (int i = 0; i < CONTROL_SENDS; i++) {
                ctlSends[i] = e.descriptor();
            }
        }

        void control(int type, long value) {
            while (ctlOutstanding > 0 && e.poll(false, "a control message")) {
                ctlOutstanding--;
            }
            if (ctlOutstanding == CONTROL_SENDS) {
                e.await(false, "a control message");
                ctlOutstanding--;
            }
            int slot = ctlNext++ % CONTROL_SENDS;
            Endpoint.putControl(ctl, (long) slot * CONTROL_SLOT, type, value);
            e.post(false, ctlSends[slot], ctl, ctlH, (long) slot * CONTROL_SLOT, 16);
            ctlOutstanding++;
        }

        void drain() {
            while (ctlOutstanding > 0) {
                e.await(false, "a control message");
                ctlOutstanding--;
            }
        }
    }

    private static void server(Endpoint e, PrintStream out) {
        ToolOptions o = e.o;
        e.createVi(o.level);
        MemorySegment planBuf = e.allocate(Plan.MAX_BYTES);
        VipDescriptor planRecv = e.descriptor();
        e.post(true, planRecv, planBuf, e.handle(planBuf), 0, Plan.MAX_BYTES);
        Server s = new Server(e);
        e.acceptClient(PROGRAM, out);

        VipDescriptor d = e.await(true, "the client's plan");
        Plan plan;
        try {
            plan = Plan.read(planBuf, d.length(), Plan.BW);
        } catch (IllegalArgumentException ex) {
            s.control(Endpoint.NACK, 0);
            throw Endpoint.Failure.refusal(ex.getMessage(), s::drain);
        }
        int w = plan.window();
        int max = plan.maxSize();
        MemorySegment data = e.allocate((long) w * max);
        VipMemHandle dataH = e.handle(data);
        VipDescriptor[] recv = new VipDescriptor[w];
        for (int i = 0; i < w; i++) {
            recv[i] = e.descriptor();
            e.post(true, recv[i], data, dataH, (long) i * max, max);
        }
        s.control(Endpoint.ACK, 0);
        MemorySegment pattern = plan.verify() ? Endpoint.pattern(e.arena, max) : null;
        int threshold = Math.max(1, w / 2);
        long head = 0;   // receives complete in post order and are re-posted in that order: a ring
        for (int size : plan.sizes()) {
            for (int phase = 0; phase < 2; phase++) {
                int n = phase == 0 ? plan.warmup() : plan.iters();
                if (n == 0) {
                    continue;
                }
                int pending = 0;
                for (int m = 0; m < n; m++) {
                    String what = "message " + m + " of " + n + " of size " + size;
                    d = e.await(true, what);
                    int slot = (int) (head++ % w);
                    if (d.address() != recv[slot].address() || d.length() != size) {
                        throw new Endpoint.Failure(what + ": " + d.length() + " bytes in " + d);
                    }
                    if (pattern != null) {
                        // the client sends message m of a phase from its slot m % window
                        Endpoint.verify(pattern, data, (long) slot * max, size, m % w, what);
                    }
                    e.post(true, recv[slot], data, dataH, (long) slot * max, max);
                    if (++pending >= threshold && m + 1 < n) {
                        s.control(Endpoint.CREDIT, pending);
                        pending = 0;
                    }
                }
                s.control(Endpoint.DONE, n);
            }
            out.printf(Locale.ROOT, "# server: %d bytes, %d messages (+%d warm-up)%s%n", size, plan.iters(), plan.warmup(),
                    pattern != null ? ", payload verified" : "");
        }
        s.drain();
    }

    // ---- client ----

    /** The client's state: send window, credits, control receives. */
    private static final class Client {
        final Endpoint e;
        final int w;
        final int max;
        final MemorySegment data;
        final VipMemHandle dataH;
        final VipDescriptor[] sends;
        final MemorySegment ctl;
        final VipMemHandle ctlH;
        final VipDescriptor[] ctlRecvs = new VipDescriptor[CONTROL_RECVS];
        int credits;
        int outstanding;
        long doneValue = -1;

        Client(Endpoint e, int w, int max) {
            this.e = e;
            this.w = w;
            this.max = max;
            data = e.allocate((long) w * max);
            dataH = e.handle(data);
            sends = new VipDescriptor[w];
            for (int i = 0; i < w; i++) {
                sends[i] = e.descriptor();
            }
            ctl = e.allocate((long) CONTROL_RECVS * CONTROL_SLOT);
            ctlH = e.handle(ctl);
            for (int i = 0; i < CONTROL_RECVS; i++) {
                ctlRecvs[i] = e.descriptor();
                postControl(i);
            }
        }

        void postControl(int i) {
            e.post(true, ctlRecvs[i], ctl, ctlH, (long) i * CONTROL_SLOT, CONTROL_SLOT);
        }

        /** Handles the control message in {@code e.out}: credits, DONE, ACK/NACK; re-posts its receive. */
        int handleControl() {
            VipDescriptor d = e.out;
            int i = -1;
            for (int k = 0; k < CONTROL_RECVS; k++) {
                if (ctlRecvs[k].address() == d.address()) {
                    i = k;
                }
            }
            if (i < 0 || d.length() != 16) {
                throw new Endpoint.Failure("an unexpected message from the server (" + d.length() + " bytes)");
            }
            long off = (long) i * CONTROL_SLOT;
            int type = Endpoint.controlType(ctl, off);
            long value = Endpoint.controlValue(ctl, off);
            postControl(i);
            switch (type) {
                case Endpoint.CREDIT -> credits += (int) value;
                case Endpoint.DONE -> doneValue = value;
                case Endpoint.ACK, Endpoint.NACK -> {
                }
                default -> throw new Endpoint.Failure("an unknown control message 0x" + Integer.toHexString(type));
            }
            return type;
        }

        /** Streams {@code n} sends of {@code size} bytes within the credits; returns once the server's DONE came. */
        void phase(int n, int size) {
            credits = w;            // the server has its whole window posted again
            doneValue = -1;
            int sent = 0;
            long deadline = e.deadline();
            int idle = 0;
            while (doneValue < 0) {
                boolean progress = false;
                while (sent < n && credits > 0 && outstanding < w) {
                    int slot = sent % w;
                    e.post(false, sends[slot], data, dataH, (long) slot * max, size);
                    sent++;
                    credits--;
                    outstanding++;
                    progress = true;
                }
                while (outstanding > 0 && e.poll(false, "send " + (sent - outstanding) + " of size " + size)) {
                    outstanding--;
                    progress = true;
                }
                // nothing after the DONE: the server may disconnect at once, flushing the rest
                while (doneValue < 0 && e.poll(true, "credits from the server")) {
                    handleControl();
                    progress = true;
                }
                if (progress) {
                    deadline = e.deadline();
                    idle = 0;
                } else if (e.o.waitMode) {
                    if (outstanding == w) {
                        e.await(false, "send " + (sent - outstanding) + " of size " + size);
                        outstanding--;
                    } else {
                        e.await(true, sent < n ? "credits from the server" : "the server's DONE");
                        handleControl();
                    }
                    deadline = e.deadline();
                } else if ((++idle & 255) == 0) {
                    e.checkDeadline(deadline, "VipRecvDone", VipReturn.NOT_DONE,
                            sent < n ? "credits from the server (" + sent + " of " + n + " sent)" : "the server's DONE");
                }
            }
            if (doneValue != n) {
                throw new Endpoint.Failure("the server received " + doneValue + " messages, " + n + " were sent");
            }
            while (outstanding > 0) {
                e.await(false, "the last sends of size " + size);
                outstanding--;
            }
        }
    }

    private static void client(Endpoint e, PrintStream out) {
        ToolOptions o = e.o;
        Plan plan = Plan.of(o);
        int max = plan.maxSize();
        e.createVi(o.level);
        Client c = new Client(e, plan.window(), max);
        MemorySegment planBuf = e.allocate(Plan.MAX_BYTES);
        VipDescriptor planSend = e.descriptor();
        MemorySegment pattern = Endpoint.pattern(e.arena, max);
        for (int slot = 0; slot < plan.window(); slot++) {
            MemorySegment.copy(pattern, slot % Endpoint.PATTERN_SHIFT, c.data, (long) slot * max, max);
        }
        e.connect(o.server);
        e.post(false, planSend, planBuf, e.handle(planBuf), 0, plan.write(planBuf));
        e.await(false, "the plan");
        e.await(true, "the server's acknowledgement");
        if (c.handleControl() != Endpoint.ACK) {
            throw new Endpoint.Failure("the server refused the plan (see its messages)");
        }
        out.printf("# %s: %s %s -> %s, discriminator %d, %s, window %d, %s%s%n", PROGRAM, e.deviceName,
                e.localAddress.inetAddress().getHostAddress(), o.server, o.port, ToolOptions.name(o.level), plan.window(),
                o.waitMode ? "waiting" : "polling", o.cq ? ", receive CQ" : "");
        out.printf("%-10s %-14s %-14s %s%n", "#bytes", "#iterations", "MB/s", "msg/s");
        for (int size : plan.sizes()) {
            if (plan.warmup() > 0) {
                c.phase(plan.warmup(), size);
            }
            long t0 = System.nanoTime();
            c.phase(plan.iters(), size);
            double seconds = (System.nanoTime() - t0) / 1e9;
            double mbs = (double) plan.iters() * size / (1 << 20) / seconds;
            out.printf(Locale.ROOT, mbs >= 0.01 ? "%-10d %-14d %-14.2f %.0f%n" : "%-10d %-14d %-14.6f %.0f%n", size, plan.iters(),
                    mbs, plan.iters() / seconds);
        }
    }
}
