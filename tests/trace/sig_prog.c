/*
 * A signal handler that calls instrumented code while the program's loop does: the handler
 * lands inside the exit hook's trace store, or its cold path, about once in three. Before
 * trace_nest, a handler that moved the thread to a new chunk left the interrupted store
 * writing past the old one's end (a crash), and the flight recorder's lock, taken again by
 * the handler, hung the program (run_stream.py --case signal).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>

static volatile long sink;
static volatile int hits;

__attribute__((noinline)) static void leaf(int i)
{
    sink += i;
}

static void on_alarm(int s)
{
    (void)s;
    for (int i = 0; i < 200; i++)
        leaf(i);
    hits++;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 20000000;
    signal(SIGALRM, on_alarm);
    struct itimerval it = {{0, 50}, {0, 50}};
    setitimer(ITIMER_REAL, &it, NULL);
    for (long i = 0; i < n; i++)
        leaf((int)i);
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    printf("done %d\n", hits > 0);
    return 0;
}
/* SPDX-License-Identifier: MIT */
