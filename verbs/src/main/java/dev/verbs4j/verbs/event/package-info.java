/**
 * The one event layer of verbs4j: waiting until completion channels, connection manager event
 * channels ({@link dev.verbs4j.verbs.event.EventSource}s) or other descriptors are readable
 * ({@link dev.verbs4j.verbs.event.Readiness}: a platform thread sleeps in the kernel, a virtual
 * thread parks), with a deadline, a wake-up on close ({@link
 * dev.verbs4j.verbs.event.DescriptorWaiter}) and a callback when readable; and the {@link
 * dev.verbs4j.verbs.event.CompletionDispatcher}, which hands the completions of a shared
 * completion queue to their queue pairs' handlers. Every layer above verbs waits through this
 * package rather than with threads or timed loops of its own.
 */
package dev.verbs4j.verbs.event;
