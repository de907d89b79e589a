package dev.verbs4j.verbs;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class CloseablesTest {

    private final List<String> closed = new ArrayList<>();

    private AutoCloseable ok(String name) {
        return () -> closed.add(name);
    }

    private AutoCloseable failing(String name, Exception e) {
        return () -> {
            closed.add(name);
            throw e;
        };
    }

    @Test
    void closeAllTriesEveryOneAndThrowsTheFirstFailureWithTheLaterSuppressed() {
        IllegalStateException first = new IllegalStateException("first");
        VerbsException second = new VerbsException("ibv_dereg_mr", Errno.EBUSY, "mr");
        assertThatThrownBy(() -> Closeables.closeAll(ok("a"), failing("b", first), null, failing("c", second), ok("d")))
                .isSameAs(first)
                .satisfies(t -> assertThat(t.getSuppressed()).containsExactly(second));
        assertThat(closed).containsExactly("a", "b", "c", "d");
    }

    @Test
    void closeAllWrapsACheckedFailureNamingTheResource() {
        AutoCloseable c = failing("x", new java.io.IOException("disk"));
        assertThatThrownBy(() -> Closeables.closeAll(c))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closing " + c)
                .hasCauseInstanceOf(java.io.IOException.class);
    }

    @Test
    void closeAllWithoutFailuresReturns() {
        Closeables.closeAll(ok("a"), null, ok("b"));
        assertThat(closed).containsExactly("a", "b");
    }

    @Test
    void closeAfterAddsEveryFailureToTheOneOnItsWayOut() {
        RuntimeException cause = new RuntimeException("connect failed");
        RuntimeException late = new IllegalStateException("late");
        RuntimeException returned = Closeables.closeAfter(cause, failing("a", late), ok("b"), failing("c", cause));
        assertThat(returned).isSameAs(cause);
        assertThat(cause.getSuppressed()).containsExactly(late);
        assertThat(closed).containsExactly("a", "b", "c");
    }

    @Test
    void closeLoggedLogsEachFailureAtWarningWithItsThrowable() {
        List<String> logged = new ArrayList<>();
        List<Throwable> thrown = new ArrayList<>();
        System.Logger log = new System.Logger() {
            @Override
            public String getName() {
                return "test";
            }

            @Override
            public boolean isLoggable(Level level) {
                return true;
            }

            @Override
            public void log(Level level, java.util.ResourceBundle bundle, String msg, Throwable t) {
                logged.add(level + " " + msg);
                thrown.add(t);
            }

            @Override
            public void log(Level level, java.util.ResourceBundle bundle, String format, Object... params) {
                logged.add(level + " " + format);
            }
        };
        RuntimeException e = new IllegalStateException("busy");
        AutoCloseable bad = failing("a", e);
        Closeables.closeLogged(log, bad, ok("b"));
        assertThat(closed).containsExactly("a", "b");
        assertThat(logged).containsExactly("WARNING closing " + bad + " failed");
        assertThat(thrown).containsExactly(e);
    }

    @Test
    void anInterruptedCloseKeepsTheInterruptStatus() {
        try {
            assertThatThrownBy(() -> Closeables.closeAll(failing("a", new InterruptedException())))
                    .hasCauseInstanceOf(InterruptedException.class);
            assertThat(Thread.currentThread().isInterrupted()).isTrue();
        } finally {
            Thread.interrupted();
        }
    }
}
