package dev.verbs4j.verbs;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The stress family of the misuse suite: {@link MisuseStress} with several seeds, each named in
 * its case, so that a failing seed can be run again alone ({@code -Dverbs4j.misuse.filter=seed 3}).
 */
final class MisuseStressCases {

    static final String FAMILY = "stress";
    static final int SEEDS = 6;
    static final int THREADS = 4;
    static final Duration DURATION = Duration.ofSeconds(3);

    private MisuseStressCases() {
    }

    static List<MisuseCase> all() {
        List<MisuseCase> cases = new ArrayList<>();
        for (int s = 1; s <= SEEDS; s++) {
            long seed = s;
            cases.add(MisuseCase.of(FAMILY, "seed " + seed + ", " + THREADS + " threads for " + DURATION.toSeconds()
                    + " s posting, polling, refilling and closing shared objects", () -> {
                try (MisuseStress stress = new MisuseStress(seed)) {
                    stress.run(THREADS, DURATION);
                }
            }));
        }
        return cases;
    }
}
