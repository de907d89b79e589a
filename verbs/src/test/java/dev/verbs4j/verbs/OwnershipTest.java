package dev.verbs4j.verbs;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;

import static dev.verbs4j.verbs.FakeResource.onOtherThread;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The ownership tree ({@link Ownership}): dependents first, newest first, once, every one even after a failure. */
class OwnershipTest {

    @Test
    void closesChildrenNewestFirstThenItself() {
        List<String> log = new ArrayList<>();
        FakeResource root = new FakeResource(null, "ctx", log, false);
        FakeResource pd = new FakeResource(root, "pd", log, false);
        new FakeResource(pd, "mr1", log, false);
        FakeResource mr2 = new FakeResource(pd, "mr2", log, false);
        new FakeResource(root, "cq", log, false);
        mr2.close();
        root.close();
        root.close();
        assertThat(log).containsExactly("mr2", "cq", "mr1", "pd", "ctx");
        assertThatThrownBy(pd::touch).isInstanceOf(IllegalStateException.class).hasMessage("Node pd is closed");
        assertThatThrownBy(() -> new FakeResource(root, "late", log, false)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aFailingChildDoesNotStopTheRest() {
        List<String> log = new ArrayList<>();
        FakeResource root = new FakeResource(null, "ctx", log, false);
        new FakeResource(root, "a", log, true);
        new FakeResource(root, "b", log, true);
        assertThatThrownBy(root::close).isInstanceOf(VerbsException.class)
                .hasMessageContaining("ibv_destroy_b").hasMessageContaining("EBUSY")
                .satisfies(e -> assertThat(e.getSuppressed()).hasSize(1));
        assertThat(log).containsExactly("b", "a", "ctx");
        assertThat(root.isClosed()).isTrue();
    }

    @Test
    void anObjectClosesWhatUsesItBeforeItselfAndThoseCloseTheirOwnFirst() {
        List<String> log = new ArrayList<>();
        FakeResource ctx = new FakeResource(null, "ctx", log);
        FakeResource channel = new FakeResource(ctx, "channel", log);
        FakeResource cq = new FakeResource(ctx, "cq", log, false, channel);
        FakeResource pd = new FakeResource(ctx, "pd", log);
        new FakeResource(pd, "qp", log, false, cq);
        new FakeResource(pd, "mr", log);
        channel.close();
        // the channel closes the queue that uses it, which closes the queue pair that uses that
        assertThat(log).containsExactly("qp", "cq", "channel");
        ctx.close();
        assertThat(log).containsExactly("qp", "cq", "channel", "mr", "pd", "ctx");
    }

    @Test
    void anObjectThatStoppedDependingIsNoLongerClosedByWhatItUsed() {
        List<String> log = new ArrayList<>();
        FakeResource ctx = new FakeResource(null, "ctx", log);
        FakeResource first = new FakeResource(ctx, "first", log);
        FakeResource second = new FakeResource(ctx, "second", log);
        FakeResource id = new FakeResource(ctx, "id", log, false, first);
        id.stopDependingOn(first);
        id.dependOn(second);
        first.close();
        assertThat(id.isClosed()).isFalse();
        second.close();
        assertThat(log).containsExactly("first", "id", "second");
    }

    @Test
    void aChildClosedTwiceOrBeforeItsParentIsDestroyedOnce() {
        List<String> log = new ArrayList<>();
        FakeResource root = new FakeResource(null, "ctx", log);
        FakeResource child = new FakeResource(root, "child", log);
        child.close();
        child.close();
        root.close();
        child.close();
        assertThat(log).containsExactly("child", "ctx");
    }

    @Test
    void aChildThatClosesItselfAgainInsideItsDestroyDoesNotWait() {
        List<String> log = new ArrayList<>();
        FakeResource root = new FakeResource(null, "ctx", log);
        FakeResource child = new FakeResource(root, "child", log);
        child.onDestroy = child::close;
        root.close();
        assertThat(log).containsExactly("child", "ctx");
    }

    @Test
    void failuresAreThrownNewestFirstWithTheLaterOnesSuppressedInOrderAndTheOwnLast() {
        List<String> log = new ArrayList<>();
        FakeResource root = new FakeResource(null, "ctx", log, true);
        new FakeResource(root, "a", log, true);
        new FakeResource(root, "ok", log, false);
        new FakeResource(root, "b", log, true);
        new FakeResource(root, "c", log, true);
        assertThatThrownBy(root::close).isInstanceOf(VerbsException.class).hasMessageContaining("ibv_destroy_c")
                .satisfies(e -> assertThat(e.getSuppressed()).extracting(Throwable::getMessage)
                        .satisfiesExactly(m -> assertThat(m).contains("ibv_destroy_b"),
                                m -> assertThat(m).contains("ibv_destroy_a"),
                                m -> assertThat(m).contains("ibv_destroy_ctx")));
        assertThat(log).containsExactly("c", "b", "ok", "a", "ctx");
        assertThat(root.isClosed()).isTrue();
        root.close(); // closed once: no second failure
    }

    @Test
    void aFailureDeepInTheTreeStillClosesTheSiblingsAndEveryParent() {
        List<String> log = new ArrayList<>();
        FakeResource ctx = new FakeResource(null, "ctx", log);
        FakeResource pd = new FakeResource(ctx, "pd", log);
        new FakeResource(pd, "mr", log, true);
        new FakeResource(ctx, "cq", log);
        assertThatThrownBy(ctx::close).hasMessageContaining("ibv_destroy_mr")
                .satisfies(e -> assertThat(e.getSuppressed()).isEmpty());
        assertThat(log).containsExactly("cq", "mr", "pd", "ctx");
    }

    @Test
    void aChildCreatedDuringTheCloseIsRefused() {
        List<String> log = new ArrayList<>();
        FakeResource root = new FakeResource(null, "ctx", log);
        FakeResource child = new FakeResource(root, "child", log);
        List<Throwable> refused = new ArrayList<>();
        child.onDestroy = () -> {
            try {
                new FakeResource(root, "late", log);
            } catch (IllegalStateException e) {
                refused.add(e);
            }
        };
        root.close();
        assertThat(refused).singleElement().extracting(Throwable::getMessage).isEqualTo("Node ctx is closed");
        assertThat(log).containsExactly("child", "ctx");
    }

    @Test
    void aChildWhoseParentClosedBeforeItJoinedIsClosedAgainAndRefused() {
        List<String> log = new ArrayList<>();
        FakeResource root = new FakeResource(null, "ctx", log);
        new FakeResource(root, "a", log);
        assertThatThrownBy(() -> new FakeResource(root, "late", log, false, root::close))
                .isInstanceOf(IllegalStateException.class).hasMessage("Node ctx is closed");
        // the late object's native object is freed before the failure, and the parent's close missed it
        assertThat(log).containsExactly("a", "ctx", "late");
    }

    @Test
    void everyChildCreatedWhileItsParentClosesIsClosedWhenTheCloseReturns() throws Exception {
        for (int round = 0; round < 100; round++) {
            List<String> log = new CopyOnWriteArrayList<>();
            FakeResource root = new FakeResource(null, "ctx", log);
            List<FakeResource> created = new CopyOnWriteArrayList<>();
            CyclicBarrier start = new CyclicBarrier(2);
            Thread creator = new Thread(() -> {
                await(start);
                try {
                    for (int i = 0; i < 500; i++) {
                        created.add(new FakeResource(root, "child" + i, log));
                    }
                } catch (IllegalStateException refused) {
                    // the parent is closed
                }
            });
            creator.start();
            await(start);
            root.close();
            creator.join();
            // every object whose creation succeeded was closed by the parent's close, once
            for (FakeResource c : created) {
                assertThat(c.isClosed()).as("round %d: %s", round, c.name).isTrue();
            }
            assertThat(log).as("round %d", round).doesNotHaveDuplicates().contains("ctx")
                    .containsAll(created.stream().map(c -> c.name).toList());
            // besides them only the one refused at its attach, if any, closed after the parent
            assertThat(log.size()).as("round %d", round).isBetween(created.size() + 1, created.size() + 2);
        }
    }

    @Test
    void aSecondCloseReturnsOnlyOnceTheFirstIsDone() throws Exception {
        List<String> log = new CopyOnWriteArrayList<>();
        FakeResource root = new FakeResource(null, "ctx", log);
        CountDownLatch inDestroy = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        root.onDestroy = () -> {
            inDestroy.countDown();
            await(release);
        };
        Thread first = new Thread(root::close);
        first.start();
        assertThat(inDestroy.await(5, TimeUnit.SECONDS)).isTrue();
        CountDownLatch secondReturned = new CountDownLatch(1);
        Thread second = new Thread(() -> {
            root.close();
            secondReturned.countDown();
        });
        second.start();
        assertThat(secondReturned.await(100, TimeUnit.MILLISECONDS)).as("returned before the first close").isFalse();
        release.countDown();
        assertThat(secondReturned.await(5, TimeUnit.SECONDS)).isTrue();
        first.join();
        second.join();
        assertThat(log).containsExactly("ctx");
    }

    @Test
    void aCloseRefusedFromAnotherThreadLeavesTheTreeAsItWas() throws Exception {
        List<String> log = new ArrayList<>();
        FakeResource root = new FakeResource(null, "ctx", log);
        FakeResource qp = new FakeResource(root, "qp", log);
        qp.confineToCurrentThread();
        assertThat(onOtherThread(root::close)).isInstanceOf(IllegalStateException.class);
        FakeResource later = new FakeResource(root, "later", log);
        root.close();
        assertThat(log).containsExactly("later", "qp", "ctx");
    }

    static void await(CyclicBarrier barrier) {
        try {
            barrier.await(5, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    static void await(CountDownLatch latch) {
        try {
            assertThat(latch.await(5, TimeUnit.SECONDS)).isTrue();
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }
}
