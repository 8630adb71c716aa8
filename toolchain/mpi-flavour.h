/* SPDX-License-Identifier: MIT */
/* Which MPI an ELF file was linked against (mpi-flavour.c). */
#ifndef FNPROF_MPI_FLAVOUR_H
#define FNPROF_MPI_FLAVOUR_H

#include <stddef.h>

/* Open MPI and MPICH differ in ABI (MPI_Comm is a pointer in one, an int in the other):
 * PMPI wrappers built against one crash or miscount in a program of the other. */
enum fnp_mpi_flavour { FNP_MPI_UNKNOWN, FNP_MPI_OPENMPI, FNP_MPI_MPICH };

/*
 * The MPI that the ELF file at path names in its DT_NEEDED: libmpi.so.40 (and any libmpi.so.N
 * but 12) is Open MPI; libmpich.so.* and libmpi.so.12 (MPICH's ABI, shared by its
 * derivatives) are MPICH. The name found is copied into needed (n bytes, "" when none).
 * FNP_MPI_UNKNOWN for a file that is not ELF, cannot be read, or needs no MPI directly.
 */
enum fnp_mpi_flavour fnp_mpi_flavour_of(const char *path, char *needed, size_t n);

/* "Open MPI", "MPICH" or "no MPI": a static string. */
const char *fnp_mpi_flavour_name(enum fnp_mpi_flavour f);

#endif
