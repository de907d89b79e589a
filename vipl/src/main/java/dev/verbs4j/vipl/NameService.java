package dev.verbs4j.vipl;

import java.net.InetAddress;
import java.net.UnknownHostException;

/** The name service of later VIPL (§13.1): the platform's resolver; the arguments were checked by {@link Vipl}. */
final class NameService {

    private NameService() {
    }

    /** VipNSGetHostByName: the {@code nameIndex}-th address of {@code name}, with an empty discriminator. */
    static VipNetAddress hostByName(String name, int nameIndex) {
        try {
            InetAddress[] all = InetAddress.getAllByName(name);
            if (nameIndex >= all.length) {
                throw new VipException(VipReturn.ERROR_NAMESERVICE, "VipNSGetHostByName", name + " has " + all.length + " addresses");
            }
            return new VipNetAddress(all[nameIndex].getAddress(), new byte[0]);
        } catch (UnknownHostException e) {
            throw new VipException(VipReturn.ERROR_NAMESERVICE, "VipNSGetHostByName", e.getMessage());
        }
    }

    /** VipNSGetHostByAddr: the host name of {@code address}'s host address. */
    static String hostByAddr(VipNetAddress address) {
        InetAddress a = address.inetAddress();
        String name = a.getCanonicalHostName();
        if (name.equals(a.getHostAddress())) {
            throw new VipException(VipReturn.ERROR_NAMESERVICE, "VipNSGetHostByAddr", "no name for " + name);
        }
        return name;
    }
}
