package dev.verbs4j.naaice;

import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The NAAs a job may use, as the NAAICE middleware (AP2) discovers them: the {@code NAA_SPEC}
 * environment variable, a comma-separated list of items {@code address:port:fn_code:param_count}
 * (e.g. {@code 10.3.10.42:12345:1:4}), set by the resource manager or by hand.
 *
 * <p>Parsing follows the C library exactly: every comma-separated chunk (empty ones included) is
 * split at each ':'; a chunk with other than exactly four fields is skipped. The address is taken
 * as it is (a host name or IPv4 address; IPv6 literals are impossible since ':' separates the
 * fields). The numbers are read like C's {@code strtol(s, NULL, 10)}: leading white space and a
 * sign, then decimal digits up to the first other character, 0 when there are none; the port is
 * then truncated to 16 bits, and an empty port field means {@value NaaClient#DEFAULT_PORT}. The
 * environment is read once per process ({@link #environment()}).
 *
 * <p>A spec also records which items are bound to an open {@link NaaHandle} (an item serves one
 * handle at a time; a handle takes the first free item with its function code). That bookkeeping
 * is synchronised, so handles may be created and closed from several threads. Plain Java object,
 * no native memory.
 */
public final class NaaSpec {

    /** The environment variable the C library reads the NAAs from. */
    public static final String ENV = "NAA_SPEC";
    /** The environment variable with the local (source) address for the connections, optional. */
    public static final String LOCAL_IP_ENV = "NAA_LOCAL_IP";

    /**
     * One NAA of the spec.
     *
     * @param address    the NAA's host name or IPv4 address (may be empty, as in C)
     * @param port       its port (0..65535)
     * @param fnCode     the function code it serves (an unsigned 32-bit value, as in C)
     * @param paramCount the number of input parameters its function takes
     */
    public record Item(String address, int port, long fnCode, long paramCount) {
    }

    private static final ReentrantLock ENVIRONMENT_LOCK = new ReentrantLock();
    /** Under {@link #ENVIRONMENT_LOCK}. */
    private static NaaSpec environment;

    private final List<Item> items;
    /** Guards {@link #bound}. */
    private final ReentrantLock lock = new ReentrantLock();
    private final Map<Item, Object> bound = new IdentityHashMap<>();

    private NaaSpec(List<Item> items) {
        this.items = Collections.unmodifiableList(items);
    }

    /** The spec of {@code value} (the text of {@code NAA_SPEC}); null means no NAAs. */
    public static NaaSpec parse(String value) {
        List<Item> items = new ArrayList<>();
        if (value != null) {
            for (String chunk : value.split(",", -1)) {
                String[] f = chunk.split(":", -1);
                if (f.length != 4) {
                    continue;
                }
                int port = f[1].isEmpty() ? NaaClient.DEFAULT_PORT : (int) (strtol(f[1]) & 0xffff);
                items.add(new Item(f[0], port, strtol(f[2]) & 0xffff_ffffL, strtol(f[3]) & 0xffff_ffffL));
            }
        }
        return new NaaSpec(new ArrayList<>(items));
    }

    /**
     * The spec of this process's {@code NAA_SPEC}, read the first time this is called; without
     * the variable, a spec without NAAs (and a warning in the log, as the C library does).
     */
    public static NaaSpec environment() {
        ENVIRONMENT_LOCK.lock();
        try {
            if (environment == null) {
                String v = System.getenv(ENV);
                if (v == null) {
                    System.getLogger(NaaSpec.class.getName()).log(System.Logger.Level.WARNING,
                            "environment variable " + ENV + " not set: no NAAs usable");
                }
                environment = parse(v);
            }
            return environment;
        } finally {
            ENVIRONMENT_LOCK.unlock();
        }
    }

    /** This process's {@code NAA_LOCAL_IP}, or null. */
    public static String localAddressFromEnvironment() {
        String v = System.getenv(LOCAL_IP_ENV);
        return v == null || v.isEmpty() ? null : v;
    }

    /** The items, in the order of the variable (skipped chunks left out). */
    public List<Item> items() {
        return items;
    }

    /** Binds the first free item serving {@code fnCode} to {@code owner}; null when there is none. */
    Item bind(long fnCode, Object owner) {
        lock.lock();
        try {
            for (Item i : items) {
                if (i.fnCode() == fnCode && !bound.containsKey(i)) {
                    bound.put(i, owner);
                    return i;
                }
            }
            return null;
        } finally {
            lock.unlock();
        }
    }

    /** Frees {@code item} if {@code owner} holds it. */
    void release(Item item, Object owner) {
        lock.lock();
        try {
            if (bound.get(item) == owner) {
                bound.remove(item);
            }
        } finally {
            lock.unlock();
        }
    }

    /** Items currently bound to an open handle. */
    public int boundCount() {
        lock.lock();
        try {
            return bound.size();
        } finally {
            lock.unlock();
        }
    }

    /** C's {@code strtol(s, NULL, 10)}, saturating at the long range. */
    static long strtol(String s) {
        int i = 0;
        int n = s.length();
        while (i < n && (s.charAt(i) == ' ' || (s.charAt(i) >= '\t' && s.charAt(i) <= '\r'))) {
            i++;
        }
        boolean negative = false;
        if (i < n && (s.charAt(i) == '+' || s.charAt(i) == '-')) {
            negative = s.charAt(i) == '-';
            i++;
        }
        long v = 0;
        boolean overflow = false;
        for (; i < n && s.charAt(i) >= '0' && s.charAt(i) <= '9'; i++) {
            int d = s.charAt(i) - '0';
            if (v > (Long.MAX_VALUE - d) / 10) {
                overflow = true;
            } else {
                v = v * 10 + d;
            }
        }
        if (overflow) {
            return negative ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
        return negative ? -v : v;
    }

    @Override
    public String toString() {
        return "NaaSpec" + items;
    }
}
