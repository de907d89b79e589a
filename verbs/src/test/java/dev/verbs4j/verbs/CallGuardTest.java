package dev.verbs4j.verbs;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static dev.verbs4j.verbs.FakeResource.onOtherThread;
import static dev.verbs4j.verbs.OwnershipTest.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The call guard ({@link CallGuard}): a close waits for the calls in flight, and no call starts after it. */
class CallGuardTest {

    @Test
    void aCallAfterCloseIsAnIllegalStateExceptionNamingTheObject() {
        FakeResource cq = new FakeResource(null, "cq", new ArrayList<>());
        cq.close();
        assertThatThrownBy(() -> cq.call(() -> { })).isInstanceOf(IllegalStateException.class).hasMessage("Node cq is closed");
        assertThatThrownBy(cq::enterCall).isInstanceOf(IllegalStateException.class).hasMessage("Node cq is closed");
        assertThatThrownBy(cq::enterDataPath).isInstanceOf(IllegalStateException.class).hasMessage("Node cq is closed");
        assertThatThrownBy(cq::touch).isInstanceOf(IllegalStateException.class).hasMessage("Node cq is closed");
        assertThat(cq.isClosed()).isTrue();
        assertThat(cq).hasToString("Node cq (closed)");
    }

    @Test
    void aRefusedCallLeavesNothingCounted() {
        FakeResource cq = new FakeResource(null, "cq", new ArrayList<>());
        CallGuard guard = new CallGuard(cq);
        assertThat(guard.close()).isTrue();
        assertThat(guard.close()).as("marked once").isFalse();
        for (int i = 0; i < 3; i++) {
            assertThatThrownBy(guard::enter).isInstanceOf(IllegalStateException.class);
        }
        guard.awaitCalls(); // returns: the refused calls left no count behind
        assertThat(guard.isClosed()).isTrue();
    }

    @Test
    void aCloseWaitsForTheCallsInFlightAndRefusesNewOnes() throws Exception {
        List<String> log = new CopyOnWriteArrayList<>();
        FakeResource qp = new FakeResource(null, "qp", log);
        CountDownLatch inCall = new CountDownLatch(2);
        CountDownLatch release = new CountDownLatch(1);
        List<Thread> callers = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            Thread t = new Thread(() -> qp.call(() -> {
                inCall.countDown();
                await(release);
                log.add("call ended");
            }));
            t.start();
            callers.add(t);
        }
        assertThat(inCall.await(5, TimeUnit.SECONDS)).isTrue();
        Thread closer = new Thread(qp::close);
        closer.start();
        while (!qp.isClosed()) {
            Thread.onSpinWait();
        }
        // marked closed at once: a new call is refused while the close waits for the two in flight
        assertThat(onOtherThread(() -> qp.call(() -> log.add("late call")))).isInstanceOf(IllegalStateException.class);
        closer.join(100);
        assertThat(closer.isAlive()).as("close returned with calls in flight").isTrue();
        assertThat(log).isEmpty();
        release.countDown();
        closer.join(5_000);
        assertThat(closer.isAlive()).isFalse();
        assertThat(log).containsExactly("call ended", "call ended", "qp");
        for (Thread t : callers) {
            t.join();
        }
    }

    @Test
    void aCallInsideWhichTheObjectIsClosedKeepsItsNativeObjectUntilItEnds() throws Exception {
        List<String> log = new CopyOnWriteArrayList<>();
        FakeResource ctx = new FakeResource(null, "ctx", log);
        FakeResource pd = new FakeResource(ctx, "pd", log);
        AtomicBoolean sawClosedInside = new AtomicBoolean();
        pd.call(() -> {
            Thread closer = new Thread(ctx::close);
            closer.start();
            while (!pd.isClosed()) {
                Thread.onSpinWait();
            }
            sawClosedInside.set(true);
            // the close has begun, through the parent, but frees nothing while this call runs
            try {
                closer.join(100);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            assertThat(closer.isAlive()).isTrue();
            assertThat(log).isEmpty();
            assertThatThrownBy(pd::touch).isInstanceOf(IllegalStateException.class);
        });
        assertThat(sawClosedInside).isTrue();
        ctx.close(); // returns once the other thread's close is done
        assertThat(log).containsExactly("pd", "ctx");
    }

    @Test
    void aConfinedThreadsDataPathIsNotCountedButStillRefusedAfterClose() {
        FakeResource qp = new FakeResource(null, "qp", new ArrayList<>());
        assertThat(qp.enterDataPath()).as("counted before confinement").isTrue();
        qp.exitDataPath(true);
        qp.confineToCurrentThread();
        boolean counted = qp.enterDataPath();
        assertThat(counted).isFalse();
        qp.close(); // an uncounted call in flight does not hold the close
        qp.exitDataPath(counted);
        assertThatThrownBy(qp::enterDataPath).isInstanceOf(IllegalStateException.class).hasMessage("Node qp is closed");
    }

    /**
     * Many threads call while one closes, over many rounds: no call starts after the close
     * returned, no call runs once the native object is freed, and the close returns only after
     * every call that started has ended.
     */
    @Test
    void callsRacingACloseNeverOutliveIt() throws Exception {
        int callers = 3;
        int rounds = 100;
        AtomicLong admitted = new AtomicLong();
        AtomicLong refused = new AtomicLong();
        List<String> violations = new CopyOnWriteArrayList<>();
        for (int round = 0; round < rounds; round++) {
            int r = round;
            AtomicInteger inFlight = new AtomicInteger();
            AtomicBoolean destroyed = new AtomicBoolean();
            AtomicBoolean closeReturned = new AtomicBoolean();
            FakeResource qp = new FakeResource(null, "qp", new CopyOnWriteArrayList<>());
            qp.onDestroy = () -> {
                if (inFlight.get() != 0) {
                    violations.add("round " + r + ": destroyed with " + inFlight.get() + " call(s) in flight");
                }
                destroyed.set(true);
            };
            CyclicBarrier start = new CyclicBarrier(callers + 1);
            List<Thread> threads = new ArrayList<>();
            for (int c = 0; c < callers; c++) {
                boolean dataPath = c % 2 == 0;
                Thread t = new Thread(() -> {
                    await(start);
                    while (true) {
                        boolean counted;
                        try {
                            counted = dataPath ? qp.enterDataPath() : enter(qp);
                        } catch (IllegalStateException closed) {
                            refused.incrementAndGet();
                            return;
                        }
                        inFlight.incrementAndGet();
                        if (closeReturned.get()) {
                            violations.add("round " + r + ": a call started after the close returned");
                        }
                        if (destroyed.get()) {
                            violations.add("round " + r + ": a call runs on a freed object");
                        }
                        Thread.onSpinWait();
                        inFlight.decrementAndGet();
                        admitted.incrementAndGet();
                        qp.exitDataPath(counted);
                    }
                });
                t.start();
                threads.add(t);
            }
            await(start);
            for (int spin = 0; spin < round % 50; spin++) {
                Thread.onSpinWait();
            }
            qp.close();
            closeReturned.set(true);
            if (inFlight.get() != 0) {
                violations.add("round " + r + ": the close returned with a call in flight");
            }
            for (Thread t : threads) {
                t.join(5_000);
                assertThat(t.isAlive()).as("a caller still running after the close").isFalse();
            }
        }
        assertThat(violations).isEmpty();
        assertThat(refused.get()).as("every caller ends refused").isEqualTo((long) rounds * callers);
        assertThat(admitted.get()).as("calls admitted before the closes").isPositive();
    }

    private static boolean enter(NativeResource r) {
        r.enterCall();
        return true;
    }
}
