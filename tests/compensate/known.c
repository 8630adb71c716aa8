/*
 * Functions of known cost for compensate/check_e2e.py, built with and without
 * -finstrument-functions.
 *   known tiny N    section() makes N calls of a 3-instruction function, 5 times; prints the
 *                   fastest section's ns (the uninstrumented truth the test holds the
 *                   profile's section() against)
 *   known work N    every function does work of its own (60 ns to 2 us) besides its calls:
 *                   three sizes of it nested, and a recursion 13 deep that the runtime folds
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t sink;

__attribute__((noinline, noipa)) static uint32_t tiny(uint32_t x)
{
    return (x ^ (x >> 7)) * 2654435761u;
}

__attribute__((noinline, noipa)) static void section(long n)
{
    uint32_t acc = 1;
    for (long i = 0; i < n; i++)
        acc = tiny(acc + (uint32_t)i);
    sink += acc;
}

/* Steps of work written out in each function: a helper would be an instrumented call, and
 * a function that only calls another has no time of its own to compensate (a clamp). */
#define STEPS(x, n)                                                                                \
    do {                                                                                           \
        for (unsigned j_ = 0; j_ < (n); j_++)                                                      \
            (x) = (x)*6364136223846793005u + 1442695040888963407u;                                 \
    } while (0)

__attribute__((noinline, noipa)) static uint64_t leaf(uint64_t x)
{
    STEPS(x, 60);
    return x;
}

__attribute__((noinline, noipa)) static uint64_t small(uint64_t x)
{
    STEPS(x, 80);
    return leaf(x);
}

__attribute__((noinline, noipa)) static uint64_t medium(uint64_t x)
{
    STEPS(x, 300);
    return small(x);
}

__attribute__((noinline, noipa)) static uint64_t large(uint64_t x)
{
    STEPS(x, 2000);
    return medium(x);
}

__attribute__((noinline, noipa)) static uint64_t descend(uint64_t x, int depth)
{
    STEPS(x, 100);
    return depth ? descend(x, depth - 1) : x;
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    long n = atol(argv[2]);
    if (!strcmp(argv[1], "tiny")) {
        double best = 0;
        for (int r = 0; r < 5; r++) {
            double t0 = now_ns();
            section(n);
            double t = now_ns() - t0;
            if (!r || t < best)
                best = t;
        }
        printf("section_ns %.0f\n", best);
    } else {
        uint64_t x = 1;
        for (long i = 0; i < n; i++) {
            STEPS(x, 100);
            x = small(x);
            STEPS(x, 100);
            x = medium(x);
            if (i % 4 == 0)
                x = large(x);
            if (i % 8 == 0)
                x = descend(x, 12);
        }
        sink = x;
    }
    printf("sink %llu\n", (unsigned long long)sink);
    return 0;
}
/* SPDX-License-Identifier: MIT */
