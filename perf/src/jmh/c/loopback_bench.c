/*
 * The C twin of LoopbackBenchmark: per operation one signaled 64-byte RDMA WRITE from one RC
 * queue pair to another of the same context on the loopback device ($VERBS4J_LO_DEV, default
 * rxe_lo), posted with ibv_post_send() and then polled for with ibv_poll_cq() until it
 * completes. Connected as verbs4j connects (port 1, the first RoCE v2 GID holding an IPv4
 * address, the port's active MTU). A benchmark program, not part of the library.
 */
#include "harness.h"
#include "signaled_send.h"

#define SIZE 64

static void die(const char *what)
{
    perror(what);
    exit(1);
}

static int gid_index(struct ibv_context *ctx, int port)
{
    struct ibv_port_attr pa;
    if (ibv_query_port(ctx, port, &pa)) die("ibv_query_port");
    int any_v2 = -1;
    for (int i = 0; i < pa.gid_tbl_len; i++) {
        struct ibv_gid_entry e;
        if (ibv_query_gid_ex(ctx, port, i, &e, 0)) continue;
        if (e.gid_type != IBV_GID_TYPE_ROCE_V2) continue;
        if (any_v2 < 0) any_v2 = i;
        const uint8_t *g = e.gid.raw;
        int mapped = 1;
        for (int k = 0; k < 10; k++) mapped &= g[k] == 0;
        if (mapped && g[10] == 0xff && g[11] == 0xff) return i;
    }
    return any_v2 < 0 ? 0 : any_v2;
}

static void connect_qp(struct ibv_qp *qp, struct ibv_context *ctx, uint32_t dest_qpn, int sgid)
{
    struct ibv_port_attr pa;
    union ibv_gid gid;
    if (ibv_query_port(ctx, 1, &pa) || ibv_query_gid(ctx, 1, sgid, &gid)) die("ibv_query_port/gid");
    struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
                             .qp_access_flags = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC };
    if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) die("INIT");
    memset(&a, 0, sizeof a);
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = pa.active_mtu;
    a.dest_qp_num = dest_qpn;
    a.rq_psn = 0;
    a.max_dest_rd_atomic = 1;
    a.min_rnr_timer = 12;
    a.ah_attr.is_global = 1;
    a.ah_attr.grh.dgid = gid;
    a.ah_attr.grh.sgid_index = sgid;
    a.ah_attr.grh.hop_limit = 1;
    a.ah_attr.dlid = pa.lid;
    a.ah_attr.port_num = 1;
    if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN
                      | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)) die("RTR");
    memset(&a, 0, sizeof a);
    a.qp_state = IBV_QPS_RTS;
    a.timeout = 14;
    a.retry_cnt = 7;
    a.rnr_retry = 7;
    a.sq_psn = 0;
    a.max_rd_atomic = 1;
    if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN
                      | IBV_QP_MAX_QP_RD_ATOMIC)) die("RTS");
}

static void batch(void *arg, uint64_t n)
{
    struct signaled_send *s = arg;
    struct ibv_wc wc;
    for (uint64_t i = 0; i < n; i++) {
        if (signaled_send_post(s)) die("ibv_post_send");
        int got;
        while ((got = ibv_poll_cq(s->cq, 1, &wc)) == 0) {
            __builtin_ia32_pause();
        }
        if (!signaled_send_completed(s, got, &wc)) {
            fprintf(stderr, "loopback_bench: bad completion (%s) at wr_id %llu\n",
                    got < 0 ? "poll error" : ibv_wc_status_str(wc.status), (unsigned long long) s->id);
            exit(1);
        }
    }
}

int main(int argc, char **argv)
{
    struct harness_options o = harness_parse(argc, argv);
    const char *name = getenv("VERBS4J_LO_DEV") ? getenv("VERBS4J_LO_DEV") : "rxe_lo";
    int num;
    struct ibv_device **list = ibv_get_device_list(&num);
    if (!list) die("ibv_get_device_list");
    struct ibv_context *ctx = NULL;
    for (int i = 0; i < num && !ctx; i++) {
        if (!strcmp(ibv_get_device_name(list[i]), name)) ctx = ibv_open_device(list[i]);
    }
    if (!ctx) {
        fprintf(stderr, "loopback_bench: no device %s\n", name);
        return 1;
    }
    struct ibv_pd *pd = ibv_alloc_pd(ctx);
    struct ibv_cq *cq_a = ibv_create_cq(ctx, 64, NULL, NULL, 0), *cq_b = ibv_create_cq(ctx, 64, NULL, NULL, 0);
    if (!pd || !cq_a || !cq_b) die("ibv_alloc_pd/ibv_create_cq");
    struct ibv_qp_init_attr ia = { .send_cq = cq_a, .recv_cq = cq_a, .qp_type = IBV_QPT_RC,
                                   .cap = { .max_send_wr = 16, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 } };
    struct ibv_qp *a = ibv_create_qp(pd, &ia);
    ia.send_cq = ia.recv_cq = cq_b;
    ia.cap.max_send_wr = 1;
    ia.cap.max_recv_wr = 16;
    struct ibv_qp *b = ibv_create_qp(pd, &ia);
    if (!a || !b) die("ibv_create_qp");
    int sgid = gid_index(ctx, 1);
    connect_qp(a, ctx, b->qp_num, sgid);
    connect_qp(b, ctx, a->qp_num, sgid);
    void *buf_a = aligned_alloc(4096, 4096), *buf_b = aligned_alloc(4096, 4096);
    memset(buf_a, 0, 4096);
    memset(buf_b, 0, 4096);
    struct ibv_mr *mr_a = ibv_reg_mr(pd, buf_a, 4096, IBV_ACCESS_LOCAL_WRITE);
    struct ibv_mr *mr_b = ibv_reg_mr(pd, buf_b, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    if (!mr_a || !mr_b) die("ibv_reg_mr");
    struct signaled_send s = { .qp = a, .cq = cq_a };
    s.sge = (struct ibv_sge) { .addr = (uintptr_t) buf_a, .length = SIZE, .lkey = mr_a->lkey };
    s.wr = (struct ibv_send_wr) { .sg_list = &s.sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
                                  .wr.rdma = { .remote_addr = (uintptr_t) buf_b, .rkey = mr_b->rkey } };
    harness_run("loopback", &o, batch, &s);
    ibv_destroy_qp(a);
    ibv_destroy_qp(b);
    ibv_dereg_mr(mr_a);
    ibv_dereg_mr(mr_b);
    ibv_destroy_cq(cq_a);
    ibv_destroy_cq(cq_b);
    ibv_dealloc_pd(pd);
    ibv_close_device(ctx);
    ibv_free_device_list(list);
    return 0;
}
