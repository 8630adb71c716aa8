/* SPDX-License-Identifier: MIT */
/*
 * Every environment variable fnprof reads, read once when the library loads, through
 * secure_getenv so that a setuid or setgid program ignores them all.
 *
 *   PROF_OUTPUT  where the profile goes; unset or empty: fnprof stays inert. A relative
 *                path is taken against the working directory at load (the program may
 *                chdir later); "%p" becomes the process id, "%r" the MPI rank, "%h" the
 *                host name, "%%" a percent sign (profile/outname.c has every code).
 *   OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK, SLURM_PROCID, ... (and their sizes; the
 *                list is profile/outname.c's): the rank an MPI launcher gave this process; in the
 * metadata, and in the file name
 *                (%r, or ".rank<r>" appended) so that no rank overwrites another's file.
 *   PROF_QUIET   "1": no line on stderr when the profile is written (errors still are).
 *   PROF_TIMER   auto (default), tsc, monotonic, none (count-only: no timestamps).
 *   PROF_DEBUG_DIR  where separate debug files are looked for, ':'-separated roots
 *                searched like gdb's debug-file-directory (default /usr/lib/debug).
 *   PROF_MAX_NODES  calling contexts kept (default 2^20; 64 bytes each, plus 16-32 of lookup
 *                table), and a tree path's levels (PROF_MAX_NODES / 64, at least 64): new
 *                contexts beyond the cap or deeper than that are merged (runtime/cct.c),
 *                which the profile labels with the cause.
 *   PROF_START   "paused": nothing is recorded until fnprof_resume() (runtime/control.c).
 *   PROF_SCHEDULE  the step schedule, "skip_first=N,wait=N,warmup=N,active=N,repeat=N"
 *                (docs/schedule.md); each active cycle is written when it ends, to
 *                PROF_OUTPUT with "%n" as the cycle's number (else ".cycle<n>" appended).
 *   PROF_DUMP_SIGNAL  a signal name (USR2, SIGUSR2, RTMIN+3) or number: on it the profile
 *                so far is written to PROF_OUTPUT and the program goes on (dumpsig.c).
 *   PROF_TOGGLE_SIGNAL  a signal, named as PROF_DUMP_SIGNAL's: on it recording pauses if
 *                it runs and resumes if paused (the pause fnprof_pause sets; dumpsig.c).
 *   PROF_TRACE   also write a Chrome trace of every call to this path (docs/trace.md).
 *   PROF_TRACE_EVENTS  calls the trace keeps at most (default 1000000, 16 bytes each).
 *   PROF_TRACE_BUFFER  MB of chunks a streamed trace (.pftrace) holds at most (default 64).
 *   PROF_TRACE_LAST  the flight recorder: the trace keeps only the last N calls (fixed
 *                memory), written at exit, on PROF_DUMP_SIGNAL, by fnprof_dump() and on a
 *                fatal signal (runtime/trace_ring.c); needs PROF_TRACE, the file (JSON, or
 *                Perfetto's for a .pftrace path).
 *   PROF_COMPENSATE  "1": the clock is read ordered (clock.c; peek.c binds the hook pair
 *                that does it) and the profile's times are compensated for the hooks' own
 *                cost (runtime/calibrate.c, docs/compensation.md); "0" or empty: not.
 *   PROF_MEMORY  also (or only) write a memory profile to this path: every allocation
 *                attributed to its calling context (runtime/memory.c, docs/memory.md).
 *                Set alone, the calls are recorded for it and no timing file is written.
 *                The same rules as PROF_OUTPUT's for the path; libfnprof.so only.
 *   PROF_LIBCALLS  record the calls instrumented code makes into other shared objects:
 *                1 (all), patterns "libc.so.6:pthread_*,read", or a filter file
 *                (runtime/plt.c, docs/libcalls.md). Read with PROF_OUTPUT or PROF_MEMORY.
 *   PROF_OWNER   set by fnprof itself, not by users: "<pid>:<file>" of the process that
 *                writes <file>, PROF_OUTPUT (else PROF_MEMORY) as its codes and rank name
 *                it. It is passed to every image started below that one (exec,
 *                posix_spawn, system, popen: runtime/exec.c), and those whose name would
 *                be the same write <file>.<pid> instead, so no process overwrites another's
 *                profile. A %p names every process's file already, and so does a
 *                launcher's rank.
 *   PROF_TEST_PATCH_REFUSE  "1", for fnprof's tests only: patch.c behaves as if mprotect
 *                refused to make code writable (docs/patchable.md).
 *   PROF_EXEC    set by fnprof for the image an exec starts, after the image before it
 *                wrote its profile: "<pid>:<n>". In that same process, the n-th image
 *                appends ".exec<n>" to its file name (runtime/exec.c).
 *
 * The program never sees those two: a program that prints its environment prints the
 * same with fnprof as without. They are read here and taken out of environ at once, and
 * exec.c puts them only into the environments of the images the program starts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime.h"

struct fnp_config fnp_config;

static const char *env(const char *name)
{
    return secure_getenv(name);
}

/* in with this process's codes replaced (profile/outname.c); NULL when out of memory. */
static char *expand(const char *in, uint64_t cycle)
{
    char host[256] = "";
    if (gethostname(host, sizeof(host) - 1) != 0)
        host[0] = 0;
    struct fnp_outname_vars v = {
        .pid = (long)getpid(), .cycle = cycle, .launch = fnp_config.launch, .host = host};
    return fnp_outname(in, &v);
}

/* path made absolute against the working directory now; NULL for out of memory. */
static char *absolute(const char *path)
{
    if (path[0] == '/')
        return strdup(path);
    char *cwd = getcwd(NULL, 0), *out = NULL;
    if (cwd && asprintf(&out, "%s/%s", cwd, path) < 0)
        out = NULL;
    free(cwd);
    return out;
}

/* s as a positive decimal number, or 0 when it is something else. Digits only: strtoull
 * would take leading blanks and a sign, and " -5" would become 2^64 - 5. */
static uint64_t parse_positive(const char *s)
{
    if (*s < '0' || *s > '9')
        return 0;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    return errno || *end ? 0 : v;
}

/* The positive number variable name holds; 0 (its default) when unset, or when it holds
 * something else, which is reported. */
static uint64_t positive(const char *name)
{
    const char *s = secure_getenv(name);
    if (!s || !*s)
        return 0;
    uint64_t v = parse_positive(s);
    if (!v) {
        fnp_log("%s=%s: not a positive number; using the default", name, s);
        return 0;
    }
    return v;
}

/* PROF_TRACE_LAST: the flight recorder's N; 0 when unset, UINT64_MAX when bad (said: then
 * no trace, rather than a trace of another kind than the one asked for). */
static uint64_t trace_last(void)
{
    const char *s = secure_getenv("PROF_TRACE_LAST");
    if (!s || !*s)
        return 0;
    uint64_t v = parse_positive(s);
    if (!v || v == UINT64_MAX) {
        fnp_log("PROF_TRACE_LAST=%s: not a positive number of calls; no trace", s);
        return UINT64_MAX;
    }
    const char *trace = secure_getenv("PROF_TRACE");
    if (!trace || !*trace) {
        fnp_log("PROF_TRACE_LAST=%s: needs PROF_TRACE=FILE, the file to write; ignored", s);
        return 0;
    }
    return v;
}

int fnp_env_load(void)
{
    const char *out = secure_getenv("PROF_OUTPUT");
    const char *quiet = secure_getenv("PROF_QUIET");
    fnp_config.quiet = quiet && strcmp(quiet, "1") == 0;
    fnp_config.timer = secure_getenv("PROF_TIMER");
    fnp_config.debug_dirs = secure_getenv("PROF_DEBUG_DIR");
    fnp_config.pid = (int)getpid();
    fnp_config.start = secure_getenv("PROF_START");
    fnp_config.schedule = secure_getenv("PROF_SCHEDULE");
    fnp_config.dump_signal = secure_getenv("PROF_DUMP_SIGNAL");
    fnp_config.toggle = secure_getenv("PROF_TOGGLE_SIGNAL");
    fnp_config.filter = secure_getenv("PROF_FILTER");
    fnp_config.libcalls = secure_getenv("PROF_LIBCALLS");
    fnp_config.trace_events = positive("PROF_TRACE_EVENTS");
    fnp_config.trace_buffer_mb = positive("PROF_TRACE_BUFFER");
    fnp_config.trace_last = trace_last();
    fnp_config.max_nodes = positive("PROF_MAX_NODES");
    const char *compensate = secure_getenv("PROF_COMPENSATE");
    fnp_config.compensate = compensate && strcmp(compensate, "1") == 0;
    if (compensate && *compensate && strcmp(compensate, "0") != 0 && !fnp_config.compensate)
        fnp_log("PROF_COMPENSATE=%s: not 0 or 1; times not compensated", compensate);
    const char *refuse = secure_getenv("PROF_TEST_PATCH_REFUSE");
    fnp_config.patch_refuse = refuse && strcmp(refuse, "1") == 0;
    fnp_launch_detect(&fnp_config.launch, env);
    const char *exec_mark = secure_getenv("PROF_EXEC");
    const char *exec_colon = exec_mark ? strchr(exec_mark, ':') : NULL;
    if (exec_colon && atoi(exec_mark) == fnp_config.pid && atoi(exec_colon + 1) > 0)
        fnp_config.image = atoi(exec_colon + 1);
    /* fnprof's marks, not the program's: out of its environ (unsetenv frees no string: the
     * owner's text stays valid), passed on by exec.c. The inherited owner is passed on as
     * it is unless this process owns a name of its own (below). */
    const char *owner = secure_getenv("PROF_OWNER");
    if (exec_mark)
        unsetenv("PROF_EXEC");
    if (owner) {
        unsetenv("PROF_OWNER");
        if (asprintf(&fnp_config.owner_mark, "PROF_OWNER=%s", owner) < 0)
            fnp_config.owner_mark = NULL;
    }
    const char *memory = secure_getenv("PROF_MEMORY");
    if (memory && *memory && !(fnp_config.memory = absolute(memory)))
        return -errno;
    if ((!out || !*out) && !fnp_config.memory)
        return 0;
    if (out && *out && !(fnp_config.output = absolute(out)))
        return -errno;
    /* The path whose owner the other processes of the run defer to (PROF_OWNER). */
    const char *owned = fnp_config.output ? fnp_config.output : fnp_config.memory;
    const char *trace = secure_getenv("PROF_TRACE");
    if (trace && *trace && !(fnp_config.trace = absolute(trace)))
        return -errno;

    /* The mark names the file this process would write. A process below the owner whose
     * name would be the same is one of its children, and appends its pid; one whose name
     * differs owns that name (a %p in it; the ranks a launcher started below a profiled
     * process, each named by its rank). */
    char *mine, *mark = NULL;
    if (!(mine = expand(owned, 0)) ||
        asprintf(&mark, "PROF_OWNER=%d:%s", (int)getpid(), mine) < 0) {
        free(mine);
        return 0;
    }
    const char *colon = owner ? strchr(owner, ':') : NULL;
    if (colon && strcmp(colon + 1, mine) == 0 && atoi(owner) != (int)getpid()) {
        fnp_config.child = 1; /* someone above us writes this path */
        free(mark);
    } else {
        free(fnp_config.owner_mark);
        fnp_config.owner_mark = mark;
    }
    free(mine);
    return 0;
}

/* A suffix appended to *out (freed); 0 or -1 (out of memory: *out freed, NULL). */
static int append(char **out, const char *fmt, unsigned long long v)
{
    char *suffixed;
    int rc = asprintf(&suffixed, fmt, *out, v);
    free(*out);
    *out = rc < 0 ? NULL : suffixed;
    return rc < 0 ? -1 : 0;
}

char *fnp_env_output_path(void)
{
    return fnp_env_path(fnp_config.output, 0);
}

char *fnp_env_path(const char *in, uint64_t cycle)
{
    if (!in)
        return NULL;
    char *out = expand(in, cycle);
    if (!out)
        return NULL;
    if (fnp_config.child && !fnp_outname_has(in, 'p') &&
        append(&out, "%s.%llu", (unsigned long long)getpid()))
        return NULL;
    if (fnp_config.image > 0 && append(&out, "%s.exec%llu", (unsigned long long)fnp_config.image))
        return NULL;
    return out;
}
