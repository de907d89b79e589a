/*
 * The null provider: a benchmark fixture of verbs4j's perf module, not part of the library.
 *
 * A fake struct ibv_context whose data-path operations (post_send, post_recv, poll_cq,
 * req_notify_cq) are plain C functions that return at once, with a fake PD, CQ, RC QP and MR
 * on it. ibv_post_send() and ibv_poll_cq() (the static inline functions of verbs.h) and
 * verbs4j's QueuePair.postSend / CompletionQueue.poll call through the same ops table into the
 * same functions, so timing a post + poll loop on it measures the caller's own cost: the
 * binding's in Java, next to the identical loop in C.
 *
 * post_send records each signaled work request (wr_id, opcode, bytes of its scatter list) in a
 * ring of NP_DEPTH entries and refuses more with ENOMEM; poll_cq returns one IBV_WC_SUCCESS
 * completion per recorded request, oldest first, with every ibv_wc field written, as a real
 * provider does, so the caller decodes a full completion. The extended QP's ibv_wr_send() records
 * a request the same way and ibv_wr_complete() makes what was recorded since ibv_wr_start() pollable.
 * One instance per process.
 */
#ifndef VERBS4J_NULL_PROVIDER_H
#define VERBS4J_NULL_PROVIDER_H

#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#define NP_DEPTH 1024
#define NP_BUFFER_SIZE 4096
#define NP_QP_NUM 0x11
#define NP_LKEY 0x1234
#define NP_RKEY 0x5678
#define NP_MAX_BATCH 32

/*
 * The fake objects; Java reads these pointers in this order. The last three serve a baseline
 * that calls the ops with bare FFM downcalls: the context's post_send and poll_cq, and a send
 * work request (one signaled SEND of 64 bytes from the MR) to post.
 */
struct np_objects {
    struct ibv_context *context;
    struct ibv_pd *pd;
    struct ibv_cq *cq;
    struct ibv_qp *qp;
    struct ibv_mr *mr;
    int (*post_send)(struct ibv_qp *, struct ibv_send_wr *, struct ibv_send_wr **);
    int (*poll_cq)(struct ibv_cq *, int, struct ibv_wc *);
    struct ibv_send_wr *send_wr;
    /* NP_MAX_BATCH signaled SENDs of 64 bytes and NP_MAX_BATCH receives of 64 bytes, each linked
     * to the next, for the batch baselines (cut after n by the caller) */
    struct ibv_send_wr *send_wrs;
    struct ibv_recv_wr *recv_wrs;
    int (*post_recv)(struct ibv_qp *, struct ibv_recv_wr *, struct ibv_recv_wr **);
    /* a second RC QP on the same CQ whose ibv_qp_to_qp_ex() is its struct ibv_qp_ex: the
     * ibv_wr_* API, with wr_start, wr_send, wr_set_sge, wr_complete and wr_abort (others NULL) */
    struct ibv_qp *qp_ex;
};

/* Makes the objects on the first call (an RC QP in RTS, its send and receive CQ the same). */
struct np_objects *np_open(void);

/* Work requests accepted by post_send, completions returned by poll_cq, receives posted. */
uint64_t np_posted(void);
uint64_t np_polled(void);
uint64_t np_received(void);

/* sizeof(struct ibv_send_wr), sizeof(struct ibv_recv_wr): the strides of the batch baselines' arrays. */
size_t np_send_wr_size(void);
size_t np_recv_wr_size(void);

/* Where struct ibv_qp_ex has wr_id, wr_flags, wr_start, wr_send, wr_set_sge and wr_complete. */
void np_qp_ex_layout(uint64_t offsets[6]);

/* Drops pending completions and zeroes the counters. */
void np_reset(void);

#endif
