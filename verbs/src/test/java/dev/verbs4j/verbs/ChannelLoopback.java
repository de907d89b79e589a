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

    /**
     * Sends one 64-byte message from {@code a} to {@code b} through {@link #mr}: {@code b}'s
     * receive (work request 1) into its bytes 0 to 63, then {@code a}'s signaled send (work
     * request 2) from bytes 64 to 127; both complete on {@link #cq}.
     */
    void sendOneMessage(SendRequests sends, ReceiveRequests recvs) {
        recvs.get(0).wrId(1).sge(mr, 0, 64);
        b.postReceive(recvs, 1);
        sends.reset(0).wrId(2).opcode(Opcode.SEND).flags(SendFlags.SIGNALED).sge(mr, 64, 64);
        a.postSend(sends, 1);
    }

    @Override
    public void close() {
        ctx.close();
    }
}
