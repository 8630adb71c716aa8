/* SPDX-License-Identifier: MIT */
/*
 * Times a tiny function called directly, through mech_callthru and through mech_hijack
 * (libcall_mechanism.S): ns per call, best of 7 runs of N calls each.
 *   libcall_mechanism [N]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

long mech_target(long x);
long mech_callthru(long x);
long mech_hijack(long x);

__attribute__((noinline)) long mech_target(long x)
{
    return x + 1;
}

typedef long fn(long);
static fn *volatile target;

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* A call and its use, as a caller in a loop makes it. */
static __attribute__((noinline)) long loop(long n)
{
    long s = 0;
    fn *f = target;
    for (long i = 0; i < n; i++)
        s += f(i);
    return s;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 20000000;
    fn *ways[] = {mech_target, mech_callthru, mech_hijack};
    const char *names[] = {"direct", "callthru", "hijack"};
    double best[3] = {1e30, 1e30, 1e30};
    long check = 0;
    for (int run = 0; run < 7; run++)
        for (int w = 0; w < 3; w++) {
            target = ways[w];
            double t0 = now_ns();
            check += loop(n);
            double t = (now_ns() - t0) / n;
            best[w] = t < best[w] ? t : best[w];
        }
    for (int w = 0; w < 3; w++)
        printf("%s %.2f\n", names[w], best[w]);
    return check == 0;
}
