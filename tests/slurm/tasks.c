/*
 * A serial (non-MPI) program for tests/slurm/run_slurm.py, linked with -lfnprof and started
 * by srun as four tasks: task r calls work() UNITS * (r + 1) times, r read from Slurm's own
 * SLURM_PROCID, so each rank file's counts prove that the file fnprof named after the task
 * (profile/outname.c: SLURM_PROCID and SLURM_STEP_NUM_TASKS) holds that task's calls. Each
 * call's work grows as (r + 1)^3, so that task 3 takes 3 times task 2's time (~40 ms):
 * fnprof ranks must name it the slowest even on a loaded machine.
 */
#include <stdio.h>
#include <stdlib.h>

#define UNITS 10

static volatile unsigned long sink;

__attribute__((noinline)) unsigned long work(int i, int n)
{
    for (int k = 0; k < n; k++)
        sink += (unsigned long)(i ^ k);
    return sink;
}

__attribute__((noinline)) unsigned long compute(int task)
{
    unsigned long s = 0;
    for (int i = 0; i < UNITS * (task + 1); i++)
        s += work(i, 1000 * (task + 1) * (task + 1) * (task + 1)) & 1;
    return s;
}

int main(void)
{
    const char *id = getenv("SLURM_PROCID");
    int task = id ? atoi(id) : 0;
    unsigned long s = compute(task);
    printf("tasks: task %d units %d checksum %lu\n", task, UNITS * (task + 1), s);
    return 0;
}
/* SPDX-License-Identifier: MIT */
