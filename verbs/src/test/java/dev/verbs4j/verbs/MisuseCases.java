package dev.verbs4j.verbs;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Every case of the misuse suite, family after family: after close and closed arguments ({@link
 * MisuseAfterCloseCases}), concurrent close ({@link MisuseConcurrentCloseCases}), descriptor
 * lifetimes ({@link MisuseDescriptorCases}), the extended APIs' protocol ({@link
 * MisuseExtendedProtocolCases}), confined batches on the wrong thread ({@link
 * MisuseConfinementCases}), extreme arguments ({@link MisuseExtremeArgumentCases}), registered
 * memory ({@link MisuseRegisteredMemoryCases}) and seeded random stress ({@link
 * MisuseStressCases}); first, on request, the harness's own checks ({@link MisuseSelfTestCases}).
 * Making the list runs no verbs call, so the parent JVM lists the cases that its children run.
 */
final class MisuseCases {

    private MisuseCases() {
    }

    static List<MisuseCase> all() {
        List<MisuseCase> all = new ArrayList<>(MisuseSelfTestCases.all());
        all.addAll(MisuseAfterCloseCases.all());
        all.addAll(MisuseConcurrentCloseCases.all());
        all.addAll(MisuseDescriptorCases.all());
        all.addAll(MisuseExtendedProtocolCases.all());
        all.addAll(MisuseConfinementCases.all());
        all.addAll(MisuseExtremeArgumentCases.all());
        all.addAll(MisuseRegisteredMemoryCases.all());
        all.add(xrc());
        // last: the stress cases close contexts under busy threads for seconds on end
        all.addAll(MisuseStressCases.all());
        return all;
    }

    /**
     * XRC where the device may have none (Soft-RoCE): opening a domain either works, and the domain
     * is then refused after close, or is refused with a clear {@link VerbsException} naming the
     * verb, and the context goes on working.
     */
    private static MisuseCase xrc() {
        return MisuseCase.of("xrc", "an XRC domain opens and is refused after close, or is refused clearly", () -> {
            try (MisuseFixture f = new MisuseFixture()) {
                XrcDomain xrcd;
                try {
                    xrcd = f.ctx.openXrcDomain();
                } catch (VerbsException e) {
                    if (!"ibv_open_xrcd".equals(e.verb()) || e.errno() == 0) {
                        throw new AssertionError("an unclear refusal: " + e, e);
                    }
                    f.ctx.allocateProtectionDomain().close();
                    return;
                }
                xrcd.close();
                try {
                    xrcd.createReceiveQueuePair();
                    throw new AssertionError("a closed XRC domain created a queue pair");
                } catch (IllegalStateException expected) {
                    // refused
                }
            }
        });
    }

    /** The cases by name, in order. */
    static Map<String, MisuseCase> byName() {
        Map<String, MisuseCase> byName = new LinkedHashMap<>();
        for (MisuseCase c : all()) {
            if (byName.put(c.name(), c) != null) {
                throw new IllegalStateException("two misuse cases are named " + c.name());
            }
        }
        return byName;
    }
}
