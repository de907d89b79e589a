package dev.verbs4j.vipl;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;

/**
 * A VI network address ({@code VIP_NET_ADDRESS}, §4.3, §9.10.8): a host address (the 4 or 16
 * bytes of the IP address of the RDMA interface) and an endpoint discriminator (opaque bytes, at
 * most the NIC's MaxDiscriminatorLen). A value holding copies of both arrays.
 *
 * @param hostAddress   the IPv4 or IPv6 address bytes
 * @param discriminator the discriminator bytes (may be empty)
 */
public record VipNetAddress(byte[] hostAddress, byte[] discriminator) {

    public VipNetAddress {
        hostAddress = hostAddress == null ? new byte[0] : hostAddress.clone();
        discriminator = discriminator == null ? new byte[0] : discriminator.clone();
    }

    /** The address of {@code host} (a literal IP address) with {@code discriminator}. */
    public static VipNetAddress of(String host, byte[] discriminator) {
        try {
            return new VipNetAddress(InetAddress.getByName(host).getAddress(), discriminator);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("not an address: " + host, e);
        }
    }

    /** The host address bytes (a copy). */
    @Override
    public byte[] hostAddress() {
        return hostAddress.clone();
    }

    /** The discriminator bytes (a copy). */
    @Override
    public byte[] discriminator() {
        return discriminator.clone();
    }

    /** The host address as an {@link InetAddress}, or null when its length is neither 4 nor 16. */
    public InetAddress inetAddress() {
        if (hostAddress.length != 4 && hostAddress.length != 16) {
            return null;
        }
        try {
            return InetAddress.getByAddress(hostAddress);
        } catch (UnknownHostException e) {
            return null;
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof VipNetAddress a && Arrays.equals(hostAddress, a.hostAddress)
                && Arrays.equals(discriminator, a.discriminator);
    }

    @Override
    public int hashCode() {
        return 31 * Arrays.hashCode(hostAddress) + Arrays.hashCode(discriminator);
    }

    @Override
    public String toString() {
        InetAddress a = inetAddress();
        return (a == null ? Arrays.toString(hostAddress) : a.getHostAddress()) + "/" + java.util.HexFormat.of().formatHex(discriminator);
    }
}
