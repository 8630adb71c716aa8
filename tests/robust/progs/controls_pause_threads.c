/* The main thread pauses and resumes recording while worker threads make calls; barriers
 * put every call on a known side of the pause. Each worker calls work() ROUNDS times before
 * the pause, PAUSED_ROUNDS times while paused and ROUNDS times after the resume; a late
 * thread started while paused calls skipped() then, and late_work() LATE_ROUNDS times after
 * the resume. Expected (run_robust.py, case "pause_threads"): worker() recorded (entered
 * before the pause, open across it), work() 2 * ROUNDS per worker, skipped() and
 * late_thread() absent, late_work() outermost on its thread, under the root. */
#include <fnprof.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define WORKERS 3
#define ROUNDS 100
#define PAUSED_ROUNDS 70
#define LATE_ROUNDS 40

static pthread_barrier_t all;  /* the workers and main */
static pthread_barrier_t late; /* the late thread and main */
static unsigned long results[WORKERS + 1];

int leaf(int x)
{
    return x * 5 + 1;
}

int work(int x)
{
    return leaf(x) + 2;
}

void *worker(void *arg)
{
    long i = (long)arg;
    unsigned long sum = 0;
    for (int j = 0; j < ROUNDS; j++)
        sum += (unsigned long)work(j);
    pthread_barrier_wait(&all); /* main pauses after this one */
    pthread_barrier_wait(&all);
    for (int j = 0; j < PAUSED_ROUNDS; j++)
        sum += (unsigned long)work(j);
    pthread_barrier_wait(&all); /* main resumes after this one */
    pthread_barrier_wait(&all);
    for (int j = 0; j < ROUNDS; j++)
        sum += (unsigned long)work(j);
    results[i] = sum;
    return NULL;
}

int skipped(int x)
{
    return leaf(x) - 1;
}

int late_work(int x)
{
    return leaf(x) * 2;
}

void *late_thread(void *arg)
{
    unsigned long sum = (unsigned long)skipped(3);
    pthread_barrier_wait(&late); /* main resumes after this one */
    pthread_barrier_wait(&late);
    for (int j = 0; j < LATE_ROUNDS; j++)
        sum += (unsigned long)late_work(j);
    results[WORKERS] = sum;
    return arg;
}

int main(void)
{
    pthread_t threads[WORKERS + 1];
    if (pthread_barrier_init(&all, NULL, WORKERS + 1) || pthread_barrier_init(&late, NULL, 2))
        abort();
    for (long i = 0; i < WORKERS; i++)
        if (pthread_create(&threads[i], NULL, worker, (void *)i))
            abort();
    pthread_barrier_wait(&all);
    fnprof_pause();
    if (pthread_create(&threads[WORKERS], NULL, late_thread, NULL))
        abort();
    pthread_barrier_wait(&all);
    unsigned long mine = (unsigned long)work(-1); /* paused: not recorded */
    pthread_barrier_wait(&all);
    pthread_barrier_wait(&late);
    fnprof_resume();
    pthread_barrier_wait(&all);
    pthread_barrier_wait(&late);
    mine += (unsigned long)work(-2);
    for (int i = 0; i <= WORKERS; i++)
        pthread_join(threads[i], NULL);
    unsigned long total = mine;
    for (int i = 0; i <= WORKERS; i++)
        total += results[i];
    printf("threads %d total %lu\n", WORKERS + 1, total);
    pthread_barrier_destroy(&all);
    pthread_barrier_destroy(&late);
    return 0;
}
/* SPDX-License-Identifier: MIT */
