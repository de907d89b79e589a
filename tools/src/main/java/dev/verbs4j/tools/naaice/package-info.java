/**
 * The NAAICE tools: {@code naaice-server} (the software NAA with the reference kernels),
 * {@code naaice-client} (RPCs with verified results) and {@code naaice-bench} (setup and transfer
 * time per size).
 */
package dev.verbs4j.tools.naaice;
