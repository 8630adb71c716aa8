/* SPDX-License-Identifier: MIT */
/*
 * A profile's file name from its template (PROF_OUTPUT, PROF_MEMORY, PROF_TRACE, fnprof
 * run -o), and the MPI rank a launcher gave the process. One rule for the runtime, which
 * writes the files, and for fnprof run, which gathers them afterwards.
 *
 * Codes: %p the process id, %n the schedule's cycle, %r the rank (0 outside a launcher: a
 * lone process is rank 0 of 1), %h the host name, %% a percent sign; any other % stays as
 * written. Then, in this order:
 *   - a launcher's rank (size unknown or above 1) without %r: ".rank<r>" appended, so that
 *     ranks never overwrite each other's files;
 *   - a cycle without %n: ".cycle<n>" appended.
 * The runtime appends ".<pid>" (a process below the one that owns the name) and
 * ".exec<n>" (an image after an exec) after these (runtime/env.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

/* The variables each launcher sets in every rank's environment: the rank's, then where the
 * size may be, then one that must be set too (or NULL). Open MPI's mpirun, PMIx (Open MPI
 * 5, srun --mpi=pmix), MPICH's Hydra and Intel MPI, MVAPICH2, IBM's jsrun, HPE's PALS, and
 * Slurm's srun. Slurm's batch shell and salloc's have SLURM_PROCID as well, for the one
 * shell: only srun's tasks have SLURM_STEP_NUM_TASKS, so a serial program run from a batch
 * script keeps its name. */
static const char *const launchers[][4] = {
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", NULL, NULL},
    {"PMIX_RANK", "OMPI_COMM_WORLD_SIZE", "SLURM_STEP_NUM_TASKS", NULL},
    {"PMI_RANK", "PMI_SIZE", NULL, NULL},
    {"MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE", NULL, NULL},
    {"JSM_NAMESPACE_RANK", "JSM_NAMESPACE_SIZE", NULL, NULL},
    {"PALS_RANKID", NULL, NULL, NULL},
    {"SLURM_PROCID", "SLURM_STEP_NUM_TASKS", NULL, "SLURM_STEP_NUM_TASKS"},
};

long fnp_decimal31(const char *s)
{
    if (!s || *s < '0' || *s > '9' || strlen(s) > 10)
        return -1;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    return errno || *end || v > 0x7fffffff ? -1 : (long)v;
}

void fnp_launch_detect(struct fnp_launch *l, const char *(*get)(const char *name))
{
    l->rank = l->size = l->source = -1;
    for (size_t i = 0; i < sizeof(launchers) / sizeof(launchers[0]); i++) {
        long rank = fnp_decimal31(get(launchers[i][0]));
        if (rank < 0 || (launchers[i][3] && !get(launchers[i][3])))
            continue;
        l->rank = rank;
        l->source = (int)i;
        for (size_t j = 1; j < 3 && launchers[i][j] && l->size < 0; j++)
            l->size = fnp_decimal31(get(launchers[i][j]));
        if (l->size >= 0 && l->size <= rank)
            l->size = -1; /* contradicts the rank: not to be trusted */
        return;
    }
}

int fnp_outname_has(const char *in, char code)
{
    for (const char *s = in; *s; s++)
        if (s[0] == '%' && s[1]) {
            if (s[1] == code)
                return 1;
            s++; /* "%%p" is a percent sign, then p */
        }
    return 0;
}

char *fnp_outname(const char *in, const struct fnp_outname_vars *v)
{
    struct fnp_sink out;
    fnp_sink_memory(&out);
    int has_rank = 0, has_cycle = 0;
    for (const char *s = in; *s; s++) {
        switch (s[0] == '%' ? s[1] : 0) {
        case 'p':
            fnp_sink_printf(&out, "%ld", v->pid);
            break;
        case 'n':
            fnp_sink_printf(&out, "%llu", (unsigned long long)v->cycle);
            has_cycle = 1;
            break;
        case 'r':
            fnp_sink_printf(&out, "%ld", v->launch.rank < 0 ? 0 : v->launch.rank);
            has_rank = 1;
            break;
        case 'h':
            fnp_sink_puts(&out, v->host ? v->host : "");
            break;
        case '%':
            fnp_sink_write(&out, "%", 1);
            break;
        default: /* text, or a % that starts no code: one character, as written */
            fnp_sink_write(&out, s, 1);
            continue;
        }
        s++; /* the code's letter */
    }
    if (!has_rank && v->launch.rank >= 0 && v->launch.size != 1)
        fnp_sink_printf(&out, ".rank%ld", v->launch.rank);
    if (v->cycle && !has_cycle)
        fnp_sink_printf(&out, ".cycle%llu", (unsigned long long)v->cycle);
    fnp_sink_write(&out, "", 1);
    if (out.err) {
        fnp_sink_free(&out);
        return NULL;
    }
    return out.buf;
}
