/* A program for the timeline's regions (run_stream.py, case regions): block regions, a
 * begin/end span, regions in a second thread, and metadata the program adds while it
 * runs. Built with -finstrument-functions and linked with -lfnprof.
 *   regions_prog ROUNDS */
#include <fnprof.h>
#include <pthread.h>
#include <stdlib.h>

static volatile long sink;

static long leaf(long i)
{
    return i * 3 + 1;
}

static long parse(long n)
{
    long s = 0;
    for (long i = 0; i < n; i++) {
        FNPROF_REGION("parse item");
        s += leaf(i);
    }
    return s;
}

static void *worker(void *arg)
{
    long n = (long)arg;
    FNPROF_REGION("worker body");
    for (long i = 0; i < n; i++) {
        fnprof_region_begin("span in thread");
        sink += parse(2);
        fnprof_region_end();
    }
    return NULL;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 10;
    fnprof_add_metadata("model", "resnet50");
    pthread_t t;
    pthread_create(&t, NULL, worker, (void *)n);
    {
        FNPROF_REGION("load config");
        sink += parse(n);
    }
    pthread_join(t, NULL);
    fnprof_add_metadata("phase", "done");
    return 0;
}
/* SPDX-License-Identifier: MIT */
