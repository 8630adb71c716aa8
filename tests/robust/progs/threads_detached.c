/* argv[1] detached threads, at most 8 alive at once, each calling a tiny function three
 * times; main waits until every one has made its calls. Run with PROF_TRACE
 * (run_robust.py, case "trace_churn"): an ended thread's state serves the next thread, its
 * calls kept within PROF_TRACE_EVENTS, so the time and the peak do not grow with the
 * number of threads. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long done;

int tiny(int x)
{
    return x + 1;
}

void *brief_worker(void *arg)
{
    long v = (long)arg;
    v = tiny((int)v);
    v = tiny((int)v);
    v = tiny((int)v);
    __atomic_add_fetch(&done, 1, __ATOMIC_RELEASE);
    return (void *)v;
}

void start_threads(long n)
{
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    for (long i = 0; i < n; i++) {
        pthread_t t;
        while (i - __atomic_load_n(&done, __ATOMIC_ACQUIRE) >= 8)
            sched_yield();
        int rc;
        while ((rc = pthread_create(&t, &attr, brief_worker, (void *)(i & 0xff))) != 0) {
            if (i == __atomic_load_n(&done, __ATOMIC_ACQUIRE)) {
                fprintf(stderr, "pthread_create: %s\n", strerror(rc));
                exit(1);
            }
            sched_yield();
        }
    }
    while (__atomic_load_n(&done, __ATOMIC_ACQUIRE) < n)
        sched_yield();
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    long n = strtol(argv[1], NULL, 10);
    start_threads(n);
    printf("threads %ld\n", n);
    return 0;
}
/* SPDX-License-Identifier: MIT */
