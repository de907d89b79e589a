/*
 * The C twin of NaaiceKernelBenchmark: the NAAICE reference kernel "add 1 to every byte" over one
 * MiB, the plain byte loop the C NAA runs, built with gcc -O2. A benchmark program, not part of
 * the library; bin/bench builds and runs it. Scores are ns per MiB.
 */
#include "harness.h"

#define MIB (1 << 20)

/* noinline: the loop is timed as a function over a buffer the compiler cannot see into */
__attribute__((noinline)) static void add_bytes(unsigned char *p, size_t n, unsigned char k)
{
    for (size_t i = 0; i < n; i++) {
        p[i] += k;
    }
}

static unsigned char *region;

static void batch(void *arg, uint64_t n)
{
    (void) arg;
    for (uint64_t i = 0; i < n; i++) {
        add_bytes(region, MIB, 1);
    }
}

int main(int argc, char **argv)
{
    struct harness_options o = harness_parse(argc, argv);
    if (posix_memalign((void **) &region, 4096, MIB) != 0) {
        perror("posix_memalign");
        return 1;
    }
    memset(region, 0, MIB);
    harness_run("naaice_add_one_mib", &o, batch, NULL);
    free(region);
    return 0;
}
