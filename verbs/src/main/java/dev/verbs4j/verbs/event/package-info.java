/**
 * The one event layer of verbs4j: waiting until completion channels, connection manager event
 * channels or other descriptors are readable ({@link dev.verbs4j.verbs.event.Readiness}: a platform
 * thread sleeps in the kernel, a virtual thread parks), with a deadline, a wake-up on close
 * ({@link dev.verbs4j.verbs.event.DescriptorWaiter}) and a callback when readable. Every layer above
 * verbs waits through this package rather than with threads or timed loops of its own.
 */
package dev.verbs4j.verbs.event;
