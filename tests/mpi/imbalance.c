/*
 * An MPI program with a known imbalance, for tests/mpi/run_mpi.py: rank r calls work()
 * UNITS * (r + 1)^3 times a step, so rank size-1 is the heaviest by far (8 times rank 1,
 * more than the scheduling of four ranks on two cores can blur); then every rank passes a
 * token round a ring with Send/Recv, again with Isend/Irecv and Waitall, and meets the others
 * in Barrier, Bcast, Allreduce, Reduce and Gather. Every call count follows from STEPS,
 * UNITS and the rank (run_mpi.py computes them); the results printed by rank 0 prove the
 * calls were made.
 *
 * With --fork, each rank then forks a child that runs compute() once more and exits (its
 * profile is written at its exit, as a forked child's): `fnprof run` must fold it into the
 * rank's file.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* run_mpi.py passes its own STEPS and UNITS, from which it computes the counts. */
#ifndef STEPS
#define STEPS 4
#endif
#ifndef UNITS
#define UNITS 40
#endif
#define SPIN 60000

static volatile unsigned long sink;

/* A unit of work: a loop the compiler must keep (volatile). */
__attribute__((noinline)) unsigned long work(int i)
{
    for (int k = 0; k < SPIN; k++)
        sink += (unsigned long)(i ^ k);
    return sink;
}

__attribute__((noinline)) unsigned long compute(int rank)
{
    unsigned long s = 0;
    for (int i = 0; i < UNITS * (rank + 1) * (rank + 1) * (rank + 1); i++)
        s += work(i) & 1;
    return s;
}

/* Blocking ring: rank 0 sends first and receives last, the others receive then send on;
 * the token comes back to 0 having been incremented by every rank. */
__attribute__((noinline)) int ring(int rank, int size)
{
    int token = 0, right = (rank + 1) % size, left = (rank + size - 1) % size;
    if (rank == 0) {
        MPI_Send(&token, 1, MPI_INT, right, 1, MPI_COMM_WORLD);
        MPI_Recv(&token, 1, MPI_INT, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(&token, 1, MPI_INT, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        token++;
        MPI_Send(&token, 1, MPI_INT, right, 1, MPI_COMM_WORLD);
    }
    return token;
}

/* Nonblocking ring: every rank sends its rank right and receives its left's. */
__attribute__((noinline)) int ring_nonblocking(int rank, int size)
{
    int in = -1, out = rank, right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Request req[2];
    MPI_Irecv(&in, 1, MPI_INT, left, 2, MPI_COMM_WORLD, &req[0]);
    MPI_Isend(&out, 1, MPI_INT, right, 2, MPI_COMM_WORLD, &req[1]);
    MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    return in;
}

__attribute__((noinline)) long collectives(int rank, int size, int step)
{
    int seed = rank == 0 ? step + 7 : -1, one = rank + 1, sum = 0, total = 0;
    int *all = rank == 0 ? malloc(sizeof(int) * (size_t)size) : NULL;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Bcast(&seed, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Reduce(&one, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Gather(&seed, 1, MPI_INT, all, 1, MPI_INT, 0, MPI_COMM_WORLD);
    long r = seed + sum;
    if (all) {
        for (int i = 0; i < size; i++)
            r += all[i] == seed;
        r += total;
        free(all);
    }
    return r;
}

/* After MPI_Finalize: the child makes no MPI call (MPI forbids it in a forked child) and
 * leaves through exit(), which writes its profile. */
__attribute__((noinline)) int fork_child(int rank)
{
    fflush(stdout); /* the child must not print the parent's buffered line again */
    pid_t pid = fork();
    if (pid == 0)
        exit(compute(rank) == (unsigned long)-1);
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    unsigned long odd = 0;
    long tokens = 0, left = 0, coll = 0;
    for (int step = 0; step < STEPS; step++) {
        odd += compute(rank);
        tokens += ring(rank, size);
        left += ring_nonblocking(rank, size);
        coll += collectives(rank, size, step);
    }
    if (rank == 0)
        printf("imbalance: size %d tokens %ld left %ld collectives %ld\n", size, tokens, left,
               coll);
    MPI_Finalize();
    if (argc > 1 && strcmp(argv[1], "--fork") == 0 && fork_child(rank) != 0)
        return 2;
    return odd == (unsigned long)-1; /* never: keeps compute's result alive */
}
/* SPDX-License-Identifier: MIT */
