/* A thread still calling instrumented functions when main calls exit(): the profile is
 * written, main's counts are exact and the spinning thread's functions are in it
 * (run_robust.py, case "threads_exit"). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define PREPARES 7

static unsigned long spins;

void spin_step(void)
{
    __atomic_add_fetch(&spins, 1, __ATOMIC_RELAXED);
}

void *spinner(void *arg)
{
    for (;;)
        spin_step();
    return arg;
}

int prepare(int i)
{
    return i * 2;
}

void leave(int status)
{
    exit(status);
}

int main(void)
{
    pthread_t t;
    int sum = 0;
    for (int i = 0; i < PREPARES; i++)
        sum += prepare(i);
    if (pthread_create(&t, NULL, spinner, NULL))
        abort();
    /* The spinner is running instrumented code when exit() comes. */
    while (__atomic_load_n(&spins, __ATOMIC_RELAXED) < 10000)
        usleep(1000);
    printf("prepared %d, spinner running\n", sum);
    fflush(stdout);
    leave(5);
    return 1;
}
/* SPDX-License-Identifier: MIT */
