/* A main loop of argv[1] steps for PROF_SCHEDULE: step s calls work(s) once, which calls
 * leaf() s + 1 times, then fnprof_step(); after the loop (in step argv[1]) main calls
 * finish() once. The numbers of leaf calls tell which steps a profile holds. Expected
 * (run_robust.py, case "schedule"): one profile per active cycle, each holding exactly the
 * calls of that cycle's RECORD and RECORD_AND_SAVE steps. */
#include <fnprof.h>
#include <stdio.h>
#include <stdlib.h>

static volatile long sink;

int leaf(int x)
{
    sink += x;
    return x & 7;
}

long work(int s)
{
    long r = 0;
    for (int i = 0; i <= s; i++)
        r += leaf(i);
    return r;
}

long finish(long r)
{
    return r + 1;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    int steps = (int)strtol(argv[1], NULL, 10);
    long r = 0;
    for (int s = 0; s < steps; s++) {
        r += work(s);
        fnprof_step();
    }
    r = finish(r);
    printf("steps %d result %ld\n", steps, r);
    return 0;
}
/* SPDX-License-Identifier: MIT */
