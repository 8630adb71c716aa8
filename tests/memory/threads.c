/* SPDX-License-Identifier: MIT */
/* Workers allocate, the main thread frees: every free is credited to the worker's
 * context. 4 threads x 1000 blocks of 48 bytes in worker_alloc; 4 x 10 blocks of 16 bytes
 * in worker_keep, never freed. */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#define THREADS 4
#define BLOCKS 1000

static void *blocks[THREADS][BLOCKS];

__attribute__((noinline)) void worker_alloc(void **out)
{
    for (int i = 0; i < BLOCKS; i++)
        out[i] = malloc(48);
}

__attribute__((noinline)) void worker_keep(void)
{
    static void *kept[THREADS * 10];
    static int n;
    for (int i = 0; i < 10; i++)
        kept[__atomic_fetch_add(&n, 1, __ATOMIC_RELAXED)] = malloc(16);
}

void *worker(void *arg)
{
    worker_alloc(arg);
    worker_keep();
    return NULL;
}

__attribute__((noinline)) void main_free(void)
{
    for (int t = 0; t < THREADS; t++)
        for (int i = 0; i < BLOCKS; i++)
            free(blocks[t][i]);
}

int main(void)
{
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++)
        pthread_create(&th[t], NULL, worker, blocks[t]);
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    main_free();
    return write(1, "ok\n", 3) != 3;
}
