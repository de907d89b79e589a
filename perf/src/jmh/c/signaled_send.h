/*
 * The operation both C twins time: one signaled work request on a queue pair, posted again and
 * again with the next wr_id, each completion taken from the queue pair's CQ before the next post.
 */
#ifndef VERBS4J_SIGNALED_SEND_H
#define VERBS4J_SIGNALED_SEND_H

#include <infiniband/verbs.h>
#include <stdint.h>

struct signaled_send {
    struct ibv_qp *qp;
    struct ibv_cq *cq;
    struct ibv_send_wr wr;
    struct ibv_sge sge;
    uint64_t id;            /* the wr_id of the last post */
};

/* Posts the work request with the next wr_id; ibv_post_send()'s result. */
static inline int signaled_send_post(struct signaled_send *s)
{
    struct ibv_send_wr *bad;
    s->wr.wr_id = ++s->id;
    return ibv_post_send(s->qp, &s->wr, &bad);
}

/* Whether a completion polled with result `got` is the good one of the last post. */
static inline int signaled_send_completed(const struct signaled_send *s, int got, const struct ibv_wc *wc)
{
    return got == 1 && wc->status == IBV_WC_SUCCESS && wc->wr_id == s->id;
}

#endif
