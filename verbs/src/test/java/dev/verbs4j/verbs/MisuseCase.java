package dev.verbs4j.verbs;

/**
 * One case of the misuse suite: a unique one-line name, the family it belongs to, and the code
 * that tries the misuse. The code returns normally when the library refused the misuse as it
 * should (a clear exception, an error completion), throws {@link AssertionError} when it did not,
 * and runs in a child JVM ({@link MisuseChild}), so that a crash fails this case alone.
 *
 * @param family what kind of misuse ({@link MisuseCases} lists the families)
 * @param name   unique across the suite, without line breaks; the family is its first word(s)
 * @param body   the code
 */
record MisuseCase(String family, String name, Body body) {

    /** The code of a case. */
    @FunctionalInterface
    interface Body {
        void run() throws Throwable;
    }

    MisuseCase {
        if (name.contains("\n") || name.contains("\r")) {
            throw new IllegalArgumentException("a case name is one line: " + name);
        }
    }

    /** A case named {@code family + ": " + detail}. */
    static MisuseCase of(String family, String detail, Body body) {
        return new MisuseCase(family, family + ": " + detail, body);
    }
}
