/*
 * A program whose exit dump stops half way, deterministically, until it is let go: run
 * with a libfnprof.so that has no symbolizer beside it, the dump says so on fd 2 before it
 * writes the profile, and this program has filled its fd 2 (a pipe nobody reads yet), so
 * that line waits for room. It prints "exiting" on stdout, closes it and returns from main.
 * argv[1] "thread": another thread runs meanwhile and the main thread blocks SIGTERM and
 * SIGINT before returning, so that a signal sent to the process is taken by the other one.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int work(int x)
{
    return x * 11 + 1;
}

static void *idle(void *arg)
{
    for (;;)
        pause();
    return arg;
}

int main(int argc, char **argv)
{
    int sum = 0;
    for (int i = 0; i < 100; i++)
        sum += work(i);
    if (argc > 1 && strcmp(argv[1], "thread") == 0) {
        pthread_t t;
        pthread_create(&t, NULL, idle, NULL);
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGTERM);
        sigaddset(&set, SIGINT);
        pthread_sigmask(SIG_BLOCK, &set, NULL);
    }
    int flags = fcntl(2, F_GETFL);
    fcntl(2, F_SETFL, flags | O_NONBLOCK);
    char block[4096];
    memset(block, '.', sizeof(block));
    while (write(2, block, sizeof(block)) > 0 || errno == EINTR)
        ;
    while (write(2, block, 1) > 0 || errno == EINTR)
        ;
    fcntl(2, F_SETFL, flags);
    printf("exiting %d\n", sum);
    fclose(stdout);
    return 0;
}
/* SPDX-License-Identifier: MIT */
