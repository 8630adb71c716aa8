/*
 * 26 threads still inside a function of theirs when the program ends, after each has
 * made a few hundred calls: at exit the trace has 26 open calls besides those that ended.
 */
#include <pthread.h>
#include <unistd.h>

static volatile int sink;

static void step(void)
{
    sink++;
}

static void *loop(void *arg)
{
    for (;;) {
        step();
        usleep(1000);
    }
    return arg;
}

int main(void)
{
    pthread_t t;
    for (int i = 0; i < 26; i++)
        pthread_create(&t, NULL, loop, NULL);
    usleep(200000);
    return 0;
}
/* SPDX-License-Identifier: MIT */
