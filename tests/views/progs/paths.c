/*
 * The views' test program: call paths a view can only get right from the calling-context
 * tree. c() calls d() only when a() called it, never under b(); a view that rebuilds paths
 * from caller edges draws d under b too. Known counts (thread 1, then thread 2):
 *   main -> a x3 -> c x3 -> d x3        main -> b x2 -> c x2
 *   main -> rec -> rec -> rec -> rec     (rec x4, recursion 4 deep)
 *   worker (thread 2) -> b x1 -> c x1
 *   main -> helper (this file's), main -> paths_other -> helper (paths_other.c's): two
 *   functions of one name, which every view must keep apart
 */
#include <pthread.h>
#include <stdio.h>

static volatile unsigned long sink;

static void burn(unsigned long n)
{
    for (unsigned long i = 0; i < n; i++)
        sink += i;
}

static void d(void)
{
    burn(400000);
}

static void c(int from_a)
{
    burn(100000);
    if (from_a)
        d();
}

static void a(void)
{
    burn(50000);
    c(1);
}

static void b(void)
{
    burn(50000);
    c(0);
}

static void rec(int n)
{
    burn(20000);
    if (n > 1)
        rec(n - 1);
}

static void helper(void)
{
    burn(10000);
}

void paths_other(void);

static void *worker(void *arg)
{
    (void)arg;
    b();
    return NULL;
}

int main(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, worker, NULL))
        return 1;
    pthread_join(t, NULL);
    for (int i = 0; i < 3; i++)
        a();
    for (int i = 0; i < 2; i++)
        b();
    rec(4);
    helper();
    paths_other();
    printf("%lu\n", sink > 0 ? 1ul : 0ul);
    return 0;
}
/* SPDX-License-Identifier: MIT */
