package dev.verbs4j.verbs;

/**
 * One valid entry of a port's GID table ({@code struct ibv_gid_entry}). Immutable value; owns no
 * native memory.
 *
 * @param gid        the GID
 * @param index      its index in the port's table
 * @param port       the port number (from 1)
 * @param type       IB, RoCE v1 or RoCE v2
 * @param netdevIndex the kernel interface index of the network device it belongs to (0 for IB)
 */
public record GidEntry(Gid gid, int index, int port, GidType type, int netdevIndex) {
}
