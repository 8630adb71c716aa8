/*
 * A threaded program that forks while its other threads hold fnprof's locks: two threads
 * begin regions of new names and add metadata without pause, and the main thread forks
 * argv[1] children. Each child begins a region of a new name, adds metadata and exits, so
 * that its exit dump reads the metadata too. A child left waiting on a lock that a thread
 * it does not have held at the fork never ends: the parent gives each child argv[2]
 * seconds, then kills it, says so and exits 1.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fnprof.h"

static volatile int stop;

static void *regions(void *arg)
{
    char name[64];
    for (unsigned long i = 0; !stop; i++) {
        snprintf(name, sizeof(name), "r%lu-%lu", (unsigned long)(size_t)arg, i);
        fnprof_region_begin(name);
        fnprof_region_end();
    }
    return NULL;
}

static void *metadata(void *arg)
{
    char value[64];
    for (unsigned long i = 0; !stop; i++) {
        snprintf(value, sizeof(value), "%lu", i);
        fnprof_add_metadata(arg, value);
    }
    return NULL;
}

static int work(int x)
{
    return x * 3 + 1;
}

/* 0 when pid ended within limit seconds; else it is killed and -1 returned. */
static int reap(pid_t pid, int limit)
{
    struct timespec tick = {0, 2000000};
    for (long waited = 0; waited < limit * 500L; waited++) {
        int status;
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -2;
        if (r < 0)
            return -2;
        nanosleep(&tick, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return -1;
}

int main(int argc, char **argv)
{
    int forks = argc > 1 ? atoi(argv[1]) : 200, limit = argc > 2 ? atoi(argv[2]) : 30;
    pthread_t t[3];
    pthread_create(&t[0], NULL, regions, (void *)1);
    pthread_create(&t[1], NULL, metadata, "a");
    pthread_create(&t[2], NULL, metadata, "b");
    int hung = 0, failed = 0;
    for (int i = 0; i < forks && !hung; i++) {
        work(i);
        pid_t pid = fork();
        if (pid < 0) {
            perror("fork");
            return 2;
        }
        if (pid == 0) {
            char name[64];
            snprintf(name, sizeof(name), "child-%d", i);
            fnprof_region_begin(name);
            work(i);
            fnprof_region_end();
            fnprof_add_metadata("child", name);
            exit(0);
        }
        int rc = reap(pid, limit);
        if (rc == -1) {
            printf("child %d (fork %d of %d) still running after %d s: killed\n", (int)pid, i + 1,
                   forks, limit);
            hung = 1;
        } else if (rc == -2) {
            failed++;
        }
    }
    stop = 1;
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    printf("forks %d, hung %d, failed %d\n", forks, hung, failed);
    return hung || failed;
}
/* SPDX-License-Identifier: MIT */
