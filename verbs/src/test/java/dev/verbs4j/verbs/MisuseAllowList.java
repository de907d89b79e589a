package dev.verbs4j.verbs;

import java.lang.reflect.Method;
import java.util.Map;
import java.util.Set;

/**
 * The methods that may still succeed after their object was closed, reviewed one by one: each
 * returns a plain value the object kept on the Java heap (a number, a name, the object it was
 * created from) or a flyweight view whose every access checks again, and none touches native
 * memory. {@code isClosed}, {@code toString} and {@code close} (idempotent) are fine on every
 * type. Every other public method must refuse after close.
 */
final class MisuseAllowList {

    private static final Set<String> EVERYWHERE = Set.of("isClosed", "toString", "close", "hashCode", "equals");

    private static final Map<Class<?>, Set<String>> PLAIN = Map.ofEntries(
            // the device it was opened on and its name, both kept on the heap
            Map.entry(Context.class, Set.of("device", "name")),
            Map.entry(ProtectionDomain.class, Set.of("context")),
            // keys, addresses and lengths as registered; segment() is the application's memory or,
            // for allocateRegion, a segment whose (closed) arena refuses every access
            Map.entry(MemoryRegion.class, Set.of("segment", "lkey", "rkey", "address", "remoteAddress", "length", "access",
                    "protectionDomain")),
            Map.entry(MemoryWindow.class, Set.of("type")),
            Map.entry(CompletionQueue.class, Set.of("channel")),
            // the descriptor number, a plain int kept from creation
            Map.entry(CompletionChannel.class, Set.of("fd")),
            Map.entry(QueuePair.class, Set.of("qpNum", "type", "state", "protectionDomain", "maxSendWr", "maxRecvWr",
                    "maxSendSge", "maxRecvSge", "maxInlineData")),
            Map.entry(SharedReceiveQueue.class, Set.of("maxWr", "maxSge")),
            Map.entry(AddressHandle.class, Set.of("destination")),
            Map.entry(XrcDomain.class, Set.of("context")),
            // get(i) and the views' batch() only position or return the flyweight: its setters check
            // (reset(i) clears the request, so it refuses)
            Map.entry(SendRequests.class, Set.of("capacity", "maxSge", "get")),
            Map.entry(SendRequest.class, Set.of("batch")),
            Map.entry(ReceiveRequests.class, Set.of("capacity", "maxSge", "get")),
            Map.entry(WorkCompletions.class, Set.of("capacity", "count", "get")));

    private MisuseAllowList() {
    }

    /** Whether {@code m} may succeed after its object was closed. */
    static boolean allowedAfterClose(Class<?> type, Method m) {
        return EVERYWHERE.contains(m.getName()) || PLAIN.getOrDefault(type, Set.of()).contains(m.getName());
    }
}
