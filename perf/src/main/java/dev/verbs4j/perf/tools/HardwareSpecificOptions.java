package dev.verbs4j.perf.tools;

/**
 * The options of perftest 4.5 that need one vendor's hardware: mlx5 crypto ({@code --aes_xts} and
 * its keys) and DC streams. They are parsed, and refused by {@link OptionDependencies} as perftest
 * refuses them without that hardware. Mutable while the command line is parsed; no native resources.
 */
final class HardwareSpecificOptions {

    boolean aesXts;
    boolean encryptOnTx;
    boolean sigBefore;
    int aesBlockSize = 512;
    int dataEncKeysNumber = 1;
    String kekPath;
    String credentialsPath;
    String dataEncKeyAppPath;
    int logDciStreams;
    int logActiveDciStreams;
    boolean logActiveDciStreamsGiven;
}
