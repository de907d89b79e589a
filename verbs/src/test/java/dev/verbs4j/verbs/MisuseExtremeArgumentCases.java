package dev.verbs4j.verbs;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;

/**
 * The extreme-argument family of the misuse suite: every public method with int or long
 * parameters, on a live object of each {@link MisuseSubjects subject}, is called with -1, the
 * type's minimum and its maximum in each such parameter in turn (the others plausible). The call
 * may succeed (the value may be valid) or refuse clearly; an error of another kind, a crash or a
 * hang fails. The batch constructors get -1, 0 and the minimum.
 */
final class MisuseExtremeArgumentCases {

    static final String FAMILY = "extreme arguments";

    private MisuseExtremeArgumentCases() {
    }

    static List<MisuseCase> all() {
        List<MisuseCase> cases = new ArrayList<>();
        for (MisuseSubject s : MisuseSubjects.withArguments()) {
            for (Method m : MisuseAfterCloseCases.methods(s.type())) {
                if (numericParameters(m).isEmpty()) {
                    continue;
                }
                String sig = MisuseAfterCloseCases.signature(m);
                cases.add(MisuseCase.of(FAMILY, s.name() + "." + sig, () -> {
                    try (MisuseFixture f = new MisuseFixture()) {
                        Object subject = s.make().apply(f);
                        for (int i : numericParameters(m)) {
                            for (Object extreme : extremes(m.getParameterTypes()[i])) {
                                Object[] args = MisuseArguments.live(m, f, 1);
                                args[i] = extreme;
                                String what = s.name() + "." + sig + " with " + MisuseArguments.describe(args);
                                Throwable t = MisuseExpect.thrownBy(() -> m.invoke(subject, args));
                                MisuseExpect.clearOrNone(what, t);
                                MisuseExpect.note(what, t == null ? "returned" : t);
                            }
                        }
                    }
                }));
            }
        }
        for (int bad : new int[]{-1, 0, Integer.MIN_VALUE}) {
            cases.add(MisuseCase.of(FAMILY, "new SendRequests(" + bad + ", " + bad + ")", () -> refusedArgument(() -> new SendRequests(bad, bad))));
            cases.add(MisuseCase.of(FAMILY, "SendRequests.confined(1, " + bad + ")", () -> refusedArgument(() -> SendRequests.confined(1, bad))));
            cases.add(MisuseCase.of(FAMILY, "new ReceiveRequests(" + bad + ", 1)", () -> refusedArgument(() -> new ReceiveRequests(bad, 1))));
            cases.add(MisuseCase.of(FAMILY, "new WorkCompletions(" + bad + ")", () -> refusedArgument(() -> new WorkCompletions(bad))));
        }
        return cases;
    }

    private static void refusedArgument(MisuseExpect.Action make) {
        Throwable t = MisuseExpect.refused("the constructor", make);
        if (!(t instanceof IllegalArgumentException)) {
            throw new AssertionError("expected an IllegalArgumentException, got " + t, t);
        }
    }

    private static List<Integer> numericParameters(Method m) {
        List<Integer> at = new ArrayList<>();
        Class<?>[] types = m.getParameterTypes();
        for (int i = 0; i < types.length; i++) {
            if (types[i] == int.class || types[i] == long.class) {
                at.add(i);
            }
        }
        return at;
    }

    private static List<Object> extremes(Class<?> type) {
        return type == int.class ? List.of(-1, Integer.MIN_VALUE, Integer.MAX_VALUE) : List.of(-1L, Long.MIN_VALUE, Long.MAX_VALUE);
    }
}
