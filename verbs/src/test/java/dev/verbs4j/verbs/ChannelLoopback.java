package dev.verbs4j.verbs;

/**
 * Two connected RC queue pairs on the loopback device whose completions go to one queue that
 * signals a completion channel, with a 4 KiB region open for local and remote writes: the set-up
 * of the tests that wait on completion events. Closing it closes the context, which closes the rest.
 */
final class ChannelLoopback implements AutoCloseable {

    final Context ctx;
    final CompletionChannel channel;
    final CompletionQueue cq;
    final QueuePair a;
    final QueuePair b;
    final MemoryRegion mr;

    ChannelLoopback() {
        ctx = Context.open(TestBed.loopback().device());
        try {
            channel = ctx.createCompletionChannel();
            cq = ctx.createCompletionQueue(16, channel, 0);
            ProtectionDomain pd = ctx.allocateProtectionDomain();
            a = pd.createQueuePair(QueuePairInit.of(QpType.RC, cq));
            b = pd.createQueuePair(QueuePairInit.of(QpType.RC, cq));
            mr = pd.allocateRegion(4096, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
            a.init(1);
            b.init(1);
            a.readyToReceive(b.localEndpoint(10));
            b.readyToReceive(a.localEndpoint(20));
            a.readyToSend(20);
            b.readyToSend(10);
        } catch (RuntimeException e) {
            ctx.close();
            throw e;
        }
    }

    @Override
    public void close() {
        ctx.close();
    }
}
