/* The null provider (see null_provider.h): a benchmark fixture, never part of the library. */
#include "null_provider.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/eventfd.h>

/*
 * The layout of libibverbs' struct verbs_qp (its driver.h, not installed): ibv_qp_to_qp_ex()
 * returns the qp_ex member when comp_mask has NP_VERBS_QP_EX.
 */
#define NP_VERBS_QP_EX (1 << 1)
struct np_verbs_qp {
    union {
        struct ibv_qp qp;
        struct ibv_qp_ex qp_ex;
    };
    uint32_t comp_mask;
    void *xrcd;
};

struct np_pending {
    uint64_t wr_id;
    uint32_t byte_len;
    enum ibv_wc_opcode opcode;
};

static struct {
    struct verbs_context vctx; /* a plain (not extended) context: abi_compat stays NULL */
    struct ibv_pd pd;
    struct ibv_cq cq;
    struct ibv_qp qp;
    struct np_verbs_qp qpx; /* the extended QP (ibv_wr_* API) on the same ring */
    /*
     * The extended QP's send queue lock, as providers keep one: wr_start takes it and wr_complete
     * or wr_abort give it back, so it is held across the caller's code between them; a classic
     * post_send on that QP takes it too.
     */
    pthread_spinlock_t sq_lock;
    uint64_t wr_tail;       /* ring[tail .. wr_tail) recorded since wr_start, not yet completed */
    int wr_full;            /* a recorded request found the ring full: wr_complete fails */
    struct ibv_mr mr;
    struct np_objects objects;
    struct ibv_send_wr send_wr;
    struct ibv_sge sge;
    struct ibv_send_wr send_wrs[NP_MAX_BATCH];
    struct ibv_recv_wr recv_wrs[NP_MAX_BATCH];
    struct np_pending ring[NP_DEPTH];
    uint64_t head, tail; /* posted into ring[tail % NP_DEPTH], polled from ring[head % NP_DEPTH] */
    uint64_t posted, polled, received;
    int opened;
    _Alignas(64) unsigned char buffer[NP_BUFFER_SIZE];
} np;

static enum ibv_wc_opcode wc_opcode(enum ibv_wr_opcode op)
{
    switch (op) {
    case IBV_WR_RDMA_WRITE:
    case IBV_WR_RDMA_WRITE_WITH_IMM:
        return IBV_WC_RDMA_WRITE;
    case IBV_WR_RDMA_READ:
        return IBV_WC_RDMA_READ;
    case IBV_WR_ATOMIC_CMP_AND_SWP:
        return IBV_WC_COMP_SWAP;
    case IBV_WR_ATOMIC_FETCH_AND_ADD:
        return IBV_WC_FETCH_ADD;
    default:
        return IBV_WC_SEND;
    }
}

static int np_post_send_locked(struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);

static int np_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
    if (qp != &np.qpx.qp) {
        return np_post_send_locked(wr, bad_wr);
    }
    pthread_spin_lock(&np.sq_lock);
    int rc = np_post_send_locked(wr, bad_wr);
    pthread_spin_unlock(&np.sq_lock);
    return rc;
}

static int np_post_send_locked(struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
    for (; wr; wr = wr->next) {
        if (!(wr->send_flags & IBV_SEND_SIGNALED)) {
            np.posted++;
            continue;
        }
        if (np.tail - np.head == NP_DEPTH) {
            *bad_wr = wr;
            return ENOMEM;
        }
        uint32_t bytes = 0;
        for (int i = 0; i < wr->num_sge; i++) {
            bytes += wr->sg_list[i].length;
        }
        struct np_pending *p = &np.ring[np.tail++ % NP_DEPTH];
        p->wr_id = wr->wr_id;
        p->byte_len = bytes;
        p->opcode = wc_opcode(wr->opcode);
        np.posted++;
    }
    return 0;
}

static int np_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
    (void) qp;
    (void) bad_wr;
    for (; wr; wr = wr->next) {
        np.received++;
    }
    return 0;
}

static int np_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc)
{
    (void) cq;
    int n = 0;
    while (n < num_entries && np.head != np.tail) {
        struct np_pending *p = &np.ring[np.head++ % NP_DEPTH];
        struct ibv_wc *w = &wc[n++];
        w->wr_id = p->wr_id;
        w->status = IBV_WC_SUCCESS;
        w->opcode = p->opcode;
        w->vendor_err = 0;
        w->byte_len = p->byte_len;
        w->imm_data = 0;
        w->qp_num = NP_QP_NUM;
        w->src_qp = 0;
        w->wc_flags = 0;
        w->pkey_index = 0;
        w->slid = 0;
        w->sl = 0;
        w->dlid_path_bits = 0;
    }
    np.polled += n;
    return n;
}

static int np_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
    (void) cq;
    (void) solicited_only;
    return 0;
}

static void np_wr_start(struct ibv_qp_ex *qpx)
{
    (void) qpx;
    pthread_spin_lock(&np.sq_lock);
    np.wr_tail = np.tail;
    np.wr_full = 0;
}

/* Records the new work request (only signaled ones get a completion, as in post_send). */
static void np_wr_send(struct ibv_qp_ex *qpx)
{
    np.posted++;
    if (!(qpx->wr_flags & IBV_SEND_SIGNALED)) {
        return;
    }
    if (np.wr_tail - np.head == NP_DEPTH) {
        np.wr_full = 1;
        return;
    }
    struct np_pending *p = &np.ring[np.wr_tail++ % NP_DEPTH];
    p->wr_id = qpx->wr_id;
    p->byte_len = 0;
    p->opcode = IBV_WC_SEND;
}

static void np_wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr, uint32_t length)
{
    (void) lkey;
    (void) addr;
    if ((qpx->wr_flags & IBV_SEND_SIGNALED) && !np.wr_full) {
        np.ring[(np.wr_tail - 1) % NP_DEPTH].byte_len = length;
    }
}

static int np_wr_complete(struct ibv_qp_ex *qpx)
{
    (void) qpx;
    int rc = 0;
    if (np.wr_full) {
        rc = ENOMEM;
    } else {
        np.tail = np.wr_tail;
    }
    pthread_spin_unlock(&np.sq_lock);
    return rc;
}

static void np_wr_abort(struct ibv_qp_ex *qpx)
{
    (void) qpx;
    pthread_spin_unlock(&np.sq_lock);
}

struct np_objects *np_open(void)
{
    if (np.opened) {
        return &np.objects;
    }
    struct ibv_context *ctx = &np.vctx.context;
    ctx->device = NULL; /* verbs4j is told the device's description instead */
    ctx->cmd_fd = -1;
    ctx->async_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (ctx->async_fd < 0) {
        return NULL;
    }
    ctx->num_comp_vectors = 1;
    pthread_spin_init(&np.sq_lock, PTHREAD_PROCESS_PRIVATE);
    ctx->ops.post_send = np_post_send;
    ctx->ops.post_recv = np_post_recv;
    ctx->ops.poll_cq = np_poll_cq;
    ctx->ops.req_notify_cq = np_req_notify_cq;

    np.pd.context = ctx;
    np.pd.handle = 1;

    np.cq.context = ctx;
    np.cq.cqe = NP_DEPTH;
    np.cq.handle = 1;

    np.qp.context = ctx;
    np.qp.pd = &np.pd;
    np.qp.send_cq = &np.cq;
    np.qp.recv_cq = &np.cq;
    np.qp.handle = 1;
    np.qp.qp_num = NP_QP_NUM;
    np.qp.state = IBV_QPS_RTS;
    np.qp.qp_type = IBV_QPT_RC;

    np.qpx.qp = np.qp;
    np.qpx.qp.qp_num = NP_QP_NUM + 1;
    np.qpx.comp_mask = NP_VERBS_QP_EX;
    np.qpx.qp_ex.comp_mask = 0;
    np.qpx.qp_ex.wr_start = np_wr_start;
    np.qpx.qp_ex.wr_send = np_wr_send;
    np.qpx.qp_ex.wr_set_sge = np_wr_set_sge;
    np.qpx.qp_ex.wr_complete = np_wr_complete;
    np.qpx.qp_ex.wr_abort = np_wr_abort;

    np.mr.context = ctx;
    np.mr.pd = &np.pd;
    np.mr.addr = np.buffer;
    np.mr.length = sizeof np.buffer;
    np.mr.handle = 1;
    np.mr.lkey = NP_LKEY;
    np.mr.rkey = NP_RKEY;

    np.sge = (struct ibv_sge) { .addr = (uintptr_t) np.buffer, .length = 64, .lkey = NP_LKEY };
    np.send_wr = (struct ibv_send_wr) { .sg_list = &np.sge, .num_sge = 1, .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
    for (int i = 0; i < NP_MAX_BATCH; i++) {
        np.send_wrs[i] = np.send_wr;
        np.send_wrs[i].next = i + 1 < NP_MAX_BATCH ? &np.send_wrs[i + 1] : NULL;
        np.recv_wrs[i] = (struct ibv_recv_wr) { .sg_list = &np.sge, .num_sge = 1,
                                                .next = i + 1 < NP_MAX_BATCH ? &np.recv_wrs[i + 1] : NULL };
    }
    np.objects = (struct np_objects) { ctx, &np.pd, &np.cq, &np.qp, &np.mr, ctx->ops.post_send, ctx->ops.poll_cq, &np.send_wr,
                                       np.send_wrs, np.recv_wrs, ctx->ops.post_recv, &np.qpx.qp };
    np.opened = 1;
    return &np.objects;
}

uint64_t np_posted(void)
{
    return np.posted;
}

uint64_t np_polled(void)
{
    return np.polled;
}

uint64_t np_received(void)
{
    return np.received;
}

size_t np_send_wr_size(void)
{
    return sizeof(struct ibv_send_wr);
}

size_t np_recv_wr_size(void)
{
    return sizeof(struct ibv_recv_wr);
}

void np_qp_ex_layout(uint64_t offsets[6])
{
    offsets[0] = offsetof(struct ibv_qp_ex, wr_id);
    offsets[1] = offsetof(struct ibv_qp_ex, wr_flags);
    offsets[2] = offsetof(struct ibv_qp_ex, wr_start);
    offsets[3] = offsetof(struct ibv_qp_ex, wr_send);
    offsets[4] = offsetof(struct ibv_qp_ex, wr_set_sge);
    offsets[5] = offsetof(struct ibv_qp_ex, wr_complete);
}

void np_reset(void)
{
    np.head = np.tail = np.wr_tail = 0;
    np.posted = np.polled = np.received = 0;
}
