/* A timeline to check (PROF_TRACE): WORKERS threads, each named "ctl-worker-<i>", call
 * step() ROUNDS times, each step in a region "step body" around two calls of leaf();
 * main runs a region "setup" around prepare() and adds the metadata pair (model, resnet);
 * then argv[1] (default 0) short threads run brief() one after another, 10 calls of leaf()
 * each. Expected (run_robust.py, case "trace"): exact counts in the profile, one complete
 * event per recorded call in the trace, regions with cat "region", the threads' names. */
#define _GNU_SOURCE /* pthread_setname_np */
#include <fnprof.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define WORKERS 3
#define ROUNDS 200

static unsigned long results[WORKERS];

int leaf(int x)
{
    return x * 7 + 2;
}

int step(int x)
{
    FNPROF_REGION("step body");
    return leaf(x) + leaf(x + 1);
}

void *worker(void *arg)
{
    long i = (long)arg;
    char name[16];
    snprintf(name, sizeof(name), "ctl-worker-%ld", i);
    pthread_setname_np(pthread_self(), name);
    unsigned long sum = 0;
    for (int j = 0; j < ROUNDS; j++)
        sum += (unsigned long)step(j);
    results[i] = sum;
    return NULL;
}

void *brief(void *arg)
{
    long sum = 0;
    for (int j = 0; j < 10; j++)
        sum += leaf(j);
    return (void *)sum;
}

int prepare(int x)
{
    return leaf(x) - 1;
}

int main(int argc, char **argv)
{
    int shorts = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 0;
    fnprof_add_metadata("model", "resnet");
    int r;
    {
        FNPROF_REGION("setup");
        r = prepare(1) + prepare(2);
    }
    pthread_t threads[WORKERS];
    for (long i = 0; i < WORKERS; i++)
        if (pthread_create(&threads[i], NULL, worker, (void *)i))
            abort();
    unsigned long total = (unsigned long)r;
    for (int i = 0; i < WORKERS; i++) {
        pthread_join(threads[i], NULL);
        total += results[i];
    }
    for (int i = 0; i < shorts; i++) {
        pthread_t t;
        void *ret;
        if (pthread_create(&t, NULL, brief, NULL) || pthread_join(t, &ret))
            abort();
        total += (unsigned long)ret;
    }
    printf("trace %d threads total %lu\n", WORKERS + shorts, total);
    return 0;
}
/* SPDX-License-Identifier: MIT */
