package dev.verbs4j.rdmacm;

import java.time.Duration;
import java.util.Objects;

/**
 * How long each waiting {@link CmPhase} of a connection may take, and all of them together: a
 * phase ends at its own limit or when the whole runs out, whichever comes first. An immutable
 * value.
 *
 * @param addressResolution how long {@link CmPhase#ADDRESS_RESOLUTION} may wait for ADDR_RESOLVED
 * @param routeResolution   how long {@link CmPhase#ROUTE_RESOLUTION} may wait for ROUTE_RESOLVED
 * @param establishment     how long {@link CmPhase#CONNECTION} or {@link CmPhase#ACCEPTANCE} may
 *                          wait for the connection to be established
 * @param whole             how long the phases may take together
 */
public record CmTimeouts(Duration addressResolution, Duration routeResolution, Duration establishment, Duration whole) {

    /** 2 s to resolve the address, 2 s for the route, 30 s to be established (C programs' common choice, and the accept's). */
    public static final CmTimeouts DEFAULT = of(Duration.ofSeconds(2), Duration.ofSeconds(2), Duration.ofSeconds(30));

    public CmTimeouts {
        positive("addressResolution", addressResolution);
        positive("routeResolution", routeResolution);
        positive("establishment", establishment);
        positive("whole", whole);
    }

    /** A limit for each phase; together they may take the sum. */
    public static CmTimeouts of(Duration addressResolution, Duration routeResolution, Duration establishment) {
        return new CmTimeouts(addressResolution, routeResolution, establishment,
                addressResolution.plus(routeResolution).plus(establishment));
    }

    /** One limit for the whole connect: each phase may take what is left of it. */
    public static CmTimeouts within(Duration whole) {
        return new CmTimeouts(whole, whole, whole, whole);
    }

    /** The limit of waiting phase {@code phase}. */
    public Duration limit(CmPhase phase) {
        return switch (phase) {
            case ADDRESS_RESOLUTION -> addressResolution;
            case ROUTE_RESOLUTION -> routeResolution;
            case CONNECTION, ACCEPTANCE -> establishment;
            default -> throw new IllegalArgumentException(phase + " waits for no event: it has no timeout");
        };
    }

    private static void positive(String what, Duration d) {
        Objects.requireNonNull(d, what);
        if (d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(what + " must be positive, got " + d);
        }
    }
}
