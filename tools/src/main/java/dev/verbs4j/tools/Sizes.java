package dev.verbs4j.tools;

import java.util.Locale;

/**
 * The size syntax of the tools' own options (not of the C twins', which keep C's number parsing):
 * a decimal number of bytes with an optional binary suffix, {@code k} (KiB), {@code m} (MiB) or
 * {@code g} (GiB), in either case: {@code 4096}, {@code 4k}, {@code 4K}, {@code 1m}.
 */
public final class Sizes {

    private Sizes() {
    }

    /**
     * The number of bytes {@code text} names (blanks around it ignored).
     *
     * @throws NumberFormatException when it is not a number with an optional suffix, or beyond a long
     */
    public static long parse(String text) {
        String t = text.strip().toLowerCase(Locale.ROOT);
        int shift = 0;
        if (!t.isEmpty()) {
            switch (t.charAt(t.length() - 1)) {
                case 'k' -> shift = 10;
                case 'm' -> shift = 20;
                case 'g' -> shift = 30;
                default -> { }
            }
        }
        String digits = shift == 0 ? t : t.substring(0, t.length() - 1);
        if (digits.isEmpty() || !digits.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw new NumberFormatException("not a size: '" + text + "'");
        }
        long v = Long.parseLong(digits);
        if (v > Long.MAX_VALUE >> shift) {
            throw new NumberFormatException("too large: '" + text + "'");
        }
        return v << shift;
    }
}
