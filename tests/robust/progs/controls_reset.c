/* fnprof_reset in the middle of a run. Before it: before() 3 times, a thread (gone())
 * started and joined, another (stays()) entered and waiting on a barrier; then
 * phase() calls leaf() twice, resets, and calls leaf() 4 times; after it, the waiting
 * thread calls leaf() 5 times and main calls after() twice. Expected (run_robust.py, case
 * "reset"): only what followed the reset, and main, phase() and stays(), open at the
 * reset, one call each. */
#include <fnprof.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_barrier_t go;
static long results[2];

int leaf(int x)
{
    return x + 3;
}

int before(int x)
{
    return leaf(x) * 2;
}

void *gone(void *arg)
{
    for (int i = 0; i < 10; i++)
        results[0] += leaf(i);
    return arg;
}

void *stays(void *arg)
{
    pthread_barrier_wait(&go); /* stays() is open before the reset */
    pthread_barrier_wait(&go); /* main has reset */
    for (int i = 0; i < 5; i++)
        results[1] += leaf(i);
    return arg;
}

int phase(int x)
{
    int r = leaf(x) + leaf(x + 1);
    fnprof_reset();
    for (int i = 0; i < 4; i++)
        r += leaf(i);
    return r;
}

int after(int x)
{
    return leaf(x) - 1;
}

int main(void)
{
    pthread_t t1, t2;
    int r = 0;
    if (pthread_barrier_init(&go, NULL, 2))
        abort();
    for (int i = 0; i < 3; i++)
        r += before(i);
    if (pthread_create(&t1, NULL, gone, NULL) || pthread_join(t1, NULL))
        abort();
    if (pthread_create(&t2, NULL, stays, NULL))
        abort();
    pthread_barrier_wait(&go);
    r += phase(r);
    pthread_barrier_wait(&go);
    pthread_join(t2, NULL);
    r += after(1) + after(2);
    printf("reset %d %ld %ld\n", r, results[0], results[1]);
    pthread_barrier_destroy(&go);
    return 0;
}
/* SPDX-License-Identifier: MIT */
