package dev.verbs4j.verbs;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Collectors;

/**
 * The after-close family of the misuse suite, made by reflection: every public method of every
 * {@link MisuseSubjects subject}, called with arguments from {@link MisuseArguments} after the
 * subject was closed in each of its ways, must refuse (unless {@link MisuseAllowList} says it may
 * succeed); and every method that takes an object that can be closed, called on a live subject
 * with that argument closed, must refuse too.
 */
final class MisuseAfterCloseCases {

    static final String AFTER_CLOSE = "after close";
    static final String CLOSED_ARGUMENT = "closed argument";

    private MisuseAfterCloseCases() {
    }

    static List<MisuseCase> all() {
        List<MisuseCase> cases = new ArrayList<>();
        for (MisuseSubject s : MisuseSubjects.all()) {
            for (MisuseSubject.Closer closer : s.closers()) {
                for (Method m : methods(s.type())) {
                    cases.add(afterClose(s, closer, m));
                }
            }
        }
        for (MisuseSubject s : MisuseSubjects.withArguments()) {
            for (Method m : methods(s.type())) {
                Class<?>[] types = m.getParameterTypes();
                for (int i = 0; i < types.length; i++) {
                    if (MisuseArguments.closable(types[i])) {
                        cases.add(closedArgument(s, m, i));
                    }
                }
            }
        }
        return cases;
    }

    /** The public instance methods of {@code type} (inherited ones too, not Object's), by signature. */
    static List<Method> methods(Class<?> type) {
        return Arrays.stream(type.getMethods())
                .filter(m -> !Modifier.isStatic(m.getModifiers()) && (!m.isBridge() && !m.isSynthetic() || accessBridge(m)))
                .filter(m -> m.getDeclaringClass() != Object.class)
                .sorted(Comparator.comparing(MisuseAfterCloseCases::signature))
                .toList();
    }

    /**
     * Whether {@code m} is the bridge javac writes into a public class for a public method it
     * inherits from a package-private one (the send and receive batches' shared base): the
     * method the application calls, so it is checked like a declared one.
     */
    private static boolean accessBridge(Method m) {
        for (Class<?> c = m.getDeclaringClass().getSuperclass(); c != null && c != Object.class; c = c.getSuperclass()) {
            if (!Modifier.isPublic(c.getModifiers())) {
                try {
                    Method inherited = c.getDeclaredMethod(m.getName(), m.getParameterTypes());
                    return inherited.getReturnType() == m.getReturnType() && Modifier.isPublic(inherited.getModifiers());
                } catch (NoSuchMethodException e) {
                    // not declared at this level
                }
            }
        }
        return false;
    }

    static String signature(Method m) {
        return m.getName() + Arrays.stream(m.getParameterTypes()).map(Class::getSimpleName)
                .collect(Collectors.joining(",", "(", ")"));
    }

    private static MisuseCase afterClose(MisuseSubject s, MisuseSubject.Closer closer, Method m) {
        String detail = s.name() + (closer.name().equals("itself") ? " closed" : " after closing " + closer.name())
                + ": " + signature(m);
        boolean allowed = MisuseAllowList.allowedAfterClose(s.type(), m);
        return MisuseCase.of(AFTER_CLOSE, detail, () -> {
            try (MisuseFixture f = new MisuseFixture(); MisuseFixture args = new MisuseFixture()) {
                Object subject = s.make().apply(f);
                Object[][] variants = {MisuseArguments.live(m, args, 0), MisuseArguments.live(m, args, 1)};
                closer.close().close(f, subject);
                for (Object[] a : variants) {
                    String what = s.name() + "." + signature(m) + " with " + MisuseArguments.describe(a) + " after closing " + closer.name();
                    if (allowed) {
                        MisuseExpect.clearOrNone(what, MisuseExpect.thrownBy(() -> m.invoke(subject, a)));
                    } else {
                        MisuseExpect.refused(what, () -> m.invoke(subject, a));
                    }
                }
            }
        });
    }

    private static MisuseCase closedArgument(MisuseSubject s, Method m, int index) {
        Class<?> type = m.getParameterTypes()[index];
        String detail = s.name() + "." + signature(m) + " given a closed " + type.getSimpleName()
                + (m.getParameterCount() > 1 ? " (argument " + (index + 1) + ")" : "");
        return MisuseCase.of(CLOSED_ARGUMENT, detail, () -> {
            try (MisuseFixture f = new MisuseFixture(); MisuseFixture live = new MisuseFixture();
                 MisuseFixture closed = new MisuseFixture()) {
                Object subject = s.make().apply(f);
                Object[] a = MisuseArguments.live(m, live, 1);
                a[index] = MisuseArguments.closed(type, closed);
                MisuseExpect.refused(s.name() + "." + signature(m) + " with " + MisuseArguments.describe(a), () -> m.invoke(subject, a));
            }
        });
    }
}
