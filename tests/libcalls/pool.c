/* A thread pool: WORKERS threads wait on a condition variable for tasks that main hands out
 * one at a time, sleeping between them. The workers' own work is tiny; nearly all their
 * time is spent in pthread_cond_wait, and main's in usleep and pthread_join. The program
 * counts its own calls of pthread_cond_wait and prints them, so that the test knows them
 * exactly (a condition variable may wake spuriously). */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#define WORKERS 3
#define TASKS 12

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready = PTHREAD_COND_INITIALIZER;
static int queued, done, stopping;
static long waits, results;

static long task(int i)
{
    long s = 0;
    for (int k = 0; k < 1000; k++)
        s += (k ^ i) & 7;
    return s;
}

static void *worker(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&lock);
    for (;;) {
        while (!queued && !stopping) {
            waits++;
            pthread_cond_wait(&ready, &lock);
        }
        if (!queued)
            break;
        queued--;
        int i = done++;
        pthread_mutex_unlock(&lock);
        long r = task(i);
        pthread_mutex_lock(&lock);
        results += r;
    }
    pthread_mutex_unlock(&lock);
    return NULL;
}

static void submit(void)
{
    pthread_mutex_lock(&lock);
    queued++;
    pthread_cond_signal(&ready);
    pthread_mutex_unlock(&lock);
}

int main(void)
{
    pthread_t t[WORKERS];
    for (int i = 0; i < WORKERS; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < TASKS; i++) {
        usleep(20000);
        submit();
    }
    usleep(20000);
    pthread_mutex_lock(&lock);
    stopping = 1;
    pthread_cond_broadcast(&ready);
    pthread_mutex_unlock(&lock);
    for (int i = 0; i < WORKERS; i++)
        pthread_join(t[i], NULL);
    printf("waits %ld results %ld\n", waits, results);
    return 0;
}
/* SPDX-License-Identifier: MIT */
