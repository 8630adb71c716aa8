/*
 * deep: recursion to depth d (default 100,000), repeated r times, on a thread with a 256 MB
 * stack so that no build, instrumented or not, overflows. Calls = r * (d + 1) + a few.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline, noipa)) static long down(long d)
{
    if (d == 0)
        return 0;
    long r = down(d - 1) + 1;
    __asm__ volatile("" : "+r"(r)); /* no tail recursion in the base build */
    return r;
}

static long depth = 100000, repeats = 100;

__attribute__((noinline, noipa)) static void *work(void *arg)
{
    long sum = 0;
    for (long i = 0; i < repeats; i++)
        sum += down(depth);
    *(long *)arg = sum;
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        repeats = atol(argv[1]);
    if (argc > 2)
        depth = atol(argv[2]);
    pthread_attr_t attr;
    pthread_t tid;
    long sum = 0;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256u << 20);
    if (pthread_create(&tid, &attr, work, &sum))
        return 1;
    pthread_join(tid, NULL);
    printf("deep %ld x %ld: %ld\n", repeats, depth, sum);
    return 0;
}
/* SPDX-License-Identifier: MIT */
