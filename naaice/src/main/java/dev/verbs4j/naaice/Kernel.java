package dev.verbs4j.naaice;

/**
 * A computation the software NAA runs when an RPC with its function code arrives. Implementations
 * work in place on the connection's regions ({@link KernelCall}); they may keep no reference to
 * them after returning. Called on the connection's worker, a virtual thread (blocking in a kernel
 * parks it; computing for long holds one of the JVM's carriers meanwhile); one kernel object serves all
 * connections, so it must be thread-safe if it has state.
 */
@FunctionalInterface
public interface Kernel {

    /**
     * Runs the computation.
     *
     * @return 0 on success, or an error code 1..255 for the reply immediate (0x10..0x7f for
     *         application errors); a thrown exception is reported as {@link Immediate#APPLICATION_ERROR}
     */
    int run(KernelCall call) throws Exception;
}
