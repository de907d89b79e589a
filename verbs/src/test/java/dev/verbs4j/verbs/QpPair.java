package dev.verbs4j.verbs;

import java.time.Duration;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two connected queue pairs for device tests: {@code a} on one test-bed host, {@code b} on
 * another (or the same device twice), each with its own PD, CQ and a 64 KiB memory region open
 * for remote read, write and atomics.
 */
final class QpPair implements AutoCloseable {

    static final int REGION = 64 * 1024;
    static final int ACCESS = Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE | Access.REMOTE_ATOMIC;

    final Context ctxA;
    final Context ctxB;
    final ProtectionDomain pdA;
    final ProtectionDomain pdB;
    final CompletionQueue cqA;
    final CompletionQueue cqB;
    final QueuePair a;
    final QueuePair b;
    final MemoryRegion mrA;
    final MemoryRegion mrB;
    final int gidA;
    final int gidB;
    final WorkCompletions wcs = new WorkCompletions(16);

    private QpPair(TestBed.Host hostA, TestBed.Host hostB, QpType type, Consumer<QueuePairInit> tweak) {
        ctxA = Context.open(hostA.device());
        ctxB = hostB.device().equals(hostA.device()) ? ctxA : Context.open(hostB.device());
        gidA = hostA.gidIndex();
        gidB = hostB.gidIndex();
        pdA = ctxA.allocateProtectionDomain();
        pdB = ctxB.allocateProtectionDomain();
        cqA = ctxA.createCompletionQueue(64);
        cqB = ctxB.createCompletionQueue(64);
        QueuePairInit initA = QueuePairInit.of(type, cqA).maxSendWr(32).maxRecvWr(32).maxSendSge(4).maxRecvSge(4);
        QueuePairInit initB = QueuePairInit.of(type, cqB).maxSendWr(32).maxRecvWr(32).maxSendSge(4).maxRecvSge(4);
        tweak.accept(initA);
        tweak.accept(initB);
        a = pdA.createQueuePair(initA);
        b = pdB.createQueuePair(initB);
        mrA = pdA.allocateRegion(REGION, ACCESS);
        mrB = pdB.allocateRegion(REGION, ACCESS);
    }

    /** A connected pair of {@code type} between the two hosts. */
    static QpPair connected(TestBed.Host hostA, TestBed.Host hostB, QpType type) {
        return connected(hostA, hostB, type, init -> { });
    }

    static QpPair connected(TestBed.Host hostA, TestBed.Host hostB, QpType type, Consumer<QueuePairInit> tweak) {
        QpPair p = new QpPair(hostA, hostB, type, tweak);
        p.a.init(1);
        p.b.init(1);
        QueuePairEndpoint ea = p.a.localEndpoint(p.gidA, 0x1234);
        QueuePairEndpoint eb = p.b.localEndpoint(p.gidB, 0x5678);
        p.a.readyToReceive(eb, p.gidA);
        p.b.readyToReceive(ea, p.gidB);
        p.a.readyToSend(ea.psn());
        p.b.readyToSend(eb.psn());
        return p;
    }

    /** A pair created but left in RESET, for tests that drive the transitions themselves. */
    static QpPair unconnected(TestBed.Host hostA, TestBed.Host hostB, QpType type, Consumer<QueuePairInit> tweak) {
        return new QpPair(hostA, hostB, type, tweak);
    }

    /** Polls {@code cq} until one completion arrives (10 s at most) and returns it. */
    WorkCompletion awaitOne(CompletionQueue cq) {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (System.nanoTime() < deadline) {
            if (cq.poll(oneAtATime) == 1) {
                return oneAtATime.get(0);
            }
            Thread.onSpinWait();
        }
        throw new AssertionError("no completion within 10 s on " + cq);
    }

    /** Polls until a successful completion of {@code opcode} arrives. */
    WorkCompletion awaitSuccess(CompletionQueue cq, WcOpcode opcode) {
        WorkCompletion wc = awaitOne(cq);
        assertThat(wc.status()).as("status of %s", wc).isEqualTo(WcStatus.SUCCESS);
        assertThat(wc.opcode()).isEqualTo(opcode);
        return wc;
    }

    private final WorkCompletions oneAtATime = new WorkCompletions(1);

    @Override
    public void close() {
        wcs.close();
        oneAtATime.close();
        if (ctxB != ctxA) {
            ctxB.close();
        }
        ctxA.close();
    }
}
