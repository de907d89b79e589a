/**
 * Command-line tools on the VIPL API ({@link dev.verbs4j.vipl.Vipl} only, nothing below it but the
 * {@code RdmaArena} their registered memory comes from):
 * {@link dev.verbs4j.tools.vipl.ViplPingPong} ({@code vipl-pingpong}, latency) and
 * {@link dev.verbs4j.tools.vipl.ViplBw} ({@code vipl-bw}, bandwidth), run by {@code bin/verbs4j}.
 * Each run owns its NIC handle, its registered descriptor and data memory (one {@code RdmaArena}) and
 * its VI, and releases them before it returns.
 */
package dev.verbs4j.tools.vipl;
