package dev.verbs4j.verbs;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * The wrong-thread family of the misuse suite: batches made with {@code confined(...)} belong to
 * the thread that made them, so every public method of {@link SendRequests}, {@link
 * ReceiveRequests}, {@link WorkCompletions} and their views, called from another thread, must be
 * a {@link WrongThreadException} (plain getters of {@link MisuseAllowList} may answer), and so
 * must posting and polling them there.
 */
final class MisuseConfinementCases {

    static final String FAMILY = "wrong thread";

    private record Confined(String name, Class<?> type, Function<MisuseFixture, Object> make) {
    }

    private MisuseConfinementCases() {
    }

    static List<MisuseCase> all() {
        List<Confined> subjects = List.of(
                new Confined("SendRequests.confined", SendRequests.class, f -> SendRequests.confined(2, 2)),
                new Confined("ReceiveRequests.confined", ReceiveRequests.class, f -> ReceiveRequests.confined(2, 2)),
                new Confined("WorkCompletions.confined", WorkCompletions.class, f -> WorkCompletions.confined(4)),
                new Confined("SendRequest of a confined batch", SendRequest.class, f -> SendRequests.confined(2, 2).reset(0)),
                new Confined("ReceiveRequest of a confined batch", ReceiveRequest.class, f -> ReceiveRequests.confined(2, 2).get(0)),
                new Confined("WorkCompletion of a confined batch", WorkCompletion.class, MisuseConfinementCases::confinedCompletion));
        List<MisuseCase> cases = new ArrayList<>();
        for (Confined c : subjects) {
            for (Method m : MisuseAfterCloseCases.methods(c.type())) {
                String sig = MisuseAfterCloseCases.signature(m);
                boolean plain = MisuseAllowList.allowedAfterClose(c.type(), m) && !m.getName().equals("close");
                cases.add(MisuseCase.of(FAMILY, c.name() + ": " + sig + " from another thread", () -> {
                    try (MisuseFixture f = new MisuseFixture()) {
                        Object subject = c.make().apply(f);
                        Object[] args = MisuseArguments.live(m, f, 1);
                        Throwable t = MisuseExpect.thrownBy(() -> MisuseExtendedProtocolCases.onOtherThread(() -> m.invoke(subject, args)));
                        if (plain) {
                            MisuseExpect.clearOrNone(sig + " from another thread", t);
                        } else {
                            expectWrongThread(c.name() + "." + sig + " from another thread", t);
                        }
                    }
                }));
            }
        }
        cases.add(MisuseCase.of(FAMILY, "QueuePair.postSend of a confined SendRequests from another thread", () -> {
            try (MisuseFixture f = new MisuseFixture(); SendRequests s = SendRequests.confined(1, 1)) {
                s.reset(0).opcode(Opcode.SEND).sge(f.mr(), 0, 8);
                expectWrongThreadElsewhere("postSend from another thread", () -> f.qp(QpType.RC).postSend(s, 1));
            }
        }));
        cases.add(MisuseCase.of(FAMILY, "QueuePair.postReceive of a confined ReceiveRequests from another thread", () -> {
            try (MisuseFixture f = new MisuseFixture(); ReceiveRequests r = ReceiveRequests.confined(1, 1)) {
                r.get(0).sge(f.mr(), 0, 8);
                expectWrongThreadElsewhere("postReceive from another thread", () -> f.qp(QpType.RC).postReceive(r, 1));
            }
        }));
        cases.add(MisuseCase.of(FAMILY, "SharedReceiveQueue.postReceive of a confined ReceiveRequests from another thread", () -> {
            try (MisuseFixture f = new MisuseFixture(); ReceiveRequests r = ReceiveRequests.confined(1, 1)) {
                r.get(0).sge(f.mr(), 0, 8);
                expectWrongThreadElsewhere("SRQ postReceive from another thread", () -> f.srq().postReceive(r, 1));
            }
        }));
        cases.add(MisuseCase.of(FAMILY, "CompletionQueue.poll into a confined WorkCompletions from another thread", () -> {
            try (MisuseFixture f = new MisuseFixture(); WorkCompletions w = WorkCompletions.confined(4)) {
                expectWrongThreadElsewhere("poll from another thread", () -> f.cq().poll(w));
            }
        }));
        return cases;
    }

    /** A completion polled into a confined array. */
    private static WorkCompletion confinedCompletion(MisuseFixture f) {
        WorkCompletions w = WorkCompletions.confined(4);
        CompletionQueue cq = f.ctx.createCompletionQueue(4);
        f.flushOneReceive(f.pd().createQueuePair(QueuePairInit.of(QpType.RC, cq)), 1, 8);
        MisuseFixture.awaitFlushed(() -> cq.poll(w) != 0);
        return w.get(0);
    }

    /** {@code action}, run on another thread, throws a WrongThreadException. */
    private static void expectWrongThreadElsewhere(String what, MisuseExpect.Action action) {
        expectWrongThread(what, MisuseExpect.thrownBy(() -> MisuseExtendedProtocolCases.onOtherThread(() -> {
            action.run();
            return null;
        })));
    }

    private static void expectWrongThread(String what, Throwable t) {
        if (t == null) {
            throw new AssertionError("silent success: " + what + " returned normally");
        }
        if (!(t instanceof WrongThreadException)) {
            throw new AssertionError(what + " threw " + t + ", not a WrongThreadException", t);
        }
        MisuseExpect.note(what, t);
    }
}
