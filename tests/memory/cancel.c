/*
 * Threads cancelled while they write profiles (fnprof_dump, whose writes are cancellation
 * points): a cancel must never leave fnprof's lock held, or every later dump, and the one
 * at exit, would wait for ever.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fnprof.h"

static void work(void)
{
    void *p = malloc(10);
    free(p);
}

static void *dumping(void *arg)
{
    (void)arg;
    for (;;) {
        work();
        fnprof_dump(NULL);
    }
    return NULL;
}

int main(void)
{
    for (int i = 0; i < 10; i++) {
        pthread_t th;
        pthread_create(&th, NULL, dumping, NULL);
        usleep(3000);
        pthread_cancel(th);
        pthread_join(th, NULL);
    }
    work();
    puts("ok");
    return 0;
}
/* SPDX-License-Identifier: MIT */
