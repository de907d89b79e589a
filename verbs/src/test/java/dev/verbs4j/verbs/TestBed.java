package dev.verbs4j.verbs;

import java.util.Map;

/**
 * The RDMA devices a device test runs on, as {@code bin/softroce} describes them in the
 * environment. The one switch for tests: {@link #loopback()} for single-host verbs tests,
 * {@link #hostA()} and {@link #hostB()} for two-host tests and for RDMA CM.
 */
public final class TestBed {

    /** The JUnit tag of tests that need an RDMA device; they run inside bin/softroce. */
    public static final String TAG = "softroce";

    /*
     * The shards of the device tests: each class tagged TAG carries exactly one of these, and
     * bin/test runs each shard in a VM of its own (ShardsTest checks both). Shard 1: verbs, RDMA
     * CM and their tools, VIPL's waits on virtual threads. Shard 2: the NAAICE load test classes
     * and the killed NAAICE peers, the perftest sweeps and the perftest options that end runs. Shard 3: the other perf, VIPL
     * and NAAICE classes and their tools. The misuse suite has a shard of its own (bin/test
     * runs its stress cases and the others in two VMs, each case once). EXTERNAL: needs a
     * build from outside this repository (named in the class), so bin/test runs it only when
     * that build is given.
     */
    /** Device test shard 1 (see the shards above). */
    public static final String SHARD_1 = "shard1";
    /** Device test shard 2. */
    public static final String SHARD_2 = "shard2";
    /** Device test shard 3. */
    public static final String SHARD_3 = "shard3";
    /** The misuse suite's shard. */
    public static final String SHARD_MISUSE = "shard-misuse";
    /** Device tests that need a build from outside this repository. */
    public static final String SHARD_EXTERNAL = "shard-external";

    /**
     * One end of the test bed.
     *
     * @param device   the RDMA device name
     * @param address  its IPv4 address
     * @param gidIndex the index of its RoCE v2 IPv4-mapped GID
     */
    public record Host(String device, String address, int gidIndex) {
    }

    private TestBed() {
    }

    /** The rxe device on the loopback interface (127.0.0.1); RDMA CM cannot route over it. */
    public static Host loopback() {
        return host("LO");
    }

    /** The first end of the veth pair. */
    public static Host hostA() {
        return host("A");
    }

    /** The second end of the veth pair. */
    public static Host hostB() {
        return host("B");
    }

    private static Host host(String which) {
        Map<String, String> env = System.getenv();
        String dev = env.get("VERBS4J_" + which + "_DEV");
        String addr = env.get("VERBS4J_" + which + "_ADDR");
        String gid = env.get("VERBS4J_" + which + "_GID");
        if (dev == null || addr == null || gid == null) {
            throw new IllegalStateException("VERBS4J_" + which + "_DEV/_ADDR/_GID are not set: device tests"
                    + " (tag '" + TAG + "') run under bin/softroce, e.g. through bin/test");
        }
        return new Host(dev, addr, Integer.parseInt(gid));
    }
}
