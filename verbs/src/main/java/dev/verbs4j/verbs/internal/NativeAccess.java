package dev.verbs4j.verbs.internal;

/**
 * Checks, before the first native call, that the JVM grants native access to verbs4j, and says
 * how to grant it when it does not (instead of a JDK warning now and an error in a later JDK).
 */
public final class NativeAccess {

    private NativeAccess() {
    }

    /**
     * Throws an {@link IllegalStateException} naming the java option to add when native access
     * is not enabled for this module or for the generated bindings.
     */
    public static void require() {
        Module self = NativeAccess.class.getModule();
        Module bindings = dev.verbs4j.bindings.rdma_core_h.class.getModule();
        if (self.isNativeAccessEnabled() && bindings.isNativeAccessEnabled()) {
            return;
        }
        String option = self.isNamed()
                ? "--enable-native-access=" + bindings.getName() + "," + self.getName()
                        + " (plus every other verbs4j module you load)"
                : "--enable-native-access=ALL-UNNAMED";
        throw new IllegalStateException(
                "verbs4j calls libibverbs through the FFM API and needs native access, which this JVM"
                        + " does not grant to " + describe(self) + ". Add " + option
                        + " to the java command line (bin/verbs4j does this for you).");
    }

    private static String describe(Module m) {
        return m.isNamed() ? "module " + m.getName() : "the class path (unnamed module)";
    }
}
