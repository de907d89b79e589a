/*
 * The C twin of NullProviderBenchmark: per operation one signaled SEND posted with
 * ibv_post_send() and its completion taken with ibv_poll_cq() (verbs.h's inline functions,
 * through the null provider's ops table), the completion's status and wr_id checked.
 * A benchmark program, not part of the library; bin/bench builds and runs it.
 */
#include "harness.h"
#include "null_provider.h"
#include "signaled_send.h"

static void fail(const char *what, struct signaled_send *s)
{
    fprintf(stderr, "null_bench: %s at wr_id %llu\n", what, (unsigned long long) s->id);
    exit(1);
}

static void batch(void *arg, uint64_t n)
{
    struct signaled_send *s = arg;
    struct ibv_wc wc;
    for (uint64_t i = 0; i < n; i++) {
        if (signaled_send_post(s)) {
            fail("ibv_post_send failed", s);
        }
        if (!signaled_send_completed(s, ibv_poll_cq(s->cq, 1, &wc), &wc)) {
            fail("no good completion", s);
        }
    }
}

int main(int argc, char **argv)
{
    struct harness_options o = harness_parse(argc, argv);
    struct np_objects *np = np_open();
    if (!np) {
        perror("np_open");
        return 1;
    }
    struct signaled_send s = { .qp = np->qp, .cq = np->cq };
    s.sge = (struct ibv_sge) { .addr = (uintptr_t) np->mr->addr, .length = 64, .lkey = np->mr->lkey };
    s.wr = (struct ibv_send_wr) { .sg_list = &s.sge, .num_sge = 1, .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
    harness_run("null_provider", &o, batch, &s);
    if (np_posted() != s.id || np_polled() != s.id) {
        fprintf(stderr, "null_bench: counters %llu posted, %llu polled, expected %llu\n",
                (unsigned long long) np_posted(), (unsigned long long) np_polled(), (unsigned long long) s.id);
        return 1;
    }
    return 0;
}
