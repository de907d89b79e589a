package dev.verbs4j.verbs;

import java.util.List;

/**
 * A verbs object without a native one, for the host tests of the lifetime parts: its
 * {@link #destroy()} appends its name to a shared log, runs a hook, and fails on request.
 */
class FakeResource extends NativeResource {
    final String name;
    final List<String> log;
    final boolean fail;
    /** Runs inside {@link #destroy()}, before it logs. */
    volatile Runnable onDestroy = () -> { };

    FakeResource(NativeResource parent, String name, List<String> log, boolean fail, NativeResource... used) {
        this(parent, name, log, fail, () -> { }, used);
    }

    /** An object that runs {@code beforeAttach} once it exists, before it joins the tree. */
    FakeResource(NativeResource parent, String name, List<String> log, boolean fail, Runnable beforeAttach,
                 NativeResource... used) {
        super(parent);
        this.name = name;
        this.log = log;
        this.fail = fail;
        beforeAttach.run();
        attach(used);
    }

    FakeResource(NativeResource parent, String name, List<String> log) {
        this(parent, name, log, false);
    }

    /** A control-path call that holds this object while {@code body} runs. */
    void call(Runnable body) {
        try (Use held = use()) {
            body.run();
        }
    }

    void touch() {
        ensureOpen();
    }

    @Override
    protected void destroy() {
        onDestroy.run();
        log.add(name);
        if (fail) {
            throw new VerbsException("ibv_destroy_" + name, Errno.EBUSY, null);
        }
    }

    @Override
    protected String describe() {
        return "Node " + name;
    }

    /** Runs {@code body} on a new thread and returns what it threw, or null. */
    static Throwable onOtherThread(Runnable body) throws InterruptedException {
        Throwable[] thrown = new Throwable[1];
        Thread t = new Thread(() -> {
            try {
                body.run();
            } catch (Throwable e) {
                thrown[0] = e;
            }
        }, "other");
        t.start();
        t.join();
        return thrown[0];
    }
}
