package dev.verbs4j.verbs;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * An enum whose constants stand for the values of one C enum, each with the name the rdma-core
 * tools print for it; one constant with a negative code stands for values this version does not
 * know. Each constant's constructor {@linkplain #define defines} its code and name, which this
 * interface then keeps and looks up for all such enums. Pure value; owns no native memory.
 */
interface IntCoded {

    /** The C value. */
    default int code() {
        return Tables.CODINGS.get(this).code();
    }

    /** The name the rdma-core tools print for it. */
    default String label() {
        return Tables.CODINGS.get(this).label();
    }

    /** Gives {@code constant}, from its constructor, its C value and printed name. */
    static void define(IntCoded constant, int code, String label) {
        Tables.CODINGS.put(constant, new Coding(code, label));
    }

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

    /** A constant's C value and printed name. */
    record Coding(int code, String label) {
    }

    /** The codings of every constant, and the lookup tables, one per enum type, indexed by code. */
    final class Tables {
        static final Map<IntCoded, Coding> CODINGS = new ConcurrentHashMap<>();

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
