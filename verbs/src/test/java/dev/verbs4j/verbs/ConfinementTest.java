package dev.verbs4j.verbs;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicReference;

import static dev.verbs4j.verbs.FakeResource.onOtherThread;
import static dev.verbs4j.verbs.OwnershipTest.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Confinement ({@link Confinement}): a confined object, and what would close it, are closed by its thread only. */
class ConfinementTest {

    private final List<String> log = new CopyOnWriteArrayList<>();
    private final FakeResource ctx = new FakeResource(null, "ctx", log);

    @Test
    void aConfinedObjectAndEverythingThatWouldCloseItAreClosedByItsThreadOnly() throws Exception {
        FakeResource pd = new FakeResource(ctx, "pd", log, false);
        FakeResource cq = new FakeResource(ctx, "cq", log, false);
        FakeResource qp = new FakeResource(pd, "qp", log, false);
        qp.dependOn(cq);
        FakeResource other = new FakeResource(ctx, "mr", log, false);
        qp.confineToCurrentThread();
        qp.confineToCurrentThread(); // idempotent on its thread
        assertThat(qp.isConfinedToCurrentThread()).isTrue();

        for (FakeResource n : List.of(qp, pd, cq, ctx)) {
            assertThat(onOtherThread(n::close)).as("close of %s from another thread", n.name)
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("confined to");
            assertThat(n.isClosed()).isFalse();
        }
        assertThat(log).isEmpty();
        assertThat(onOtherThread(qp::confineToCurrentThread)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("already");
        // another thread's data path stays counted, and what the confined object does not need closes
        assertThat(onOtherThread(() -> qp.exitDataPath(qp.enterDataPath()))).isNull();
        assertThat(onOtherThread(other::close)).isNull();

        qp.close();
        assertThat(onOtherThread(ctx::close)).isNull();
        assertThat(log).containsExactly("mr", "qp", "cq", "pd", "ctx");
        assertThatThrownBy(qp::enterDataPath).isInstanceOf(IllegalStateException.class).hasMessage("Node qp is closed");
        assertThatThrownBy(qp::confineToCurrentThread).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void theConfiningThreadClosesTheParentsWithTheConfinedObject() {
        FakeResource qp = new FakeResource(new FakeResource(ctx, "pd", log, false), "qp", log, false);
        qp.confineToCurrentThread();
        ctx.close();
        assertThat(log).containsExactly("qp", "pd", "ctx");
    }

    @Test
    void anObjectConfinedToAThreadThatEndedCanBeClosedByAnother() throws Exception {
        FakeResource qp = new FakeResource(ctx, "qp", log, false);
        assertThat(onOtherThread(qp::confineToCurrentThread)).isNull();
        // that thread has ended: it cannot be in a call
        ctx.close();
        assertThat(log).containsExactly("qp", "ctx");
    }

    @Test
    void confiningUnderAClosedParentFailsAndRegistersNothing() throws Exception {
        FakeResource cq = new FakeResource(ctx, "cq", log, false);
        FakeResource qp = new FakeResource(new FakeResource(ctx, "pd", log, false), "qp", log, false, cq);
        // cq closes qp with it: confining qp afterwards fails
        cq.close();
        assertThatThrownBy(qp::confineToCurrentThread).isInstanceOf(IllegalStateException.class);
        assertThat(onOtherThread(ctx::close)).isNull();
        assertThat(ctx.isClosed()).isTrue();
    }

    @Test
    void aCloseFromAnotherThreadNamesTheObjectAndTheThreadItIsConfinedTo() throws Exception {
        FakeResource qp = new FakeResource(ctx, "qp", log);
        qp.confineToCurrentThread();
        String owner = Thread.currentThread().toString();
        assertThat(onOtherThread(qp::close)).isInstanceOf(IllegalStateException.class)
                .hasMessage("Node qp is confined to " + owner + ": only that thread may close it");
        assertThat(onOtherThread(ctx::close)).isInstanceOf(IllegalStateException.class)
                .hasMessage("Node ctx would close an object confined to " + owner + ": close that object on its thread first");
        assertThat(onOtherThread(qp::confineToCurrentThread)).isInstanceOf(IllegalStateException.class)
                .hasMessage("Node qp is confined to " + owner + " already");
        assertThat(log).isEmpty();
        ctx.close();
        assertThat(log).containsExactly("qp", "ctx");
    }

    @Test
    void anotherThreadMayCloseOnceTheOwnerClosedTheConfinedObject() throws Exception {
        FakeResource pd = new FakeResource(ctx, "pd", log);
        FakeResource qp = new FakeResource(pd, "qp", log);
        qp.confineToCurrentThread();
        qp.close();
        assertThat(qp.isConfinedToCurrentThread()).as("the owner is still named").isTrue();
        assertThat(onOtherThread(qp::close)).as("closed already").isNull();
        assertThat(onOtherThread(pd::close)).isNull();
        assertThat(onOtherThread(ctx::close)).isNull();
        assertThat(log).containsExactly("qp", "pd", "ctx");
    }

    @Test
    void twoObjectsConfinedToTwoThreadsHoldTheirCommonParentForBoth() throws Exception {
        FakeResource mine = new FakeResource(ctx, "mine", log);
        FakeResource theirs = new FakeResource(ctx, "theirs", log);
        mine.confineToCurrentThread();
        CountDownLatch confined = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(1);
        AtomicReference<Throwable> theirClose = new AtomicReference<>();
        Thread other = new Thread(() -> {
            theirs.confineToCurrentThread();
            confined.countDown();
            await(done);
            try {
                theirs.close();
            } catch (Throwable e) {
                theirClose.set(e);
            }
        });
        other.start();
        await(confined);
        mine.close();
        assertThatThrownBy(ctx::close).as("the other thread's object is still open")
                .isInstanceOf(IllegalStateException.class).hasMessageContaining(other.toString());
        done.countDown();
        other.join();
        assertThat(theirClose.get()).isNull();
        ctx.close();
        assertThat(log).containsExactly("mine", "theirs", "ctx");
    }

    @Test
    void anObjectThatClosesAnotherOutsideTheTreeIsHeldByItsConfinement() throws Exception {
        FakeResource id = new FakeResource(null, "id", log);
        FakeResource qp = new FakeResource(ctx, "qp", log);
        qp.alsoClosedBy(id);
        qp.confineToCurrentThread();
        assertThat(onOtherThread(id::close)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("Node id would close an object confined to");
        qp.close();
        assertThat(onOtherThread(id::close)).isNull();
        assertThat(onOtherThread(ctx::close)).isNull();
        assertThat(log).containsExactly("qp", "id", "ctx");
    }

    /**
     * A thread confines a queue pair while another closes its parent, over many rounds: either the
     * confinement fails (the close came first) or the close is refused (it came second), never both
     * succeed, and a refused close leaves everything open.
     */
    @Test
    void aConfinementRacingACloseEitherFailsOrIsSeenByIt() throws Exception {
        int confinedFirst = 0;
        int closedFirst = 0;
        for (int round = 0; round < 300; round++) {
            List<String> log = new CopyOnWriteArrayList<>();
            FakeResource ctx = new FakeResource(null, "ctx", log);
            FakeResource pd = new FakeResource(ctx, "pd", log);
            FakeResource qp = new FakeResource(pd, "qp", log);
            CyclicBarrier start = new CyclicBarrier(2);
            CountDownLatch checked = new CountDownLatch(1);
            AtomicReference<Throwable> confineFailure = new AtomicReference<>();
            Thread owner = new Thread(() -> {
                await(start);
                try {
                    qp.confineToCurrentThread();
                } catch (Throwable e) {
                    confineFailure.set(e);
                }
                await(checked); // alive until the close's outcome is checked
            });
            owner.start();
            await(start);
            Throwable closeFailure = null;
            try {
                ctx.close();
            } catch (IllegalStateException e) {
                closeFailure = e;
            }
            checked.countDown();
            owner.join();
            if (confineFailure.get() == null) {
                confinedFirst++;
                assertThat(closeFailure).as("round %d: confined, then closed from another thread", round)
                        .isNotNull().hasMessageContaining("confined to");
                assertThat(log).as("round %d", round).isEmpty();
                assertThat(ctx.isClosed() || pd.isClosed() || qp.isClosed()).isFalse();
            } else {
                closedFirst++;
                assertThat(closeFailure).as("round %d: the close came first", round).isNull();
                assertThat(confineFailure.get()).isInstanceOf(IllegalStateException.class).hasMessageContaining("is closed");
                assertThat(log).as("round %d", round).containsExactly("qp", "pd", "ctx");
            }
            ctx.close(); // the owner has ended: anyone may close now
            assertThat(log).containsExactly("qp", "pd", "ctx");
        }
        assertThat(confinedFirst + closedFirst).isEqualTo(300);
    }
}
