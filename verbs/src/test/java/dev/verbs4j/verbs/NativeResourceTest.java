package dev.verbs4j.verbs;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The lifetime rules every verbs object follows: children first, newest first, once. */
class NativeResourceTest {

    static final class Node extends NativeResource {
        final String name;
        final List<String> log;
        final boolean fail;

        Node(NativeResource parent, String name, List<String> log, boolean fail) {
            super(parent);
            this.name = name;
            this.log = log;
            this.fail = fail;
            attach();
        }

        void touch() {
            ensureOpen();
        }

        @Override
        protected void destroy() {
            log.add(name);
            if (fail) {
                throw new VerbsException("ibv_destroy_" + name, Errno.EBUSY, null);
            }
        }

        @Override
        protected String describe() {
            return "Node " + name;
        }
    }

    @Test
    void closesChildrenNewestFirstThenItself() {
        List<String> log = new ArrayList<>();
        Node root = new Node(null, "ctx", log, false);
        Node pd = new Node(root, "pd", log, false);
        new Node(pd, "mr1", log, false);
        Node mr2 = new Node(pd, "mr2", log, false);
        new Node(root, "cq", log, false);
        mr2.close();
        root.close();
        root.close();
        assertThat(log).containsExactly("mr2", "cq", "mr1", "pd", "ctx");
        assertThatThrownBy(pd::touch).isInstanceOf(IllegalStateException.class).hasMessage("Node pd is closed");
        assertThatThrownBy(() -> new Node(root, "late", log, false)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aFailingChildDoesNotStopTheRest() {
        List<String> log = new ArrayList<>();
        Node root = new Node(null, "ctx", log, false);
        new Node(root, "a", log, true);
        new Node(root, "b", log, true);
        assertThatThrownBy(root::close).isInstanceOf(VerbsException.class)
                .hasMessageContaining("ibv_destroy_b").hasMessageContaining("EBUSY")
                .satisfies(e -> assertThat(e.getSuppressed()).hasSize(1));
        assertThat(log).containsExactly("b", "a", "ctx");
        assertThat(root.isClosed()).isTrue();
    }

    /** Runs {@code body} on a new thread and returns what it threw, or null. */
    private static Throwable onOtherThread(Runnable body) throws InterruptedException {
        Throwable[] thrown = new Throwable[1];
        Thread t = new Thread(() -> {
            try {
                body.run();
            } catch (Throwable e) {
                thrown[0] = e;
            }
        });
        t.start();
        t.join();
        return thrown[0];
    }

    @Test
    void aConfinedObjectAndEverythingThatWouldCloseItAreClosedByItsThreadOnly() throws Exception {
        List<String> log = new ArrayList<>();
        Node ctx = new Node(null, "ctx", log, false);
        Node pd = new Node(ctx, "pd", log, false);
        Node cq = new Node(ctx, "cq", log, false);
        Node qp = new Node(pd, "qp", log, false);
        qp.dependOn(cq);
        Node other = new Node(ctx, "mr", log, false);
        qp.confineToCurrentThread();
        qp.confineToCurrentThread(); // idempotent on its thread
        assertThat(qp.isConfinedToCurrentThread()).isTrue();

        for (Node n : List.of(qp, pd, cq, ctx)) {
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
        List<String> log = new ArrayList<>();
        Node ctx = new Node(null, "ctx", log, false);
        Node qp = new Node(new Node(ctx, "pd", log, false), "qp", log, false);
        qp.confineToCurrentThread();
        ctx.close();
        assertThat(log).containsExactly("qp", "pd", "ctx");
    }

    @Test
    void anObjectConfinedToAThreadThatEndedCanBeClosedByAnother() throws Exception {
        List<String> log = new ArrayList<>();
        Node ctx = new Node(null, "ctx", log, false);
        Node qp = new Node(ctx, "qp", log, false);
        assertThat(onOtherThread(qp::confineToCurrentThread)).isNull();
        // that thread has ended: it cannot be in a call
        ctx.close();
        assertThat(log).containsExactly("qp", "ctx");
    }

    @Test
    void confiningUnderAClosedParentFailsAndRegistersNothing() throws Exception {
        List<String> log = new ArrayList<>();
        Node ctx = new Node(null, "ctx", log, false);
        Node pd = new Node(ctx, "pd", log, false);
        Node qp = new Node(pd, "qp", log, false);
        Node cq = new Node(ctx, "cq", log, false);
        qp.dependOn(cq);
        // cq closes qp with it: confining qp afterwards fails
        cq.close();
        assertThatThrownBy(qp::confineToCurrentThread).isInstanceOf(IllegalStateException.class);
        assertThat(onOtherThread(ctx::close)).isNull();
        assertThat(ctx.isClosed()).isTrue();
    }
}
