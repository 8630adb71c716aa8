/* SPDX-License-Identifier: MIT */
/*
 * The PMPI wrappers of libfnprof-mpi.so: each MPI_Xxx of the standard C bindings calls
 * PMPI_Xxx between the two hooks -finstrument-functions would have put there, with its own
 * address as the function entered. The MPI call is then one more function of the calling-
 * context tree, under the function that made it, named from this file's DWARF (the library
 * is built with -g and not instrumented): its calls are exact, its time is the time spent
 * in MPI (for a receive, a wait, a barrier or a collective, mostly waiting for other ranks),
 * and every mode of the runtime (count-only, PROF_FILTER, pause, schedules) applies as to
 * any other function.
 *
 * The program's call reaches these through the loader: LD_PRELOAD puts this library before
 * the MPI library, and MPI's own MPI_Xxx (weak, or a second name of PMPI_Xxx) is never
 * called. The hooks are looked up the same way, in the global scope: libfnprof.so must be
 * preloaded too (before or after this library, both work: every preloaded library comes
 * before libc) or linked to the program. Preloaded alone into a program not linked with
 * fnprof, this library brings libfnprof.so in only as its dependency, after libc, whose
 * empty pair then answers every call: nothing is recorded, and the exit dump says so.
 *
 * One wrapper a line, so that each has its own line in the profile's (file, line, name)
 * keys. The prototypes are MPI-3's (const buffers), as <mpi.h> declares them: a wrapper
 * that disagrees with the implementation's declaration does not compile.
 */
#include <mpi.h>

/* The hooks; libfnprof.so defines them (include/fnprof.h does not declare them). */
void __cyg_profile_func_enter(void *fn, void *call_site);
void __cyg_profile_func_exit(void *fn, void *call_site);

#define FNP_MPI_EXPORT __attribute__((visibility("default"), noinline))

/* The call site is the wrapper's return address, as an instrumented function passes it;
 * the runtime uses its shadow stack, not this, to find the caller. */
#define FNP_MPI(ret, name, params, args)                                                           \
    FNP_MPI_EXPORT ret MPI_##name params                                                           \
    {                                                                                              \
        void *site = __builtin_return_address(0);                                                  \
        __cyg_profile_func_enter((void *)MPI_##name, site);                                        \
        ret rc = PMPI_##name args;                                                                 \
        __cyg_profile_func_exit((void *)MPI_##name, site);                                         \
        return rc;                                                                                 \
    }

/* clang-format off */

/* Start and end. Initialized/Finalized may be called before Init and after Finalize: the
 * hooks never depend on MPI's state. */
FNP_MPI(int, Init, (int *argc, char ***argv), (argc, argv))
FNP_MPI(int, Init_thread, (int *argc, char ***argv, int required, int *provided), (argc, argv, required, provided))
FNP_MPI(int, Finalize, (void), ())
FNP_MPI(int, Initialized, (int *flag), (flag))
FNP_MPI(int, Finalized, (int *flag), (flag))
FNP_MPI(int, Abort, (MPI_Comm comm, int errorcode), (comm, errorcode))

/* Cheap queries: wrapped too, so that "every MPI call" holds without exceptions (see
 * docs/mpi.md); a filter can leave them out (EXCLUDE MPI_Wtime). */
FNP_MPI(int, Comm_rank, (MPI_Comm comm, int *rank), (comm, rank))
FNP_MPI(int, Comm_size, (MPI_Comm comm, int *size), (comm, size))
FNP_MPI(double, Wtime, (void), ())
FNP_MPI(double, Wtick, (void), ())
FNP_MPI(int, Get_count, (const MPI_Status *status, MPI_Datatype datatype, int *count), (status, datatype, count))

/* Point to point. */
FNP_MPI(int, Send, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm), (buf, count, datatype, dest, tag, comm))
FNP_MPI(int, Recv, (void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Status *status), (buf, count, datatype, source, tag, comm, status))
FNP_MPI(int, Ssend, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm), (buf, count, datatype, dest, tag, comm))
FNP_MPI(int, Bsend, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm), (buf, count, datatype, dest, tag, comm))
FNP_MPI(int, Rsend, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm), (buf, count, datatype, dest, tag, comm))
FNP_MPI(int, Isend, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request), (buf, count, datatype, dest, tag, comm, request))
FNP_MPI(int, Issend, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request), (buf, count, datatype, dest, tag, comm, request))
FNP_MPI(int, Ibsend, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request), (buf, count, datatype, dest, tag, comm, request))
FNP_MPI(int, Irsend, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request), (buf, count, datatype, dest, tag, comm, request))
FNP_MPI(int, Irecv, (void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Request *request), (buf, count, datatype, source, tag, comm, request))
FNP_MPI(int, Sendrecv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status *status), (sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm, status))
FNP_MPI(int, Sendrecv_replace, (void *buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag, MPI_Comm comm, MPI_Status *status), (buf, count, datatype, dest, sendtag, source, recvtag, comm, status))
FNP_MPI(int, Probe, (int source, int tag, MPI_Comm comm, MPI_Status *status), (source, tag, comm, status))
FNP_MPI(int, Iprobe, (int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status), (source, tag, comm, flag, status))
FNP_MPI(int, Mprobe, (int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status), (source, tag, comm, message, status))
FNP_MPI(int, Improbe, (int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status), (source, tag, comm, flag, message, status))
FNP_MPI(int, Mrecv, (void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Status *status), (buf, count, type, message, status))
FNP_MPI(int, Imrecv, (void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Request *request), (buf, count, type, message, request))
FNP_MPI(int, Send_init, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request), (buf, count, datatype, dest, tag, comm, request))
FNP_MPI(int, Recv_init, (void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Request *request), (buf, count, datatype, source, tag, comm, request))
FNP_MPI(int, Ssend_init, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request), (buf, count, datatype, dest, tag, comm, request))
FNP_MPI(int, Bsend_init, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request), (buf, count, datatype, dest, tag, comm, request))
FNP_MPI(int, Rsend_init, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request), (buf, count, datatype, dest, tag, comm, request))
FNP_MPI(int, Start, (MPI_Request *request), (request))
FNP_MPI(int, Startall, (int count, MPI_Request array_of_requests[]), (count, array_of_requests))
FNP_MPI(int, Request_free, (MPI_Request *request), (request))
FNP_MPI(int, Cancel, (MPI_Request *request), (request))
FNP_MPI(int, Test_cancelled, (const MPI_Status *status, int *flag), (status, flag))

/* Completion: where a nonblocking operation's waiting shows. */
FNP_MPI(int, Wait, (MPI_Request *request, MPI_Status *status), (request, status))
FNP_MPI(int, Waitall, (int count, MPI_Request array_of_requests[], MPI_Status *array_of_statuses), (count, array_of_requests, array_of_statuses))
FNP_MPI(int, Waitany, (int count, MPI_Request array_of_requests[], int *index, MPI_Status *status), (count, array_of_requests, index, status))
FNP_MPI(int, Waitsome, (int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[], MPI_Status array_of_statuses[]), (incount, array_of_requests, outcount, array_of_indices, array_of_statuses))
FNP_MPI(int, Test, (MPI_Request *request, int *flag, MPI_Status *status), (request, flag, status))
FNP_MPI(int, Testall, (int count, MPI_Request array_of_requests[], int *flag, MPI_Status array_of_statuses[]), (count, array_of_requests, flag, array_of_statuses))
FNP_MPI(int, Testany, (int count, MPI_Request array_of_requests[], int *index, int *flag, MPI_Status *status), (count, array_of_requests, index, flag, status))
FNP_MPI(int, Testsome, (int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[], MPI_Status array_of_statuses[]), (incount, array_of_requests, outcount, array_of_indices, array_of_statuses))
FNP_MPI(int, Request_get_status, (MPI_Request request, int *flag, MPI_Status *status), (request, flag, status))

/* Collectives, blocking. */
FNP_MPI(int, Barrier, (MPI_Comm comm), (comm))
FNP_MPI(int, Bcast, (void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm), (buffer, count, datatype, root, comm))
FNP_MPI(int, Reduce, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm), (sendbuf, recvbuf, count, datatype, op, root, comm))
FNP_MPI(int, Allreduce, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm), (sendbuf, recvbuf, count, datatype, op, comm))
FNP_MPI(int, Reduce_local, (const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype, MPI_Op op), (inbuf, inoutbuf, count, datatype, op))
FNP_MPI(int, Gather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm), (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm))
FNP_MPI(int, Gatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm), (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm))
FNP_MPI(int, Scatter, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm), (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm))
FNP_MPI(int, Scatterv, (const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm), (sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm))
FNP_MPI(int, Allgather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm), (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))
FNP_MPI(int, Allgatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm), (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm))
FNP_MPI(int, Alltoall, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm), (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))
FNP_MPI(int, Alltoallv, (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm), (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm))
FNP_MPI(int, Alltoallw, (const void *sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm), (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm))
FNP_MPI(int, Reduce_scatter, (const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm), (sendbuf, recvbuf, recvcounts, datatype, op, comm))
FNP_MPI(int, Reduce_scatter_block, (const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm), (sendbuf, recvbuf, recvcount, datatype, op, comm))
FNP_MPI(int, Scan, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm), (sendbuf, recvbuf, count, datatype, op, comm))
FNP_MPI(int, Exscan, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm), (sendbuf, recvbuf, count, datatype, op, comm))

/* Collectives, nonblocking: the call starts the operation; its waiting shows in the Wait or
 * Test that completes it. */
FNP_MPI(int, Ibarrier, (MPI_Comm comm, MPI_Request *request), (comm, request))
FNP_MPI(int, Ibcast, (void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request *request), (buffer, count, datatype, root, comm, request))
FNP_MPI(int, Ireduce, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm, MPI_Request *request), (sendbuf, recvbuf, count, datatype, op, root, comm, request))
FNP_MPI(int, Iallreduce, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request), (sendbuf, recvbuf, count, datatype, op, comm, request))
FNP_MPI(int, Igather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request), (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request))
FNP_MPI(int, Igatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request), (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, request))
FNP_MPI(int, Iscatter, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request), (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request))
FNP_MPI(int, Iscatterv, (const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request), (sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, request))
FNP_MPI(int, Iallgather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request), (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request))
FNP_MPI(int, Iallgatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request), (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request))
FNP_MPI(int, Ialltoall, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request), (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request))
FNP_MPI(int, Ialltoallv, (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request), (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, request))
FNP_MPI(int, Ialltoallw, (const void *sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request), (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, request))
FNP_MPI(int, Ireduce_scatter, (const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request), (sendbuf, recvbuf, recvcounts, datatype, op, comm, request))
FNP_MPI(int, Ireduce_scatter_block, (const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request), (sendbuf, recvbuf, recvcount, datatype, op, comm, request))
FNP_MPI(int, Iscan, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request), (sendbuf, recvbuf, count, datatype, op, comm, request))
FNP_MPI(int, Iexscan, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request), (sendbuf, recvbuf, count, datatype, op, comm, request))

/* Neighbourhood collectives, on a communicator with a topology (Cart_create,
 * Dist_graph_create): blocking, then the nonblocking forms. */
FNP_MPI(int, Neighbor_allgather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm), (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))
FNP_MPI(int, Neighbor_allgatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm), (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm))
FNP_MPI(int, Neighbor_alltoall, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm), (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))
FNP_MPI(int, Neighbor_alltoallv, (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm), (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm))
FNP_MPI(int, Neighbor_alltoallw, (const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm), (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm))
FNP_MPI(int, Ineighbor_allgather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request), (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request))
FNP_MPI(int, Ineighbor_allgatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request), (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request))
FNP_MPI(int, Ineighbor_alltoall, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request), (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request))
FNP_MPI(int, Ineighbor_alltoallv, (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request), (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, request))
FNP_MPI(int, Ineighbor_alltoallw, (const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request), (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, request))

/* Communicators: creating one is collective, so it can wait too. */
FNP_MPI(int, Comm_split, (MPI_Comm comm, int color, int key, MPI_Comm *newcomm), (comm, color, key, newcomm))
FNP_MPI(int, Comm_split_type, (MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm), (comm, split_type, key, info, newcomm))
FNP_MPI(int, Comm_dup, (MPI_Comm comm, MPI_Comm *newcomm), (comm, newcomm))
FNP_MPI(int, Comm_idup, (MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request), (comm, newcomm, request))
FNP_MPI(int, Comm_create, (MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm), (comm, group, newcomm))
FNP_MPI(int, Comm_free, (MPI_Comm *comm), (comm))
FNP_MPI(int, Comm_create_group, (MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm), (comm, group, tag, newcomm))
FNP_MPI(int, Comm_dup_with_info, (MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm), (comm, info, newcomm))
FNP_MPI(int, Intercomm_create, (MPI_Comm local_comm, int local_leader, MPI_Comm bridge_comm, int remote_leader, int tag, MPI_Comm *newintercomm), (local_comm, local_leader, bridge_comm, remote_leader, tag, newintercomm))
FNP_MPI(int, Intercomm_merge, (MPI_Comm intercomm, int high, MPI_Comm *newintercomm), (intercomm, high, newintercomm))
FNP_MPI(int, Cart_create, (MPI_Comm old_comm, int ndims, const int dims[], const int periods[], int reorder, MPI_Comm *comm_cart), (old_comm, ndims, dims, periods, reorder, comm_cart))
FNP_MPI(int, Cart_sub, (MPI_Comm comm, const int remain_dims[], MPI_Comm *new_comm), (comm, remain_dims, new_comm))
FNP_MPI(int, Dist_graph_create, (MPI_Comm comm_old, int n, const int nodes[], const int degrees[], const int targets[], const int weights[], MPI_Info info, int reorder, MPI_Comm *newcomm), (comm_old, n, nodes, degrees, targets, weights, info, reorder, newcomm))
FNP_MPI(int, Dist_graph_create_adjacent, (MPI_Comm comm_old, int indegree, const int sources[], const int sourceweights[], int outdegree, const int destinations[], const int destweights[], MPI_Info info, int reorder, MPI_Comm *comm_dist_graph), (comm_old, indegree, sources, sourceweights, outdegree, destinations, destweights, info, reorder, comm_dist_graph))
/* The spawned processes are new MPI programs: profiled only if they get fnprof themselves
 * (MPI_Info's "env" key, or the launcher's environment). */
FNP_MPI(int, Comm_spawn, (const char *command, char *argv[], int maxprocs, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[]), (command, argv, maxprocs, info, root, comm, intercomm, array_of_errcodes))

/* One-sided: windows, their synchronisation (where the waiting shows) and the transfers. */
FNP_MPI(int, Win_create, (void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win), (base, size, disp_unit, info, comm, win))
FNP_MPI(int, Win_allocate, (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win), (size, disp_unit, info, comm, baseptr, win))
FNP_MPI(int, Win_allocate_shared, (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win), (size, disp_unit, info, comm, baseptr, win))
FNP_MPI(int, Win_create_dynamic, (MPI_Info info, MPI_Comm comm, MPI_Win *win), (info, comm, win))
FNP_MPI(int, Win_attach, (MPI_Win win, void *base, MPI_Aint size), (win, base, size))
FNP_MPI(int, Win_detach, (MPI_Win win, const void *base), (win, base))
FNP_MPI(int, Win_free, (MPI_Win *win), (win))
FNP_MPI(int, Win_fence, (int assert, MPI_Win win), (assert, win))
FNP_MPI(int, Win_lock, (int lock_type, int rank, int assert, MPI_Win win), (lock_type, rank, assert, win))
FNP_MPI(int, Win_unlock, (int rank, MPI_Win win), (rank, win))
FNP_MPI(int, Win_lock_all, (int assert, MPI_Win win), (assert, win))
FNP_MPI(int, Win_unlock_all, (MPI_Win win), (win))
FNP_MPI(int, Win_flush, (int rank, MPI_Win win), (rank, win))
FNP_MPI(int, Win_flush_all, (MPI_Win win), (win))
FNP_MPI(int, Win_flush_local, (int rank, MPI_Win win), (rank, win))
FNP_MPI(int, Win_flush_local_all, (MPI_Win win), (win))
FNP_MPI(int, Win_sync, (MPI_Win win), (win))
FNP_MPI(int, Win_post, (MPI_Group group, int assert, MPI_Win win), (group, assert, win))
FNP_MPI(int, Win_start, (MPI_Group group, int assert, MPI_Win win), (group, assert, win))
FNP_MPI(int, Win_complete, (MPI_Win win), (win))
FNP_MPI(int, Win_wait, (MPI_Win win), (win))
FNP_MPI(int, Put, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win), (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win))
FNP_MPI(int, Get, (void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win), (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win))
FNP_MPI(int, Accumulate, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win), (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, op, win))
FNP_MPI(int, Get_accumulate, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, void *result_addr, int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win), (origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype, target_rank, target_disp, target_count, target_datatype, op, win))
FNP_MPI(int, Fetch_and_op, (const void *origin_addr, void *result_addr, MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win), (origin_addr, result_addr, datatype, target_rank, target_disp, op, win))
FNP_MPI(int, Compare_and_swap, (const void *origin_addr, const void *compare_addr, void *result_addr, MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win), (origin_addr, compare_addr, result_addr, datatype, target_rank, target_disp, win))
/* Request-based transfers: their completion shows in the Wait or Test of the request. */
FNP_MPI(int, Rput, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_cout, MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request), (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_cout, target_datatype, win, request))
FNP_MPI(int, Rget, (void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request), (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win, request))
FNP_MPI(int, Raccumulate, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request), (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, op, win, request))
FNP_MPI(int, Rget_accumulate, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, void *result_addr, int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request), (origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype, target_rank, target_disp, target_count, target_datatype, op, win, request))

/* MPI-IO: collective opens and closes, positioned (_at), individual-pointer and shared-
 * pointer (_shared, _ordered) transfers; the _all forms are collective, so their time
 * includes waiting for the other ranks; the nonblocking (i) forms complete in a Wait. */
FNP_MPI(int, File_open, (MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh), (comm, filename, amode, info, fh))
FNP_MPI(int, File_close, (MPI_File *fh), (fh))
FNP_MPI(int, File_sync, (MPI_File fh), (fh))
FNP_MPI(int, File_set_view, (MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype, const char *datarep, MPI_Info info), (fh, disp, etype, filetype, datarep, info))
FNP_MPI(int, File_seek, (MPI_File fh, MPI_Offset offset, int whence), (fh, offset, whence))
FNP_MPI(int, File_seek_shared, (MPI_File fh, MPI_Offset offset, int whence), (fh, offset, whence))
FNP_MPI(int, File_read, (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status), (fh, buf, count, datatype, status))
FNP_MPI(int, File_write, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status), (fh, buf, count, datatype, status))
FNP_MPI(int, File_read_all, (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status), (fh, buf, count, datatype, status))
FNP_MPI(int, File_write_all, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status), (fh, buf, count, datatype, status))
FNP_MPI(int, File_read_shared, (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status), (fh, buf, count, datatype, status))
FNP_MPI(int, File_write_shared, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status), (fh, buf, count, datatype, status))
FNP_MPI(int, File_read_ordered, (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status), (fh, buf, count, datatype, status))
FNP_MPI(int, File_write_ordered, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status), (fh, buf, count, datatype, status))
FNP_MPI(int, File_read_at, (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype, MPI_Status *status), (fh, offset, buf, count, datatype, status))
FNP_MPI(int, File_write_at, (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status), (fh, offset, buf, count, datatype, status))
FNP_MPI(int, File_read_at_all, (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype, MPI_Status *status), (fh, offset, buf, count, datatype, status))
FNP_MPI(int, File_write_at_all, (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status), (fh, offset, buf, count, datatype, status))
FNP_MPI(int, File_iread, (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request), (fh, buf, count, datatype, request))
FNP_MPI(int, File_iwrite, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request), (fh, buf, count, datatype, request))
FNP_MPI(int, File_iread_all, (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request), (fh, buf, count, datatype, request))
FNP_MPI(int, File_iwrite_all, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request), (fh, buf, count, datatype, request))
FNP_MPI(int, File_iread_shared, (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request), (fh, buf, count, datatype, request))
FNP_MPI(int, File_iwrite_shared, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request), (fh, buf, count, datatype, request))
FNP_MPI(int, File_iread_at, (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype, MPI_Request *request), (fh, offset, buf, count, datatype, request))
FNP_MPI(int, File_iwrite_at, (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request), (fh, offset, buf, count, datatype, request))
FNP_MPI(int, File_iread_at_all, (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype, MPI_Request *request), (fh, offset, buf, count, datatype, request))
FNP_MPI(int, File_iwrite_at_all, (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request), (fh, offset, buf, count, datatype, request))

/* clang-format on */
