/*
 * RPC latency of the NAAICE C library's host side (the low-level API of naa-communication-library),
 * for comparing it with verbs4j's NAA and client: one connection, one in/out parameter of SIZE
 * bytes, N RPCs of function FN, each timed from the call that starts it until the reply is in.
 * Function 1 (add 1 to every byte) is verified after every RPC.
 *
 *   naaice_c_rpc LOCAL REMOTE SIZE N FN
 *
 * Prints: "setup_us T" (connect + region setup), "rpc_us T1 T2 ...", "median_us M".
 * Built by the device test against a build of that library (not part of this repository): it links
 * with the library's libnaaice_low_level.a and declares the few functions it calls itself.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The low-level API of the NAAICE C library (naaice.h), as far as this program uses it. */
struct naaice_communication_context;
int naaice_init_communication_context(struct naaice_communication_context **comm_ctx, uint64_t addr_offset,
                                      size_t *param_sizes, char **params, unsigned int params_amount,
                                      unsigned int internal_mr_amount, size_t *internal_mr_sizes, uint8_t fncode,
                                      const char *local_address, const char *remote_address, uint16_t remote_cm_port);
int naaice_setup_connection(struct naaice_communication_context *comm_ctx);
int naaice_set_input_mr(struct naaice_communication_context *comm_ctx, unsigned int input_mr_idx);
int naaice_set_output_mr(struct naaice_communication_context *comm_ctx, unsigned int output_mr_idx);
int naaice_set_immediate(struct naaice_communication_context *comm_ctx, uint8_t *imm_bytes);
int naaice_register_mrs(struct naaice_communication_context *comm_ctx);
int naaice_do_mrsp(struct naaice_communication_context *comm_ctx);
int naaice_do_data_transfer(struct naaice_communication_context *comm_ctx);
int naaice_disconnect_and_cleanup(struct naaice_communication_context *comm_ctx);

#define NAAICE_PORT 12345

static long long now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long)t.tv_sec * 1000000LL + t.tv_nsec / 1000;
}

static int by_value(const void *a, const void *b) {
  long long x = *(const long long *)a, y = *(const long long *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char *argv[]) {
  if (argc != 6) {
    fprintf(stderr, "usage: naaice_c_rpc LOCAL REMOTE SIZE N FN\n");
    return 2;
  }
  size_t size = (size_t)atol(argv[3]);
  int n = atoi(argv[4]);
  int fn = atoi(argv[5]);
  if (size < 1 || n < 1 || fn < 1 || fn > 127) {
    fprintf(stderr, "naaice_c_rpc: SIZE >= 1, N >= 1, FN 1..127\n");
    return 2;
  }
  char *param = malloc(size);
  long long *times = calloc((size_t)n, sizeof(long long));
  if (param == NULL || times == NULL) {
    return 1;
  }
  memset(param, 7, size);
  size_t sizes[1] = {size};
  char *params[1] = {param};
  struct naaice_communication_context *ctx = NULL;
  long long t0 = now_us();
  if (naaice_init_communication_context(&ctx, 0, sizes, params, 1, 0, NULL, (uint8_t)fn, argv[1], argv[2],
                                        NAAICE_PORT) ||
      naaice_setup_connection(ctx) || naaice_set_input_mr(ctx, 0) || naaice_set_output_mr(ctx, 0)) {
    fprintf(stderr, "naaice_c_rpc: connecting failed\n");
    return 1;
  }
  uint8_t user[3] = {0, 0, 0};
  if (naaice_set_immediate(ctx, user) || naaice_register_mrs(ctx) || naaice_do_mrsp(ctx)) {
    fprintf(stderr, "naaice_c_rpc: region setup failed\n");
    return 1;
  }
  printf("setup_us %lld\n", now_us() - t0);
  for (int i = 0; i < n; i++) {
    long long s = now_us();
    if (naaice_do_data_transfer(ctx)) {
      fprintf(stderr, "naaice_c_rpc: RPC %d failed\n", i + 1);
      return 1;
    }
    times[i] = now_us() - s;
    if (fn == 1) {
      unsigned char want = (unsigned char)(7 + i + 1);
      for (size_t k = 0; k < size; k++) {
        if ((unsigned char)param[k] != want) {
          fprintf(stderr, "naaice_c_rpc: RPC %d: byte %zu is %d, expected %d\n", i + 1, k, (unsigned char)param[k], want);
          return 1;
        }
      }
    }
  }
  naaice_disconnect_and_cleanup(ctx);
  printf("rpc_us");
  for (int i = 0; i < n; i++) {
    printf(" %lld", times[i]);
  }
  printf("\n");
  qsort(times, (size_t)n, sizeof(long long), by_value);
  printf("median_us %lld\n", times[n / 2]);
  fflush(stdout);
  return 0;
}
