package dev.verbs4j.verbs;

/**
 * An enum whose constants stand for the values of one C enum, each with the name the rdma-core
 * tools print for it; one constant with a negative code stands for values this version does not
 * know. Pure value; owns no native memory.
 */
interface IntCoded {

    /** The C value. */
    int code();

    /** The name the rdma-core tools print for it. */
    String label();

    /**
     * The constant of {@code type} whose code is {@code code}, or {@code unknown}. The lookup table
     * of each type is built on first use and kept.
     */
    static <E extends Enum<E> & IntCoded> E of(Class<E> type, int code, E unknown) {
        Enum<?>[] table = Tables.BY_CODE.get(type);
        if (code >= 0 && code < table.length && table[code] != null) {
            return type.cast(table[code]);
        }
        return unknown;
    }

    /** The lookup tables, one per enum type, indexed by code. */
    final class Tables {
        static final ClassValue<Enum<?>[]> BY_CODE = new ClassValue<>() {
            @Override
            protected Enum<?>[] computeValue(Class<?> type) {
                int size = 0;
                for (Object constant : type.getEnumConstants()) {
                    size = Math.max(size, ((IntCoded) constant).code() + 1);
                }
                Enum<?>[] table = new Enum<?>[size];
                for (Object constant : type.getEnumConstants()) {
                    int code = ((IntCoded) constant).code();
                    if (code >= 0) {
                        table[code] = (Enum<?>) constant;
                    }
                }
                return table;
            }
        };

        private Tables() {}
    }
}
