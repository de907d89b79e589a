package dev.verbs4j.verbs;

/**
 * How one misuse case ended, as the parent JVM of the suite saw it ({@link MisuseSupervisor}).
 *
 * @param kind   passed, failed (the child reported it), skipped, crashed (the child JVM died in the
 *               case) or hung (the case did not end within its time)
 * @param detail the child's reason, or the exit status, hs_err head or thread dump; empty when passed
 */
record MisuseOutcome(Kind kind, String detail) {

    /** The ways a case ends. */
    enum Kind {
        PASSED, FAILED, SKIPPED, CRASHED, HUNG
    }

    static MisuseOutcome passed() {
        return new MisuseOutcome(Kind.PASSED, "");
    }
}
