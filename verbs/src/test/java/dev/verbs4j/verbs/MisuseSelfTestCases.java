package dev.verbs4j.verbs;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * Cases that check the misuse suite's harness rather than the library, included only with {@code
 * -Dverbs4j.misuse.selftest=true}: a case that fails, one that crashes its JVM (a call to address
 * 8), one that hangs, and passing cases around them, which must still run in a new child. Each of
 * the first three must then show as failed, crashed and hung.
 */
final class MisuseSelfTestCases {

    static final String FAMILY = "harness self-test";
    static final String PROPERTY = "verbs4j.misuse.selftest";

    private MisuseSelfTestCases() {
    }

    static List<MisuseCase> all() {
        if (!Boolean.getBoolean(PROPERTY)) {
            return List.of();
        }
        return List.of(
                MisuseCase.of(FAMILY, "passes", () -> { }),
                MisuseCase.of(FAMILY, "fails with an AssertionError", () -> {
                    throw new AssertionError("as it should");
                }),
                MisuseCase.of(FAMILY, "crashes the JVM", MisuseSelfTestCases::callAddress8),
                MisuseCase.of(FAMILY, "passes in the child started after the crash", () -> { }),
                MisuseCase.of(FAMILY, "hangs", () -> Thread.sleep(Long.MAX_VALUE)),
                MisuseCase.of(FAMILY, "passes in the child started after the hang", () -> { }));
    }

    @SuppressWarnings("restricted")
    private static void callAddress8() throws Throwable {
        Linker.nativeLinker().downcallHandle(MemorySegment.ofAddress(8), FunctionDescriptor.ofVoid()).invokeExact();
    }
}
