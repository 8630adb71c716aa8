/* SPDX-License-Identifier: MIT */
/*
 * Which MPI an ELF file needs, from its dynamic section's DT_NEEDED entries, read with
 * libelf: fnprof run --mpi picks the PMPI wrappers built for the program's own MPI.
 * Only the file's own entries count: an MPI program built with mpicc names its MPI library
 * directly, and walking the loader's search for indirect ones is fnprof doctor's business.
 */
#include "mpi-flavour.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static enum fnp_mpi_flavour classify(const char *soname)
{
    if (strncmp(soname, "libmpich.so", 11) == 0 || strcmp(soname, "libmpi.so.12") == 0)
        return FNP_MPI_MPICH;
    if (strncmp(soname, "libmpi.so", 9) == 0)
        return FNP_MPI_OPENMPI;
    return FNP_MPI_UNKNOWN;
}

static enum fnp_mpi_flavour scan_dynamic(Elf *e, char *needed, size_t n)
{
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(e, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || sh.sh_entsize == 0)
            continue;
        Elf_Data *data = elf_getdata(scn, NULL);
        if (!data)
            continue;
        size_t count = sh.sh_size / sh.sh_entsize;
        for (size_t i = 0; i < count; i++) {
            GElf_Dyn dyn;
            if (!gelf_getdyn(data, (int)i, &dyn))
                break;
            if (dyn.d_tag != DT_NEEDED)
                continue;
            const char *name = elf_strptr(e, sh.sh_link, dyn.d_un.d_val);
            enum fnp_mpi_flavour f = name ? classify(name) : FNP_MPI_UNKNOWN;
            if (f != FNP_MPI_UNKNOWN) {
                snprintf(needed, n, "%s", name);
                return f;
            }
        }
    }
    return FNP_MPI_UNKNOWN;
}

enum fnp_mpi_flavour fnp_mpi_flavour_of(const char *path, char *needed, size_t n)
{
    if (n)
        needed[0] = '\0';
    if (elf_version(EV_CURRENT) == EV_NONE)
        return FNP_MPI_UNKNOWN;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return FNP_MPI_UNKNOWN;
    enum fnp_mpi_flavour f = FNP_MPI_UNKNOWN;
    Elf *e = elf_begin(fd, ELF_C_READ, NULL);
    if (e && elf_kind(e) == ELF_K_ELF)
        f = scan_dynamic(e, needed, n);
    elf_end(e);
    close(fd);
    return f;
}

const char *fnp_mpi_flavour_name(enum fnp_mpi_flavour f)
{
    switch (f) {
    case FNP_MPI_OPENMPI:
        return "Open MPI";
    case FNP_MPI_MPICH:
        return "MPICH";
    default:
        return "no MPI";
    }
}
