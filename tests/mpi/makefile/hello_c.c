/* An MPI program built by an Open MPI-style Makefile (tests/mpi/makefile/Makefile), for
 * tests/mpi/makefile_mpicc.py: it is compiled, never run. */
#include <mpi.h>
#include <stdio.h>

static int greet(int rank)
{
    return printf("hello from %d\n", rank);
}

int main(int argc, char **argv)
{
    int rank = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    greet(rank);
    MPI_Finalize();
    return 0;
}
/* SPDX-License-Identifier: MIT */
