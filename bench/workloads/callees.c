/*
 * callees: functions of known cost, for the error of compensated times (bench/compensate.py).
 *
 *   callees chain|wide REPS K1 BATCH1 [K2 BATCH2 ...]     (at most 5 sizes)
 *
 * leaf_i runs K_i steps of work (WORK: chain or wide); drive_i calls leaf_i BATCH_i times,
 * each call taking the previous one's result (so calls do not overlap more than one call's
 * code allows). main times every drive_i call with CLOCK_MONOTONIC, REPS rounds with the
 * sizes interleaved, and prints per size the median over the rounds of ns per leaf call,
 * the calls' own time as the caller sees it (the loop and the call instruction included).
 * Built without instrumentation this is the truth the profile's figures are held against;
 * built with it, the same program is profiled.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SIZES 5

static unsigned k[SIZES]; /* from argv: never constants the compiler could fold */
static uint64_t sink;

static int wide; /* argv: "chain" (0) or "wide" (1) */

/* The work, written out in each leaf: an inline helper would get hooks of its own. chain:
 * one dependent multiply-add after another, bound by its latency (the processor has room
 * to run other code beside it, the hooks' included). wide: four independent chains a step,
 * each step taking about as long as chain's, the processor's multiplier kept busy. */
#define WORK(x, n)                                                                                 \
    do {                                                                                           \
        if (!wide) {                                                                               \
            for (unsigned j_ = 0; j_ < (n); j_++)                                                  \
                (x) = (x)*6364136223846793005u + 1442695040888963407u;                             \
        } else {                                                                                   \
            uint64_t a_ = (x), b_ = (x) ^ 1, c_ = (x) ^ 2, d_ = (x) ^ 3;                           \
            for (unsigned j_ = 0; j_ < (n); j_++) {                                                \
                a_ = a_ * 6364136223846793005u + 1442695040888963407u;                             \
                b_ = b_ * 6364136223846793005u + 1442695040888963407u;                             \
                c_ = c_ * 6364136223846793005u + 1442695040888963407u;                             \
                d_ = d_ * 6364136223846793005u + 1442695040888963407u;                             \
            }                                                                                      \
            (x) = a_ ^ b_ ^ c_ ^ d_;                                                               \
        }                                                                                          \
    } while (0)

#define LEAF(i)                                                                                    \
    __attribute__((noinline, noipa)) static uint64_t leaf_##i(uint64_t x)                          \
    {                                                                                              \
        WORK(x, k[i]);                                                                             \
        return x;                                                                                  \
    }                                                                                              \
    __attribute__((noinline, noipa)) static uint64_t drive_##i(uint64_t x, long n)                 \
    {                                                                                              \
        for (long c = 0; c < n; c++)                                                               \
            x = leaf_##i(x);                                                                       \
        return x;                                                                                  \
    }

LEAF(0)
LEAF(1)
LEAF(2)
LEAF(3)
LEAF(4)

static uint64_t (*const drive[SIZES])(uint64_t, long) = {drive_0, drive_1, drive_2, drive_3,
                                                         drive_4};

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* fnprof's, when it is loaded (bench/compensate.py preloads it): with CALLEES_DUMP set, every
 * timed call is a profile of its own (fnprof_reset before it, fnprof_dump after), so that a
 * figure per call is taken from each and their median held against the median above: a
 * whole run's sum would hold every time the process was preempted on a shared machine. */
extern int fnprof_dump(const char *path) __attribute__((weak));
extern void fnprof_reset(void) __attribute__((weak));

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    if (argc < 5 || (argc - 3) % 2 || (argc - 3) / 2 > SIZES ||
        (strcmp(argv[1], "chain") && strcmp(argv[1], "wide"))) {
        fprintf(stderr,
                "usage: callees chain|wide REPS K1 BATCH1 [K2 BATCH2 ...] (at most %d sizes)\n",
                SIZES);
        return 2;
    }
    wide = !strcmp(argv[1], "wide");
    long reps = atol(argv[2]);
    int sizes = (argc - 3) / 2;
    long batch[SIZES];
    for (int i = 0; i < sizes; i++) {
        k[i] = (unsigned)atol(argv[3 + 2 * i]);
        batch[i] = atol(argv[4 + 2 * i]);
    }
    double *ns = malloc((size_t)(reps > 0 ? reps : 1) * SIZES * sizeof(*ns));
    if (!ns || reps < 1)
        return 2;
    const char *dumps = getenv("CALLEES_DUMP");
    if (!fnprof_dump || !fnprof_reset)
        dumps = NULL;
    uint64_t x = 1;
    for (long r = 0; r < reps; r++)
        for (int i = 0; i < sizes; i++) {
            /* once untimed: the caches as a loop over the same calls leaves them (a dump
             * between two timed calls would otherwise leave them cold for the profiled
             * build alone) */
            x = drive[i](x, batch[i]);
            if (dumps)
                fnprof_reset();
            double t0 = now_ns();
            x = drive[i](x, batch[i]);
            ns[(size_t)i * (size_t)reps + (size_t)r] = (now_ns() - t0) / (double)batch[i];
            if (dumps) {
                char path[4096];
                snprintf(path, sizeof(path), "%s/%d.%ld.prof", dumps, i, r);
                if (fnprof_dump(path))
                    return 1;
            }
        }
    sink = x;
    for (int i = 0; i < sizes; i++) {
        qsort(ns + (size_t)i * (size_t)reps, (size_t)reps, sizeof(*ns), by_value);
        printf("size %d k %u median_ns %.3f\n", i, k[i], ns[(size_t)i * (size_t)reps + reps / 2]);
    }
    printf("sink %llu\n", (unsigned long long)sink);
    free(ns);
    return 0;
}
/* SPDX-License-Identifier: MIT */
