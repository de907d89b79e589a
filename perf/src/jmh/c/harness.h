/*
 * The timing harness of the C twins of verbs4j's JMH benchmarks: JMH's scheme (warm-up
 * iterations, then measured iterations of a fixed wall-clock time each, the score the mean of
 * the iterations' ns/op, the error the half-width of its 99.9% confidence interval from
 * Student's t, as JMH reports it), timed with clock_gettime(CLOCK_MONOTONIC).
 *
 * A twin defines a batch function that runs n operations; the harness calls it with batches
 * long enough that the call and the clock reads are noise.
 */
#ifndef VERBS4J_HARNESS_H
#define VERBS4J_HARNESS_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct harness_options {
    int warmup_iterations;
    double warmup_seconds;
    int iterations;
    double seconds;
};

static void harness_usage(const char *prog)
{
    fprintf(stderr, "usage: %s [-w WARMUP_ITERATIONS] [-W SECONDS] [-i ITERATIONS] [-t SECONDS]\n", prog);
    exit(2);
}

static struct harness_options harness_parse(int argc, char **argv)
{
    struct harness_options o = { 5, 1.0, 5, 1.0 };
    int c;
    while ((c = getopt(argc, argv, "w:W:i:t:h")) != -1) {
        switch (c) {
        case 'w': o.warmup_iterations = atoi(optarg); break;
        case 'W': o.warmup_seconds = atof(optarg); break;
        case 'i': o.iterations = atoi(optarg); break;
        case 't': o.seconds = atof(optarg); break;
        default: harness_usage(argv[0]);
        }
    }
    if (o.iterations < 1 || o.iterations > 1000 || o.warmup_iterations < 0 || o.seconds <= 0 || o.warmup_seconds <= 0) {
        harness_usage(argv[0]);
    }
    return o;
}

static double harness_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* One iteration of about `seconds`: ns per operation. */
static double harness_iteration(void (*batch)(void *, uint64_t), void *state, double seconds)
{
    uint64_t n = 1, ops = 0;
    double start = harness_now(), end = start + seconds * 1e9, now = start;
    while (now < end) {
        batch(state, n);
        ops += n;
        now = harness_now();
        if (n < (1u << 20) && now - start < seconds * 1e8) {
            n *= 2; /* grow the batch while it is short against the iteration */
        }
    }
    return (now - start) / ops;
}

/* t quantile for a two-sided 99.9% interval with df degrees of freedom (what JMH uses). */
static double harness_t999(int df)
{
    static const double t[] = { 0, 636.619, 31.599, 12.924, 8.610, 6.869, 5.959, 5.408, 5.041, 4.781, 4.587,
                                4.437, 4.318, 4.221, 4.140, 4.073, 4.015, 3.965, 3.922, 3.883, 3.850,
                                3.819, 3.792, 3.768, 3.745, 3.725, 3.707, 3.690, 3.674, 3.659, 3.646 };
    if (df <= 30) return t[df];
    if (df <= 60) return 3.460 + (3.646 - 3.460) * (60 - df) / 30.0;
    return 3.291;
}

/*
 * Runs the warm-up and the measurement, printing each iteration and a last line
 *   RESULT <name> <mean ns/op> <error> <iterations>
 * that bin/bench reads.
 */
__attribute__((unused))
static void harness_run_per(const char *name, const struct harness_options *o, void (*batch)(void *, uint64_t), void *state,
                            int per);

__attribute__((unused))
static void harness_run(const char *name, const struct harness_options *o, void (*batch)(void *, uint64_t), void *state)
{
    harness_run_per(name, o, batch, state, 1);
}

/* The same where one operation of `batch` is `per` messages: the scores are per message. */
static void harness_run_per(const char *name, const struct harness_options *o, void (*batch)(void *, uint64_t), void *state,
                            int per)
{
    double *score = calloc(o->iterations, sizeof *score);
    printf("# C twin: %s\n# Warmup: %d iterations, %g s each\n# Measurement: %d iterations, %g s each\n",
           name, o->warmup_iterations, o->warmup_seconds, o->iterations, o->seconds);
    for (int i = 0; i < o->warmup_iterations; i++) {
        printf("# Warmup Iteration %3d: %.3f ns/op\n", i + 1, harness_iteration(batch, state, o->warmup_seconds) / per);
        fflush(stdout);
    }
    double sum = 0;
    for (int i = 0; i < o->iterations; i++) {
        score[i] = harness_iteration(batch, state, o->seconds) / per;
        sum += score[i];
        printf("Iteration %3d: %.3f ns/op\n", i + 1, score[i]);
        fflush(stdout);
    }
    double mean = sum / o->iterations, var = 0, min = score[0], max = score[0];
    for (int i = 0; i < o->iterations; i++) {
        var += (score[i] - mean) * (score[i] - mean);
        if (score[i] < min) min = score[i];
        if (score[i] > max) max = score[i];
    }
    double sd = o->iterations > 1 ? sqrt(var / (o->iterations - 1)) : 0;
    double error = o->iterations > 1 ? harness_t999(o->iterations - 1) * sd / sqrt(o->iterations) : NAN;
    printf("Result \"%s\":\n  %.3f ±(99.9%%) %.3f ns/op [Average]\n  (min, avg, max) = (%.3f, %.3f, %.3f), stdev = %.3f\n",
           name, mean, error, min, mean, max, sd);
    printf("RESULT %s %.3f %.3f %d\n", name, mean, error, o->iterations);
    free(score);
}

#endif
