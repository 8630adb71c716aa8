/*
 * The wrappers beyond point to point and the classic collectives, for tests/mpi/run_mpi.py
 * (case more): MPI-IO, a topology with a neighbourhood collective, one-sided transfers and
 * persistent sends. Every rank makes the same calls, each count and caller following from
 * the code (run_mpi.py lists them); the line printed by rank 0 proves the data moved.
 */
#include <mpi.h>
#include <stdio.h>

/* Every rank writes its rank at its own offset (collective), reads it back, then reads the
 * next rank's through the nonblocking form. */
__attribute__((noinline)) int io(const char *path, int rank, int size)
{
    MPI_File fh;
    MPI_Request req;
    int v = rank, back = -1, next = -1;
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL);
    MPI_File_write_at_all(fh, rank, &v, 1, MPI_INT, MPI_STATUS_IGNORE);
    MPI_File_sync(fh);
    MPI_File_seek(fh, rank, MPI_SEEK_SET);
    MPI_File_read(fh, &back, 1, MPI_INT, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD); /* every rank's write is visible after the sync and this */
    MPI_File_iread_at(fh, (rank + 1) % size, &next, 1, MPI_INT, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_File_close(&fh);
    return back == rank && next == (rank + 1) % size;
}

/* A periodic ring as a Cartesian topology: each rank gathers its two neighbours' ranks. */
__attribute__((noinline)) int topology(int rank, int size)
{
    int dims[1] = {size}, periods[1] = {1}, got[2] = {-1, -1};
    MPI_Comm cart, dup;
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
    MPI_Comm_dup_with_info(cart, MPI_INFO_NULL, &dup);
    MPI_Neighbor_allgather(&rank, 1, MPI_INT, got, 1, MPI_INT, dup);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&cart);
    return got[0] == (rank + size - 1) % size && got[1] == (rank + 1) % size;
}

/* Each rank adds 1 to its right neighbour's counter, then reads its own. */
__attribute__((noinline)) int one_sided(int rank, int size)
{
    int *base = NULL, one = 1, old = -1, mine = -1;
    MPI_Win win;
    /* A page, not one int: Debian's MPICH 4.0.2 sends every rank's Fetch_and_op on
     * 4-byte windows to rank 0's counter (each rank then reads 4); with a page each its own. */
    MPI_Win_allocate(4096, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    MPI_Win_lock_all(0, win);
    *base = 0;
    MPI_Win_sync(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Fetch_and_op(&one, &old, MPI_INT, (rank + 1) % size, 0, MPI_SUM, win);
    MPI_Win_flush_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Request req;
    MPI_Rget(&mine, 1, MPI_INT, rank, 0, 1, MPI_INT, win, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    return mine == 1;
}

/* A persistent synchronous send round the ring. */
__attribute__((noinline)) int persistent(int rank, int size)
{
    int out = rank, in = -1, flag = 0;
    MPI_Request req[2];
    MPI_Status st;
    MPI_Ssend_init(&out, 1, MPI_INT, (rank + 1) % size, 3, MPI_COMM_WORLD, &req[0]);
    MPI_Irecv(&in, 1, MPI_INT, (rank + size - 1) % size, 3, MPI_COMM_WORLD, &req[1]);
    MPI_Start(&req[0]);
    MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    MPI_Request_get_status(req[0], &flag, &st);
    MPI_Request_free(&req[0]);
    return flag && in == (rank + size - 1) % size;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int ok = io(argc > 1 ? argv[1] : "more_calls.dat", rank, size);
    ok += topology(rank, size);
    ok += one_sided(rank, size);
    ok += persistent(rank, size);
    int all = 0;
    MPI_Reduce(&ok, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("more_calls: size %d checks %d of %d\n", size, all, 4 * size);
    MPI_Finalize();
    return 0;
}
/* SPDX-License-Identifier: MIT */
