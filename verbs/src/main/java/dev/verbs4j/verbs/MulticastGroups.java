package dev.verbs4j.verbs;

import dev.verbs4j.verbs.internal.Ibv;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The multicast groups a UD queue pair is attached to ({@code ibv_attach_mcast()}), detached
 * before the queue pair is destroyed. The queue pair holds itself open around each call; this
 * owns no native memory beyond a call's copy of the GID.
 */
final class MulticastGroups {

    /** A multicast group: its MGID and multicast LID. */
    private record Group(Gid mgid, int mlid) {
        @Override
        public String toString() {
            return "multicast group " + mgid + " (MLID 0x" + Integer.toHexString(mlid) + ")";
        }
    }

    private final QueuePair owner;
    /** The groups attached through {@code owner}, in the order attached; guarded by lock. */
    private final Set<Group> groups = new LinkedHashSet<>();
    private final ReentrantLock lock = new ReentrantLock();

    /** The groups of {@code owner}, named in messages. */
    MulticastGroups(QueuePair owner) {
        this.owner = owner;
    }

    /** Attaches {@code qp}, the owner's native queue pair, to a group it is not attached to. */
    void attach(MemorySegment qp, Gid mgid, int mlid) {
        Group g = group(mgid, mlid);
        lock.lock();
        try {
            if (groups.contains(g)) {
                throw new IllegalStateException(owner.describe() + " is attached to " + g + " already");
            }
            Ibv.check(call(true, qp, g), "ibv_attach_mcast", owner.describe() + ", " + g);
            groups.add(g);
        } finally {
            lock.unlock();
        }
    }

    /** Detaches {@code qp} from a group that {@link #attach} attached it to. */
    void detach(MemorySegment qp, Gid mgid, int mlid) {
        Group g = group(mgid, mlid);
        lock.lock();
        try {
            if (!groups.contains(g)) {
                throw new IllegalStateException(owner.describe() + " is not attached to " + g);
            }
            Ibv.check(call(false, qp, g), "ibv_detach_mcast", owner.describe() + ", " + g);
            groups.remove(g);
        } finally {
            lock.unlock();
        }
    }

    /** The MGIDs of the groups attached, in the order attached. */
    List<Gid> mgids() {
        lock.lock();
        try {
            return groups.stream().map(Group::mgid).toList();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Detaches {@code qp} from every group (a queue pair still attached cannot be destroyed:
     * EBUSY); returns the first failure with the later ones suppressed, or null.
     */
    RuntimeException detachAll(MemorySegment qp) {
        List<Group> attached;
        lock.lock();
        try {
            attached = List.copyOf(groups);
            groups.clear();
        } finally {
            lock.unlock();
        }
        RuntimeException failure = null;
        for (Group g : attached) {
            int rc = call(false, qp, g);
            if (rc != 0) {
                failure = Ownership.addFailure(failure, new VerbsException("ibv_detach_mcast", rc, owner.describe() + ", " + g));
            }
        }
        return failure;
    }

    /** The group of {@code mgid} and {@code mlid} after the checks that need no device. */
    private Group group(Gid mgid, int mlid) {
        check(owner.type(), mgid, mlid);
        return new Group(mgid, mlid);
    }

    /** Checks a multicast attach or detach of a queue pair of {@code type}. */
    static void check(QpType type, Gid mgid, int mlid) {
        if (type != QpType.UD) {
            throw new IllegalStateException("only UD queue pairs join multicast groups; this one is " + type);
        }
        if (mgid == null) {
            throw new IllegalArgumentException("mgid is null");
        }
        if (!mgid.isMulticast()) {
            throw new IllegalArgumentException("mgid " + mgid
                    + " is no multicast GID (ff00::/8, or an IPv4 group ::ffff:224.0.0.0/100)");
        }
        if (mlid != 0 && (mlid < 0xc000 || mlid > 0xfffe)) {
            throw new IllegalArgumentException("mlid 0x" + Integer.toHexString(mlid)
                    + " is no multicast LID (0 on RoCE, else 0xc000 to 0xfffe)");
        }
    }

    private static int call(boolean attach, MemorySegment qp, Group g) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment gid = arena.allocate(Gid.BYTES, 8);
            gid.copyFrom(MemorySegment.ofArray(g.mgid().raw()));
            return Ibv.multicast(attach, qp, gid, (short) g.mlid());
        }
    }
}
