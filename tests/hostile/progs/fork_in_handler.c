/*
 * A thread forks while another one is inside fnprof's handler of a fatal signal: thread A
 * raises SIGTERM, whose handler writes argv[1] (PROF_OUTPUT.raw) and waits for `fnprof
 * symbolize`; the main thread waits until that file is there, forks, and the child writes
 * its pid to argv[2] and raises SIGINT, whose handler is still fnprof's. The child must
 * die by it, whatever the parent's handler was doing when it forked; the parent dies by
 * A's SIGTERM.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int work(int x)
{
    return x * 17 + 3;
}

static void *die(void *arg)
{
    (void)arg;
    raise(SIGTERM);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    int sum = 0;
    for (int i = 0; i < 100; i++)
        sum += work(i);
    pthread_t t;
    pthread_create(&t, NULL, die, NULL);
    struct timespec tick = {0, 1000000};
    while (access(argv[1], F_OK) != 0)
        nanosleep(&tick, NULL);
    pid_t pid = fork();
    if (pid == 0) {
        char line[32];
        int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int n = snprintf(line, sizeof(line), "%d\n", (int)getpid());
        if (fd < 0 || write(fd, line, (size_t)n) != n)
            _exit(3);
        close(fd);
        raise(SIGINT); /* SIGTERM's default action is back already: the parent's handler */
        _exit(4);
    }
    for (;;)
        pause(); /* A's signal ends the process */
    return sum;
}
/* SPDX-License-Identifier: MIT */
