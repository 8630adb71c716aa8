/* Timing: busy-waits of known length (spinning on CLOCK_MONOTONIC), nested and recursive.
 * Nominal times (ms): spin_20 5 calls, 100 self; spin_30 2 calls, 60; spin_50 2 calls, 100;
 * outer 2 calls, 120 self, 260 cumulative; spin_rec 4 calls, 1 primitive, 40 self and 40
 * cumulative (recursion is not counted twice); run_all 30 self, 450 cumulative.
 *
 * The program also logs its own calls (enter, exit, CLOCK_MONOTONIC) and prints the log at
 * the end: the e2e harness replays it through cProfile to get the times fnprof must report,
 * preemption included. The helpers are not instrumented, so only the profiled functions
 * appear in fnprof's output. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <time.h>

#define NO_INSTRUMENT __attribute__((no_instrument_function))
#define MAX_EVENTS 256

struct event {
    char kind; /* 'E' enter, 'X' exit */
    const char *name;
    struct timespec ts;
};

/* Written by the profiled functions, in order; printed by main at the end. */
static struct event events[MAX_EVENTS];
static int nevents;

NO_INSTRUMENT static void log_event(char kind, const char *name)
{
    if (nevents == MAX_EVENTS)
        return;
    events[nevents].kind = kind;
    events[nevents].name = name;
    clock_gettime(CLOCK_MONOTONIC, &events[nevents].ts);
    nevents++;
}

NO_INSTRUMENT static long long elapsed_ns(const struct timespec *from, const struct timespec *to)
{
    return (to->tv_sec - from->tv_sec) * 1000000000LL + (to->tv_nsec - from->tv_nsec);
}

/* Waits ms milliseconds of wall time: being preempted in the middle does not lengthen it. */
NO_INSTRUMENT static void busy_ms(int ms)
{
    struct timespec start, now;

    clock_gettime(CLOCK_MONOTONIC, &start);
    do {
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while (elapsed_ns(&start, &now) < ms * 1000000LL);
}

void spin_20(void)
{
    log_event('E', __func__);
    busy_ms(20);
    log_event('X', __func__);
}

void spin_30(void)
{
    log_event('E', __func__);
    busy_ms(30);
    log_event('X', __func__);
}

void spin_50(void)
{
    log_event('E', __func__);
    busy_ms(50);
    log_event('X', __func__);
}

void outer(void)
{
    log_event('E', __func__);
    busy_ms(40);
    spin_20();
    spin_30();
    spin_20();
    busy_ms(20);
    log_event('X', __func__);
}

void spin_rec(int n)
{
    log_event('E', __func__);
    busy_ms(10);
    if (n > 0)
        spin_rec(n - 1);
    log_event('X', __func__);
}

void run_all(void)
{
    log_event('E', __func__);
    outer();
    busy_ms(30);
    spin_50();
    outer();
    spin_rec(3);
    spin_50();
    spin_20();
    log_event('X', __func__);
}

int main(void)
{
    log_event('E', __func__);
    run_all();
    log_event('X', __func__);
    for (int i = 0; i < nevents; i++)
        printf("%c %s %lld.%09ld\n", events[i].kind, events[i].name, (long long)events[i].ts.tv_sec,
               events[i].ts.tv_nsec);
    return 0;
}
/* SPDX-License-Identifier: MIT */
