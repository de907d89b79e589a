package dev.verbs4j.verbs;

import java.lang.reflect.InvocationTargetException;
import java.util.Locale;

/**
 * What the misuse suite accepts as a refusal, and assertions built on it. A clear refusal is an
 * {@link IllegalStateException}, {@link IllegalArgumentException}, {@link
 * IndexOutOfBoundsException}, {@link VerbsException} or {@link WrongThreadException}; anything else
 * thrown (a {@link NullPointerException}, an {@link Error}) is a failure, and so is silent success
 * where misuse happened.
 */
final class MisuseExpect {

    private MisuseExpect() {
    }

    /** A call that may throw anything. */
    @FunctionalInterface
    interface Call {
        Object run() throws Throwable;
    }

    /** A call without a result. */
    @FunctionalInterface
    interface Action {
        void run() throws Throwable;
    }

    /** Records on standard error (the child's log) how a misuse ended, for whoever reads the log. */
    static void note(String what, Object outcome) {
        String text = outcome instanceof Throwable t ? t.getClass().getSimpleName() + ": " + t.getMessage() : String.valueOf(outcome);
        System.err.println("   " + what + " -> " + MisuseChild.oneLine(text));
    }

    /** Whether {@code t} is one of the exceptions that refuse misuse clearly. */
    static boolean isClearRefusal(Throwable t) {
        return t instanceof IllegalStateException || t instanceof IllegalArgumentException
                || t instanceof IndexOutOfBoundsException || t instanceof VerbsException || t instanceof WrongThreadException;
    }

    /** Runs {@code call}; its exception unwrapped from reflection, or null when it returned. */
    static Throwable thrownBy(Call call) {
        try {
            call.run();
            return null;
        } catch (InvocationTargetException e) {
            return e.getCause();
        } catch (Throwable t) {
            return t;
        }
    }

    /** Asserts that {@code call} throws a clear refusal; {@code what} says what was tried. */
    static Throwable refused(String what, Action call) {
        Throwable t = thrownBy(() -> {
            call.run();
            return null;
        });
        if (t == null) {
            throw new AssertionError("silent success: " + what + " returned normally");
        }
        if (!isClearRefusal(t)) {
            throw new AssertionError(what + " threw " + t.getClass().getName() + " instead of a clear refusal: " + t.getMessage(), t);
        }
        note(what, t);
        return t;
    }

    /**
     * Asserts that {@code call} throws an {@link IllegalStateException} that names {@code type}
     * (its simple name, or in words: "MemoryRegion" or "memory region").
     */
    static IllegalStateException refusedNaming(String what, Class<?> type, Action call) {
        Throwable t = refused(what, call);
        if (!(t instanceof IllegalStateException ise)) {
            throw new AssertionError(what + " threw " + t + ", not an IllegalStateException naming the closed " + type.getSimpleName(), t);
        }
        if (!names(ise.getMessage(), type)) {
            throw new AssertionError(what + ": the IllegalStateException does not name the closed " + type.getSimpleName()
                    + ": " + ise.getMessage(), ise);
        }
        return ise;
    }

    /** Whether {@code message} names {@code type} as its simple name or in lower-case words. */
    static boolean names(String message, Class<?> type) {
        if (message == null) {
            return false;
        }
        String simple = type.getSimpleName();
        String words = simple.replaceAll("([a-z])([A-Z])", "$1 $2").toLowerCase(Locale.ROOT);
        return message.contains(simple) || message.toLowerCase(Locale.ROOT).contains(words);
    }

    /** Fails when {@code t} is set and not a clear refusal. */
    static void clearOrNone(String what, Throwable t) {
        if (t != null && !isClearRefusal(t)) {
            throw new AssertionError(what + " threw " + t.getClass().getName() + " instead of a clear refusal: " + t.getMessage(), t);
        }
    }

    /** A one-line description of {@code t} for a FAIL line: class, message, cause, first frames. */
    static String describe(Throwable t) {
        StringBuilder s = new StringBuilder(MisuseChild.oneLine(t.getClass().getSimpleName().equals("AssertionError")
                ? String.valueOf(t.getMessage()) : t.toString()));
        Throwable cause = t.getCause();
        if (cause != null && cause != t) {
            s.append(" | caused by ").append(MisuseChild.oneLine(cause.toString()));
            t = cause;
        }
        StackTraceElement[] frames = t.getStackTrace();
        int shown = 0;
        for (StackTraceElement f : frames) {
            if (shown >= 4) {
                break;
            }
            if (f.getClassName().startsWith("dev.verbs4j.") || shown == 0) {
                s.append(" | at ").append(f);
                shown++;
            }
        }
        return s.toString();
    }
}
