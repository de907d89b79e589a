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
}
