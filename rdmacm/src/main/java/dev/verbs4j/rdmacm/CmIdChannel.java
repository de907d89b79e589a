package dev.verbs4j.rdmacm;

import dev.verbs4j.rdmacm.internal.Cma;
import dev.verbs4j.verbs.Closeables;
import dev.verbs4j.verbs.NativeResource;

import java.lang.foreign.MemorySegment;
import java.util.function.Consumer;

/**
 * The event channel of one {@link CmId}: the application's, or (a synchronous id) a channel of
 * the id's own, and the id's moves between channels ({@code rdma_migrate_id}). Owns the id's own
 * channel (closed when the id leaves it, or by the id's destroy); an application's channel is
 * only depended on.
 */
final class CmIdChannel {

    /** Where the id's events arrive: {@code channel}, the id's own ({@code own}, closed with it) or the application's. */
    record Binding(EventChannel channel, boolean own) {
    }

    private final CmId owner;
    private final MemorySegment id;
    /** The id's {@code dependOn} and {@code stopDependingOn}: an application's channel closes the id first. */
    private final Consumer<NativeResource> dependOn;
    private final Consumer<NativeResource> stopDependingOn;
    private volatile Binding binding;

    CmIdChannel(CmId owner, MemorySegment id, Binding binding, Consumer<NativeResource> dependOn,
                Consumer<NativeResource> stopDependingOn) {
        this.owner = owner;
        this.id = id;
        this.binding = binding;
        this.dependOn = dependOn;
        this.stopDependingOn = stopDependingOn;
    }

    Binding binding() {
        return binding;
    }

    /** The channel librdmacm reports the id's events on (also a synchronous id's own). */
    EventChannel current() {
        return binding.channel();
    }

    /** Whether the id is synchronous: its channel is its own. */
    boolean isOwn() {
        return binding.own();
    }

    /**
     * {@link CmId#migrate}: to {@code target}, or to a channel of the id's own when null. The
     * caller holds the id and its operation lock.
     */
    void migrate(EventChannel target) {
        Binding b = binding;
        if (target == null) {
            if (!b.own()) {
                toOwn();
            }
        } else if (target != b.channel() || b.own()) {
            moveTo(target, false);
        }
    }

    /** Moves the id to a new channel of its own (it becomes synchronous); the caller holds the id. */
    void toOwn() {
        EventChannel own = EventChannel.createOwn("rdma_migrate_id", owner.describe());
        try {
            moveTo(own, true);
        } catch (RuntimeException e) {
            throw Closeables.closeAfter(e, own);
        }
    }

    /**
     * Moves the id to {@code target}, the application's channel or ({@code own}) a new channel of
     * the id's own; a previous own channel is closed. Registered on both channels while it moves,
     * so that no event of it is dropped; holds the queue pair lock so that the channel does not
     * change under a queue pair being destroyed.
     */
    private void moveTo(EventChannel target, boolean own) {
        owner.queuePairPart().lock().writeLock().lock();
        Binding old = binding;
        try {
            CmId.holding(target, () -> {
                if (!own) {
                    dependOn.accept(target);
                }
                target.register(id.address(), owner);
                try {
                    CmId.holding(old.channel(), () -> Cma.call(Cma.MIGRATE_ID, "rdma_migrate_id", owner.describe(), id,
                            target.handle_()));
                } catch (RuntimeException e) {
                    target.unregister(id.address());
                    if (!own) {
                        stopDependingOn.accept(target);
                    }
                    throw e;
                }
                binding = new Binding(target, own);
                old.channel().unregister(id.address());
                if (!old.own()) {
                    stopDependingOn.accept(old.channel());
                }
            });
        } finally {
            owner.queuePairPart().lock().writeLock().unlock();
        }
        if (old.own()) {
            old.channel().close(); // the id's own, now empty
        }
    }
}
