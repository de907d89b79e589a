package dev.verbs4j.verbs;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The extended-API protocol family of the misuse suite. The provider holds a lock from {@code
 * ibv_wr_start} to {@code ibv_wr_complete} and from {@code ibv_start_poll} to {@code
 * ibv_end_poll}, so calls out of order or from another thread could deadlock or write into a
 * posted request: every {@link ExtendedQueuePair} call without {@code start()}, or from a thread
 * other than the batch's, every {@link ExtendedPoller} call without a pass or from another thread,
 * a second {@code start()}, classic posts and polls while a batch or pass is open, and operations
 * the queue pair was not created for must be an {@link IllegalStateException}, at once.
 */
final class MisuseExtendedProtocolCases {

    static final String FAMILY = "extended API protocol";

    /** The operations a UD queue pair of the fixture was not created for. */
    private static final Set<String> NOT_UD = Set.of("rdmaWrite", "rdmaWriteWithImmediate", "rdmaRead", "atomicCompareAndSwap",
            "atomicFetchAndAdd", "localInvalidate", "sendWithInvalidate");

    private MisuseExtendedProtocolCases() {
    }

    static List<MisuseCase> all() {
        List<MisuseCase> cases = new ArrayList<>();
        for (Method m : MisuseAfterCloseCases.methods(ExtendedQueuePair.class)) {
            if (!m.getName().equals("start")) {
                cases.add(queuePair("without start(): " + MisuseAfterCloseCases.signature(m), f -> {
                    ExtendedQueuePair q = f.xqp(QpType.RC);
                    expectIse("ExtendedQueuePair." + MisuseAfterCloseCases.signature(m) + " without start()", () -> invoke(m, q, f));
                }));
                cases.add(queuePair("after complete(): " + MisuseAfterCloseCases.signature(m), f -> {
                    ExtendedQueuePair q = f.xqp(QpType.RC);
                    q.start();
                    q.wrId(1).flags(0).send().setSge(f.mr(), 0, 8);
                    q.complete();
                    expectIse("ExtendedQueuePair." + MisuseAfterCloseCases.signature(m) + " after complete()", () -> invoke(m, q, f));
                }));
            }
            cases.add(queuePair("from another thread while a batch is open: " + MisuseAfterCloseCases.signature(m), f -> {
                ExtendedQueuePair q = f.xqp(QpType.RC);
                q.start();
                q.wrId(1).flags(0).send();
                try {
                    expectIse("ExtendedQueuePair." + MisuseAfterCloseCases.signature(m) + " from another thread",
                            () -> onOtherThread(() -> invoke(m, q, f)));
                } finally {
                    q.abort();
                }
            }));
            if (NOT_UD.contains(m.getName())) {
                cases.add(queuePair("UD batch, an operation it was not created for: " + MisuseAfterCloseCases.signature(m), f -> {
                    ExtendedQueuePair q = f.xqp(QpType.UD);
                    q.start();
                    try {
                        expectIse("UD ExtendedQueuePair." + MisuseAfterCloseCases.signature(m), () -> invoke(m, q, f));
                    } finally {
                        q.abort();
                    }
                }));
            }
        }
        cases.add(queuePair("start() twice", f -> {
            ExtendedQueuePair q = f.xqp(QpType.RC);
            q.start();
            try {
                expectIse("a second start()", q::start);
            } finally {
                q.abort();
            }
        }));
        cases.add(queuePair("classic postSend while a batch is open", f -> {
            ExtendedQueuePair q = f.xqp(QpType.RC);
            SendRequests s = f.sends();
            s.reset(0).opcode(Opcode.SEND).sge(f.mr(), 0, 8);
            q.start();
            try {
                expectIse("postSend on the batch's thread", () -> f.qp(QpType.RC).postSend(s, 1));
                expectIse("postSend from another thread", () -> onOtherThread(() -> {
                    f.qp(QpType.RC).postSend(s, 1);
                    return null;
                }));
            } finally {
                q.abort();
            }
        }));
        cases.add(queuePair("a batch left open by a thread that ended, then the queue pair closed", f -> {
            ExtendedQueuePair q = f.xqp(QpType.RC);
            onOtherThread(() -> q.start().wrId(1).flags(0).send());
            expectIse("start() while a finished thread's batch is open", q::start);
            expectIse("postSend while a finished thread's batch is open", () -> f.qp(QpType.RC).postSend(f.sends(), 1));
            onOtherThread(() -> {
                f.qp(QpType.RC).close();
                return null;
            });
            expectIse("send() after the close", q::send);
        }));
        cases.add(queuePair("the queue pair closed by another thread in the middle of a batch", f -> {
            ExtendedQueuePair q = f.xqp(QpType.RC);
            q.start();
            q.wrId(1).flags(0).send();
            onOtherThread(() -> {
                f.qp(QpType.RC).close();
                return null;
            });
            expectIse("setSge after the close", () -> q.setSge(f.mr(), 0, 8));
            expectIse("complete() after the close", q::complete);
        }));

        for (Method m : MisuseAfterCloseCases.methods(ExtendedPoller.class)) {
            if (!m.getName().equals("start")) {
                cases.add(poller("without start(): " + MisuseAfterCloseCases.signature(m), f -> {
                    ExtendedPoller p = f.poller();
                    expectIse("ExtendedPoller." + MisuseAfterCloseCases.signature(m) + " without start()", () -> invoke(m, p, f));
                }));
                cases.add(poller("after end(): " + MisuseAfterCloseCases.signature(m), f -> {
                    ExtendedPoller p = f.pollingPoller();
                    p.end();
                    expectIse("ExtendedPoller." + MisuseAfterCloseCases.signature(m) + " after end()", () -> invoke(m, p, f));
                }));
            }
            cases.add(poller("from another thread during a pass: " + MisuseAfterCloseCases.signature(m), f -> {
                ExtendedPoller p = f.pollingPoller();
                try {
                    expectIse("ExtendedPoller." + MisuseAfterCloseCases.signature(m) + " from another thread",
                            () -> onOtherThread(() -> invoke(m, p, f)));
                } finally {
                    p.end();
                }
            }));
        }
        cases.add(poller("start() twice", f -> {
            ExtendedPoller p = f.pollingPoller();
            try {
                expectIse("a second start()", p::start);
            } finally {
                p.end();
            }
        }));
        cases.add(poller("classic poll of the queue during a pass", f -> {
            ExtendedPoller p = f.pollingPoller();
            try {
                expectIse("poll on the pass's thread", () -> f.ecq().poll(f.wcs()));
                expectIse("poll from another thread", () -> onOtherThread(() -> f.ecq().poll(f.wcs())));
            } finally {
                p.end();
            }
        }));
        cases.add(poller("end() after start() found the queue empty", f -> {
            ExtendedPoller p = f.poller();
            if (p.start()) {
                p.end();
                throw new AssertionError("the fresh queue was not empty");
            }
            expectIse("end() without a current completion", p::end);
        }));
        cases.add(poller("a field the queue was created without", f -> {
            CompletionQueue bare = f.ctx.createExtendedCompletionQueue(8, null, 0, 0);
            ExtendedPoller p = bare.extended();
            // a completion on it: a receive flushed by the error state
            f.flushOneReceive(f.pd().createQueuePair(QueuePairInit.of(QpType.RC, f.cq(), bare)), 1, 8);
            MisuseFixture.awaitFlushed(p::start);
            try {
                expectIse("byteLength() of a queue created without WITH_BYTE_LEN", p::byteLength);
                expectIse("qpNum() of a queue created without WITH_QP_NUM", p::qpNum);
            } finally {
                p.end();
            }
        }));
        return cases;
    }

    @FunctionalInterface
    private interface FixtureBody {
        void run(MisuseFixture f) throws Throwable;
    }

    private static MisuseCase queuePair(String detail, FixtureBody body) {
        return MisuseCase.of(FAMILY, "ExtendedQueuePair " + detail, () -> {
            try (MisuseFixture f = new MisuseFixture()) {
                body.run(f);
            }
        });
    }

    private static MisuseCase poller(String detail, FixtureBody body) {
        return MisuseCase.of(FAMILY, "ExtendedPoller " + detail, () -> {
            try (MisuseFixture f = new MisuseFixture()) {
                body.run(f);
            }
        });
    }

    private static Object invoke(Method m, Object target, MisuseFixture f) throws Throwable {
        try {
            return m.invoke(target, MisuseArguments.live(m, f, 1));
        } catch (java.lang.reflect.InvocationTargetException e) {
            throw e.getCause();
        }
    }

    /** Asserts that {@code call} throws an IllegalStateException. */
    private static void expectIse(String what, MisuseExpect.Action call) {
        Throwable t = MisuseExpect.refused(what, call);
        if (!(t instanceof IllegalStateException)) {
            throw new AssertionError(what + " threw " + t + ", not an IllegalStateException", t);
        }
    }

    /**
     * Runs {@code call} on a new thread and returns its result or rethrows its exception; a call
     * that has not returned within 10 s is a hang (the thread is left behind).
     */
    static Object onOtherThread(MisuseExpect.Call call) throws Throwable {
        AtomicReference<Object> result = new AtomicReference<>();
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread t = Thread.ofPlatform().daemon().name("misuse-other").start(() -> {
            try {
                result.set(call.run());
            } catch (Throwable e) {
                thrown.set(e);
            }
        });
        t.join(10_000);
        if (t.isAlive()) {
            StringBuilder stack = new StringBuilder();
            for (StackTraceElement e : t.getStackTrace()) {
                stack.append("\n\tat ").append(e);
            }
            throw new AssertionError("hang: the call on another thread did not return within 10 s:" + stack);
        }
        if (thrown.get() != null) {
            throw thrown.get();
        }
        return result.get();
    }
}
