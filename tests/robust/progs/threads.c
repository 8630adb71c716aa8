/* N worker threads, each with a known number of calls, while main works too. Expected
 * (run_robust.py, case "threads"): every count summed over the threads and every caller
 * edge exact; the start routines and main hang from ('~', 0, '<process>'). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define WORKERS 4
#define ROUNDS 1000

static unsigned long results[WORKERS + 1];

int leaf(int x)
{
    return x * 3 + 1;
}

int helper(int x)
{
    return leaf(x) + leaf(x + 1);
}

int step(int j)
{
    int r = leaf(j);
    if (j % 10 == 0)
        r += helper(j);
    return r;
}

/* Worker i makes (i + 1) * ROUNDS steps. */
void *worker(void *arg)
{
    long i = (long)arg;
    unsigned long sum = 0;
    for (int j = 0; j < (i + 1) * ROUNDS; j++)
        sum += (unsigned long)step(j);
    results[i] = sum;
    return NULL;
}

/* A second start routine: the synthetic root has more than one kind of thread. */
void *other_worker(void *arg)
{
    unsigned long sum = 0;
    for (int j = 0; j < ROUNDS; j++)
        sum += (unsigned long)helper(j);
    results[WORKERS] = sum;
    return arg;
}

unsigned long main_work(void)
{
    unsigned long sum = 0;
    for (int j = 0; j < 500; j++)
        sum += (unsigned long)leaf(j);
    return sum;
}

int main(void)
{
    pthread_t threads[WORKERS + 1];
    for (long i = 0; i < WORKERS; i++)
        if (pthread_create(&threads[i], NULL, worker, (void *)i))
            abort();
    if (pthread_create(&threads[WORKERS], NULL, other_worker, NULL))
        abort();
    unsigned long mine = main_work();
    for (int i = 0; i <= WORKERS; i++)
        pthread_join(threads[i], NULL);
    unsigned long total = mine;
    for (int i = 0; i <= WORKERS; i++)
        total += results[i];
    printf("threads %d main %lu total %lu\n", WORKERS + 1, mine, total);
    return 0;
}
/* SPDX-License-Identifier: MIT */
