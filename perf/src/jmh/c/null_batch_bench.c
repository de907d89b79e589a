/*
 * The C twin of NullProviderBatchBenchmark: per message, with work requests posted in lists of n
 * (n = 1, 8 or 32) and completions polled n at a time. `-k send`: n signaled SENDs linked in one
 * ibv_post_send(), their completions taken with ibv_poll_cq() into n entries and each checked
 * (status, wr_id); `-k wr`: the same n SENDs through the extended QP's ibv_wr_start(), ibv_wr_send()
 * and ibv_wr_set_sge() per request, ibv_wr_complete(), polled alike; `-k recv`: n receives linked
 * in one ibv_post_recv(). The lists are cut after n
 * and restored, as verbs4j's batches are. A benchmark program, not part of the library; bin/bench
 * builds and runs it.
 */
#include "harness.h"
#include "null_provider.h"

struct batch_state {
    struct np_objects *np;
    int n;
    uint64_t id;
    struct ibv_wc wc[NP_MAX_BATCH];
};

static void fail(const char *what, uint64_t id)
{
    fprintf(stderr, "null_batch_bench: %s at wr_id %llu\n", what, (unsigned long long) id);
    exit(1);
}

static void poll_n(struct batch_state *s, int n, uint64_t first);

static void sends(void *arg, uint64_t rounds)
{
    struct batch_state *s = arg;
    struct ibv_send_wr *wrs = s->np->send_wrs, *bad;
    int n = s->n;
    for (uint64_t r = 0; r < rounds; r++) {
        uint64_t first = s->id + 1;
        for (int i = 0; i < n; i++) {
            wrs[i].wr_id = ++s->id;
        }
        struct ibv_send_wr *after = wrs[n - 1].next;
        wrs[n - 1].next = NULL;
        int rc = ibv_post_send(s->np->qp, wrs, &bad);
        wrs[n - 1].next = after;
        if (rc) {
            fail("ibv_post_send failed", first);
        }
        poll_n(s, n, first);
    }
}

/* Polls the n completions of the round that began at wr_id first, checking each. */
static void poll_n(struct batch_state *s, int n, uint64_t first)
{
    int got = 0;
    while (got < n) {
        int k = ibv_poll_cq(s->np->cq, n, s->wc);
        if (k <= 0) {
            fail("no completion", first + got);
        }
        for (int j = 0; j < k; j++) {
            if (s->wc[j].status != IBV_WC_SUCCESS || s->wc[j].wr_id != first + got + j) {
                fail("bad completion", first + got + j);
            }
        }
        got += k;
    }
}

static void wr_sends(void *arg, uint64_t rounds)
{
    struct batch_state *s = arg;
    struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(s->np->qp_ex);
    uint64_t addr = (uintptr_t) s->np->mr->addr;
    uint32_t lkey = s->np->mr->lkey;
    int n = s->n;
    for (uint64_t r = 0; r < rounds; r++) {
        uint64_t first = s->id + 1;
        ibv_wr_start(qpx);
        for (int i = 0; i < n; i++) {
            qpx->wr_id = ++s->id;
            qpx->wr_flags = IBV_SEND_SIGNALED;
            ibv_wr_send(qpx);
            ibv_wr_set_sge(qpx, lkey, addr, 64);
        }
        if (ibv_wr_complete(qpx)) {
            fail("ibv_wr_complete failed", first);
        }
        poll_n(s, n, first);
    }
}

static void receives(void *arg, uint64_t rounds)
{
    struct batch_state *s = arg;
    struct ibv_recv_wr *wrs = s->np->recv_wrs, *bad;
    int n = s->n;
    for (uint64_t r = 0; r < rounds; r++) {
        struct ibv_recv_wr *after = wrs[n - 1].next;
        wrs[n - 1].next = NULL;
        int rc = ibv_post_recv(s->np->qp, wrs, &bad);
        wrs[n - 1].next = after;
        if (rc) {
            fail("ibv_post_recv failed", 0);
        }
    }
}

int main(int argc, char **argv)
{
    /* -n N and -k send|recv first, the harness options after them */
    int n = 1;
    const char *kind = "send";
    while (argc > 2 && (strcmp(argv[1], "-n") == 0 || strcmp(argv[1], "-k") == 0)) {
        if (argv[1][1] == 'n') {
            n = atoi(argv[2]);
        } else {
            kind = argv[2];
        }
        argv[2] = argv[0];
        argv += 2;
        argc -= 2;
    }
    if (n < 1 || n > NP_MAX_BATCH || (strcmp(kind, "send") != 0 && strcmp(kind, "recv") != 0 && strcmp(kind, "wr") != 0)) {
        fprintf(stderr, "usage: null_batch_bench [-n 1..%d] [-k send|wr|recv] [harness options]\n", NP_MAX_BATCH);
        return 2;
    }
    struct harness_options o = harness_parse(argc, argv);
    struct batch_state s = { .np = np_open(), .n = n };
    if (!s.np) {
        perror("np_open");
        return 1;
    }
    char name[64];
    snprintf(name, sizeof name, "null_provider_%s_%d", kind, n);
    harness_run_per(name, &o, kind[0] == 's' ? sends : kind[0] == 'w' ? wr_sends : receives, &s, n);
    if (kind[0] != 'r' && (np_posted() != s.id || np_polled() != s.id)) {
        fprintf(stderr, "null_batch_bench: counters %llu posted, %llu polled, expected %llu\n",
                (unsigned long long) np_posted(), (unsigned long long) np_polled(), (unsigned long long) s.id);
        return 1;
    }
    return 0;
}
