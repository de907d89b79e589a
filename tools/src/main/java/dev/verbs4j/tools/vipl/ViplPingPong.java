package dev.verbs4j.tools.vipl;

import dev.verbs4j.vipl.VipDescriptor;
import dev.verbs4j.vipl.VipMemHandle;

import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.Locale;

/**
 * {@code vipl-pingpong}: the classic VIA latency test on the VIPL API. The client sends SIZE bytes,
 * the server's pre-posted receive completes and the server sends the same bytes back from the
 * buffer they arrived in; the client times each round trip with {@link System#nanoTime} and prints
 * per size the average and median one-way latency (round trip / 2). Both sides verify the payload.
 * Descriptors and buffers are allocated and registered once, in memory the tool's {@link Endpoint}
 * owns; the loop only re-forms and re-posts them.
 */
public final class ViplPingPong {

    private static final String PROGRAM = "vipl-pingpong";

    private ViplPingPong() {
    }

    /** Runs the tool; returns its exit status: 0 success, 1 failure at run time, 2 bad options. */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        return Tools.run(false, args, out, err, ViplPingPong::server, ViplPingPong::client);
    }

    // ---- server ----

    private static void server(Endpoint e, PrintStream out) {
        ToolOptions o = e.o;
        int max = ToolOptions.MAX_SIZE;
        e.createVi(o.level);
        MemorySegment buf = e.allocate(2L * max);
        VipMemHandle bufH = e.handle(buf);
        MemorySegment ctl = e.allocate(4096);
        VipMemHandle ctlH = e.handle(ctl);
        VipDescriptor[] recv = {e.descriptor(), e.descriptor()};
        VipDescriptor send = e.descriptor();
        for (int i = 0; i < 2; i++) {
            e.post(true, recv[i], buf, bufH, (long) i * max, max);
        }
        e.acceptClient(PROGRAM, out);

        VipDescriptor d = e.await(true, "the client's plan");
        int at = which(recv, d);
        Plan plan;
        try {
            plan = Plan.read(buf.asSlice((long) at * max), d.length(), Plan.PINGPONG);
        } catch (IllegalArgumentException ex) {
            Endpoint.putControl(ctl, 0, Endpoint.NACK, 0);
            e.post(false, send, ctl, ctlH, 0, 16);
            throw Endpoint.Failure.refusal(ex.getMessage(), () -> e.await(false, "the refusal"));
        }
        e.post(true, recv[at], buf, bufH, (long) at * max, max);
        Endpoint.putControl(ctl, 0, Endpoint.ACK, 0);
        e.post(false, send, ctl, ctlH, 0, 16);
        e.await(false, "the plan's acknowledgement");

        MemorySegment pattern = Endpoint.pattern(e.arena, plan.maxSize());
        int total = plan.warmup() + plan.iters();
        for (int size : plan.sizes()) {
            for (int k = 0; k < total; k++) {
                d = e.await(true, "ping " + k + " of size " + size);
                at = which(recv, d);
                if (d.length() != size) {
                    throw new Endpoint.Failure("ping " + k + " of size " + size + " brought " + d.length() + " bytes");
                }
                // echo from where it arrived; the other receive is posted already
                e.post(false, send, buf, bufH, (long) at * max, size);
                Endpoint.verify(pattern, buf, (long) at * max, size, k, "ping " + k + " of size " + size);
                e.await(false, "pong " + k + " of size " + size);
                e.post(true, recv[at], buf, bufH, (long) at * max, max);
            }
            out.printf(Locale.ROOT, "# server: %d bytes, %d iterations (+%d warm-up), payload verified%n", size,
                    plan.iters(), plan.warmup());
        }
    }

    private static int which(VipDescriptor[] ds, VipDescriptor d) {
        for (int i = 0; i < ds.length; i++) {
            if (ds[i].address() == d.address()) {
                return i;
            }
        }
        throw new IllegalStateException("an unknown descriptor completed: " + d);
    }

    // ---- client ----

    private static void client(Endpoint e, PrintStream out) {
        ToolOptions o = e.o;
        Plan plan = Plan.of(o);
        int max = plan.maxSize();
        e.createVi(o.level);
        MemorySegment recvBuf = e.allocate(Math.max(max, 64));
        VipMemHandle recvH = e.handle(recvBuf);
        MemorySegment sendBuf = e.allocate(Math.max(max, Plan.MAX_BYTES));
        VipMemHandle sendH = e.handle(sendBuf);
        VipDescriptor recv = e.descriptor();
        VipDescriptor send = e.descriptor();
        e.post(true, recv, recvBuf, recvH, 0, (int) recvBuf.byteSize());
        e.connect(o.server);
        int planLength = plan.write(sendBuf);
        e.post(false, send, sendBuf, sendH, 0, planLength);
        e.await(false, "the plan");
        VipDescriptor d = e.await(true, "the server's acknowledgement");
        if (d.length() != 16 || Endpoint.controlType(recvBuf, 0) != Endpoint.ACK) {
            throw new Endpoint.Failure("the server refused the plan (see its messages)");
        }
        e.post(true, recv, recvBuf, recvH, 0, (int) recvBuf.byteSize());
        out.printf("# %s: %s %s -> %s, discriminator %d, %s, %s%s%n", PROGRAM, e.deviceName,
                e.localAddress.inetAddress().getHostAddress(), o.server, o.port, ToolOptions.name(o.level),
                o.waitMode ? "waiting" : "polling", o.cq ? ", receive CQ" : "");
        out.printf("%-10s %-14s %-14s %s%n", "#bytes", "#iterations", "t_avg[usec]", "t_typical[usec]");

        MemorySegment pattern = Endpoint.pattern(e.arena, max);
        long[] rtt = new long[plan.iters()];
        int warm = plan.warmup();
        int total = warm + plan.iters();
        for (int size : plan.sizes()) {
            for (int k = 0; k < total; k++) {
                MemorySegment.copy(pattern, k % Endpoint.PATTERN_SHIFT, sendBuf, 0, size);
                long t0 = System.nanoTime();
                e.post(false, send, sendBuf, sendH, 0, size);
                d = e.await(true, "pong " + k + " of size " + size);
                long t1 = System.nanoTime();
                if (d.length() != size) {
                    throw new Endpoint.Failure("pong " + k + " of size " + size + " brought " + d.length() + " bytes");
                }
                e.await(false, "ping " + k + " of size " + size);
                Endpoint.verify(pattern, recvBuf, 0, size, k, "pong " + k + " of size " + size);
                e.post(true, recv, recvBuf, recvH, 0, (int) recvBuf.byteSize());
                if (k >= warm) {
                    rtt[k - warm] = t1 - t0;
                }
            }
            double avg = Arrays.stream(rtt).average().orElse(0) / 2 / 1000;
            long[] sorted = rtt.clone();
            Arrays.sort(sorted);
            int n = sorted.length;
            double median = (n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0) / 2 / 1000;
            out.printf(Locale.ROOT, "%-10d %-14d %-14.2f %.2f%n", size, plan.iters(), avg, median);
        }
    }
}
