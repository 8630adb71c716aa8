/*
 * tiny: a loop over a tiny non-inlined function, so the run is bound by the call itself.
 * threads: the same loop on T threads at once (argv[2]), each making n calls and sharing
 * nothing, so a profiler's per-call cost on T threads can be set against one thread's.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline, noipa)) static uint32_t tiny(uint32_t x)
{
    return (x ^ (x >> 7)) * 2654435761u;
}

__attribute__((noinline, noipa)) static void *loop(void *arg)
{
    long n = *(long *)arg;
    uint32_t acc = 1;
    for (long i = 0; i < n; i++)
        acc = tiny(acc + (uint32_t)i);
    *(long *)arg = acc;
    return NULL;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 10000000;
    int threads = argc > 2 ? atoi(argv[2]) : 1;
    long arg[16];
    pthread_t tid[16];
    if (threads < 1 || threads > 16)
        return 2;
    if (threads == 1) {
        arg[0] = n;
        loop(&arg[0]);
    } else {
        for (int i = 0; i < threads; i++) {
            arg[i] = n;
            if (pthread_create(&tid[i], NULL, loop, &arg[i]))
                return 1;
        }
        for (int i = 0; i < threads; i++)
            pthread_join(tid[i], NULL);
    }
    unsigned long sum = 0;
    for (int i = 0; i < threads; i++)
        sum += (unsigned long)arg[i];
    printf("tiny x %d threads: %lu\n", threads, sum);
    return 0;
}
/* SPDX-License-Identifier: MIT */
