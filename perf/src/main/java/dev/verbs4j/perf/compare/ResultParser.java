package dev.verbs4j.perf.compare;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads the result rows of a perftest 4.5 table (the C tools and their Java twins print the same
 * layout): a latency row is {@code #bytes #iterations t_min t_max t_typical t_avg t_stdev 99% 99.9%},
 * a bandwidth row {@code #bytes #iterations BW_peak BW_average MsgRate}. Only rows under the
 * matching table header are read.
 */
final class ResultParser {

    private ResultParser() {
    }

    /** Column of t_typical in a latency row. */
    static final int T_TYPICAL = 4;
    /** Column of MsgRate in a bandwidth row. */
    static final int MSG_RATE = 4;

    /**
     * The compared value of each row, by message size, in output order: t_typical (usec) for a
     * latency table, MsgRate (Mpps) for a bandwidth table (at one size the BW average is MsgRate
     * times the size, but MsgRate has six decimals where BW has two: 0.00 MB/sec at 2 B in a VM). A value perftest could not compute
     * ({@code inf}, {@code -nan}, unparsable) is NaN; {@link #usable} tells which values count.
     */
    static Map<Long, Double> values(List<String> lines, boolean latency) {
        Map<Long, Double> out = new LinkedHashMap<>();
        boolean inTable = false;
        for (String line : lines) {
            String s = line.strip();
            if (s.startsWith("#bytes")) {
                inTable = latency ? s.contains("t_typical") : s.contains("BW average");
                continue;
            }
            if (!inTable) {
                continue;
            }
            if (s.startsWith("---")) {
                inTable = false;
                continue;
            }
            String[] f = s.split("[ \t]+");
            int column = latency ? T_TYPICAL : MSG_RATE;
            if (f.length <= column || !f[0].matches("\\d+") || !f[1].matches("\\d+")) {
                continue;
            }
            out.put(Long.parseLong(f[0]), number(f[column]));
        }
        return out;
    }

    /** A printed number; NaN for {@code inf}, {@code -nan} and anything else that is not a plain decimal. */
    static double number(String text) {
        if (!text.matches("-?\\d+(\\.\\d+)?")) {
            return Double.NaN;
        }
        return Double.parseDouble(text);
    }

    /**
     * Whether a value is a measurement: finite and above zero. perftest prints {@code inf}/{@code -nan}
     * (latency) or 0.00 (bandwidth with {@code -F}) when its cycle-counter calibration failed.
     */
    static boolean usable(double v) {
        return Double.isFinite(v) && v > 0;
    }
}
