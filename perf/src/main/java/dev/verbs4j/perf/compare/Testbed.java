package dev.verbs4j.perf.compare;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/** Where the server and the client of each run live: device, GID index and the address to connect to. */
final class Testbed {

    private Testbed() {
    }

    /** One side's device and GID index (-1: let the tool choose). */
    record Side(String device, int gidIndex) {
        /** The tool options naming this side's device. */
        List<String> options() {
            List<String> o = new ArrayList<>(List.of("-d", device));
            if (gidIndex >= 0) {
                o.addAll(List.of("-x", Integer.toString(gidIndex)));
            }
            return o;
        }
    }

    /** Both sides and the server's address. */
    record Sides(Side server, Side client, String host) {
    }

    static final Path SYSFS = Path.of("/sys/class/infiniband");

    static boolean hasDevices() {
        return !devices().isEmpty();
    }

    static List<String> devices() {
        if (!Files.isDirectory(SYSFS)) {
            return List.of();
        }
        try (Stream<Path> s = Files.list(SYSFS)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        } catch (IOException e) {
            return List.of();
        }
    }

    /**
     * The sides from the options, else from the test bed's environment (server on rxe_b, client on
     * rxe_a, across the veth pair), else the first device for both over 127.0.0.1.
     */
    static Sides sides(CompareOptions o) {
        String aDev = System.getenv("VERBS4J_A_DEV");
        String bDev = System.getenv("VERBS4J_B_DEV");
        boolean bed = aDev != null && bDev != null && System.getenv("VERBS4J_B_ADDR") != null;
        String serverDev = o.serverDev != null ? o.serverDev : bed ? bDev : first();
        String clientDev = o.clientDev != null ? o.clientDev : bed && o.serverDev == null ? aDev : serverDev;
        String host = o.host != null ? o.host : bed && o.serverDev == null ? System.getenv("VERBS4J_B_ADDR") : "127.0.0.1";
        return new Sides(new Side(serverDev, gid(serverDev)), new Side(clientDev, gid(clientDev)), host);
    }

    private static String first() {
        List<String> d = devices();
        if (d.isEmpty()) {
            throw new Compare.SetupException("no RDMA device (/sys/class/infiniband is empty)");
        }
        return d.get(0);
    }

    /** The test bed's IPv4-mapped RoCE v2 GID index for {@code dev}, or -1 (the tools' own choice). */
    private static int gid(String dev) {
        for (String k : List.of("LO", "A", "B")) {
            if (dev.equals(System.getenv("VERBS4J_" + k + "_DEV"))) {
                String g = System.getenv("VERBS4J_" + k + "_GID");
                if (g != null && g.matches("\\d+")) {
                    return Integer.parseInt(g);
                }
            }
        }
        return -1;
    }
}
