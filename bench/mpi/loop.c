/* SPDX-License-Identifier: MIT */
/*
 * The MPI benchmark's workload (bench/mpi/overhead.py): a loop over a tiny non-inlined
 * function, timed by the program itself on CLOCK_MONOTONIC, so that MPI's start and end and
 * the profile's writing stay out of the figure. Built twice from this file: plain (cc), and
 * with -DFNP_BENCH_MPI (mpicc), where every rank runs the same loop after a barrier, at the
 * same time as the others. Prints "rank <r> ns <wall> cpu <cpu> calls <n>" per process: the
 * loop's wall time, and its thread's CPU time, which leaves out the time the process waited
 * for a core (ranks and other jobs sharing the machine).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#ifdef FNP_BENCH_MPI
#include <mpi.h>
#endif

__attribute__((noinline, noipa)) static uint32_t tiny(uint32_t x)
{
    return (x ^ (x >> 7)) * 2654435761u;
}

__attribute__((noinline, noipa)) static uint32_t loop(long n)
{
    uint32_t acc = 1;
    for (long i = 0; i < n; i++)
        acc = tiny(acc + (uint32_t)i);
    return acc;
}

static int64_t now_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 10000000;
    int rank = 0;
#ifdef FNP_BENCH_MPI
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
#endif
    int64_t t0 = now_ns(CLOCK_MONOTONIC), c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
    uint32_t acc = loop(n);
    int64_t c1 = now_ns(CLOCK_THREAD_CPUTIME_ID), t1 = now_ns(CLOCK_MONOTONIC);
    /* n calls of tiny and one of loop: the instrumented calls the loop's time covers */
    printf("rank %d ns %lld cpu %lld calls %ld acc %u\n", rank, (long long)(t1 - t0),
           (long long)(c1 - c0), n + 1, acc);
#ifdef FNP_BENCH_MPI
    MPI_Finalize();
#endif
    return 0;
}
