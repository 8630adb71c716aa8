/*
 * A program linked with fnprof but run without PROF_OUTPUT (a release build shipped armed,
 * started plain): one thread pauses and resumes without end while the main thread forks,
 * and every child pauses and resumes once before it exits. The calls do nothing when fnprof
 * is not armed; they must not take a lock a fork can leave held in the child.
 */
#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fnprof.h"

static volatile int stop;

static void *toggle(void *arg)
{
    (void)arg;
    while (!stop) {
        fnprof_pause();
        fnprof_resume();
    }
    return NULL;
}

int main(void)
{
    pthread_t th;
    if (pthread_create(&th, NULL, toggle, NULL))
        return 2;
    int bad = 0;
    for (int i = 0; i < 300; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            fnprof_pause();
            fnprof_resume();
            _exit(0);
        }
        int status = 0;
        if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
            bad++;
    }
    stop = 1;
    pthread_join(th, NULL);
    printf("forks 300 bad %d\n", bad);
    return 0;
}
/* SPDX-License-Identifier: MIT */
