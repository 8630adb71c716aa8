/* fork while another thread patches: a thread pauses and resumes recording without a
 * break while the main thread forks CHILDREN children. The patch lock is held across fork
 * (patch.c), so a child never starts with code half written. Each child resumes recording
 * (its own profile, PROF_OUTPUT.<pid>), calls fib(FIB), and exits 0; a child whose code was
 * left unusable would crash or hang. The parent prints how many children exited cleanly. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fnprof.h"
#include "rt_common.h"

#define CHILDREN 40
#define FIB 12

static int stop;
static volatile long sink;

NOINLINE long fib(int n)
{
    if (n < 2)
        return n;
    long r = fib(n - 1);
    KEEP(r);
    r += fib(n - 2);
    KEEP(r);
    return r;
}

NOINLINE void *toggler(void *arg)
{
    (void)arg;
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
        fnprof_pause();
        fnprof_resume();
    }
    return NULL;
}

NOINLINE void child(void)
{
    fnprof_resume();
    long r = fib(FIB);
    exit(r == 144 ? 0 : 3); /* the exit dump writes its profile */
}

int main(void)
{
    pthread_t t;
    pthread_create(&t, NULL, toggler, NULL);
    int clean = 0;
    for (int i = 0; i < CHILDREN; i++) {
        usleep(1000 + 300 * (i % 7));
        pid_t p = fork();
        if (p == 0)
            child();
        int status;
        if (p > 0 && waitpid(p, &status, 0) == p && WIFEXITED(status) && WEXITSTATUS(status) == 0)
            clean++;
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    pthread_join(t, NULL);
    printf("clean=%d\n", clean);
    return 0;
}
/* SPDX-License-Identifier: MIT */
