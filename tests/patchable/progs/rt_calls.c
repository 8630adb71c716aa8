/* Calls whose counts the patched profile must hold exactly: recursion (fib), mutual
 * recursion (even/odd), a caller of many functions, a function inlined away (twice: no
 * sites, never in the profile), and threads running the same functions. No call is in
 * tail position: a tail call leaves its caller before the callee runs (docs/patchable.md),
 * which an independent count would see otherwise. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "rt_common.h"

static volatile long sink;

NOINLINE long fib(int n)
{
    if (n < 2)
        return n;
    long r = fib(n - 1);
    KEEP(r);
    r += fib(n - 2);
    KEEP(r);
    return r;
}

NOINLINE int odd(int n);

NOINLINE int even(int n)
{
    int r = n == 0 ? 1 : odd(n - 1);
    KEEP(r);
    return r;
}

NOINLINE int odd(int n)
{
    int r = n == 0 ? 0 : even(n - 1);
    KEEP(r);
    return r;
}

static inline __attribute__((always_inline)) long twice(long x)
{
    return 2 * x;
}

#define LEAF(name, k)                                                                              \
    NOINLINE long name(long x)                                                                     \
    {                                                                                              \
        long r = twice(x) + k;                                                                     \
        KEEP(r);                                                                                   \
        return r;                                                                                  \
    }
LEAF(f0, 0)
LEAF(f1, 1)
LEAF(f2, 2)
LEAF(f3, 3)

NOINLINE long many(int rounds)
{
    long s = 0;
    for (int i = 0; i < rounds; i++) {
        s += f0(i);
        s += f1(i);
        if (i % 2)
            s += f2(i);
        if (i % 3 == 0)
            s += f3(i);
        KEEP(s);
    }
    return s;
}

NOINLINE void *work(void *arg)
{
    long n = (long)arg;
    long s = fib((int)n);
    KEEP(s);
    s += even((int)n * 3);
    KEEP(s);
    s += many((int)n * 10);
    KEEP(s);
    sink += s;
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 4;
    pthread_t t[16];
    work((void *)12L);
    for (int i = 0; i < threads && i < 16; i++)
        pthread_create(&t[i], NULL, work, (void *)(long)(8 + i));
    for (int i = 0; i < threads && i < 16; i++)
        pthread_join(t[i], NULL);
    printf("%ld\n", (long)sink);
    return 0;
}
/* SPDX-License-Identifier: MIT */
