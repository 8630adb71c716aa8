/* SPDX-License-Identifier: MIT */
/*
 * fnprof run: runs a program with libfnprof.so preloaded, so that its instrumented code
 * (built with -finstrument-functions) is profiled without linking fnprof in.
 *
 * libfnprof.so is found relative to this executable, by the path CMake computed from the
 * bin directory to the lib directory: the build tree and an install share that layout.
 *
 * Several processes: the runtime gives each process below the first its own file,
 * PROF_OUTPUT.<pid>, and each image after an exec PROF_OUTPUT...exec<n> (runtime/env.c).
 * A program started through a wrapper script thus leaves its profile in OUT.<pid>, not OUT.
 * So fnprof run waits for the program, then gathers the files this run wrote under those
 * names and makes OUT of them: the one file moved there, or all of them merged (as
 * fnprof merge adds them). The program's environment is what it always was.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "doctor.h"
#include "libdir.h"
#include "mpi-flavour.h"

#define DEFAULT_OUTPUT "fnprof.prof"

/* env(1)'s statuses when the program cannot be run. */
#define EXIT_NOT_FOUND 127
#define EXIT_CANNOT_RUN 126

static void usage(FILE *out)
{
    fprintf(out, "usage: fnprof run [-o FILE] [--quiet] [--no-merge] [--mpi]\n"
                 "                  [--libcalls[=WHICH]] [--] PROGRAM [ARGS...]\n"
                 "\n"
                 "Runs PROGRAM with libfnprof.so preloaded (LD_PRELOAD); its instrumented\n"
                 "functions are profiled and the profile written to FILE when it exits.\n"
                 "The exit status is PROGRAM's; 127 when it is not found, 126 when it\n"
                 "cannot be run.\n"
                 "\n"
                 "Every process started below PROGRAM (a wrapper script's, fork, exec) writes\n"
                 "its own FILE.<pid> (and FILE.exec<n> after an exec). When PROGRAM ends,\n"
                 "fnprof run turns the files this run wrote into FILE: one is renamed to FILE;\n"
                 "several are added together into FILE, as fnprof merge adds them, and\n"
                 "removed; a line on stderr says how many. Processes still running then write\n"
                 "their FILE.<pid> later, and stay apart.\n"
                 "\n"
                 "Options:\n"
                 "  -o, --output FILE  write the profile to FILE (PROF_OUTPUT; default\n"
                 "                     " DEFAULT_OUTPUT " in the current directory); %%p in\n"
                 "                     FILE becomes the process id, and then each process\n"
                 "                     keeps its own file (no merge)\n"
                 "  -q, --quiet        no messages from the profiler (PROF_QUIET=1)\n"
                 "      --no-merge     leave each process's file as written (fnprof run then\n"
                 "                     execs PROGRAM; so does a PROF_SCHEDULE in the\n"
                 "                     environment, whose cycles have files of their own)\n"
                 "      --mpi          also preload the PMPI wrappers built for the MPI that\n"
                 "                     PROGRAM links (libfnprof-mpi.so or, for MPICH beside\n"
                 "                     Open MPI, libfnprof-mpich.so): each MPI call of the C\n"
                 "                     bindings (MPI_Send, MPI_Wait, MPI_Barrier, ...) is a\n"
                 "                     function of the profile, under the function that\n"
                 "                     made it; run once per rank: mpirun -np 4 fnprof run\n"
                 "                     --mpi -o out.%%r.prof -- ./app (docs/mpi.md)\n"
                 "      --libcalls, --libcalls=WHICH\n"
                 "                     also record the calls instrumented code makes into\n"
                 "                     other libraries (memcpy, qsort, pthread_cond_wait),\n"
                 "                     each a function keyed (library, 0, name): all of\n"
                 "                     them, or WHICH, e.g. libc.so.6:pthread_*,read or a\n"
                 "                     filter file (PROF_LIBCALLS; docs/libcalls.md)\n"
                 "  -h, --help         show this help\n");
}

/* real into out, if LD_PRELOAD can name it; else -1, after saying why unless cmd is NULL. */
static int preloadable(const char *cmd, const char *real, char *out, size_t n)
{
    /* ld.so splits LD_PRELOAD at spaces and colons and has no way to quote them. */
    if (strpbrk(real, " :")) {
        if (cmd)
            fnp_cli_error(cmd, "%s: LD_PRELOAD cannot name a path with a space or colon", real);
        return -1;
    }
    snprintf(out, n, "%s", real);
    return 0;
}

int fnp_run_library(const char *cmd, char *out, size_t n)
{
    char real[PATH_MAX], why[PATH_MAX + 128];
    if (fnp_runtime_file("libfnprof.so", real, sizeof(real), why, sizeof(why))) {
        if (cmd)
            fnp_cli_error(cmd, "%s", why);
        return -1;
    }
    return preloadable(cmd, real, out, n);
}

/* The PMPI wrappers, beside libfnprof.so, one library per MPI found when fnprof was built
 * (runtime/mpi/CMakeLists.txt): libfnprof-mpi.so for the default MPI, libfnprof-mpich.so
 * for MPICH beside Open MPI. The program's own DT_NEEDED names its MPI, each library's
 * its own; the first that agrees is preloaded. A program whose MPI cannot be read (a
 * script, a launcher) gets libfnprof-mpi.so. Returns 0, or -1 after saying why. */
static int mpi_library(const char *program, char *out, size_t n)
{
    static const char *const libs[] = {"libfnprof-mpi.so", "libfnprof-mpich.so"};
    char path[PATH_MAX], needed[64] = "";
    enum fnp_mpi_flavour want = FNP_MPI_UNKNOWN;
    if (fnp_cli_which(program, path) == 0)
        want = fnp_mpi_flavour_of(path, needed, sizeof(needed));
    char real[PATH_MAX], why[PATH_MAX + 128], first_why[PATH_MAX + 128] = "";
    char first_needed[64] = "";
    int first_errno = 0, found = 0;
    enum fnp_mpi_flavour first = FNP_MPI_UNKNOWN;
    for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++) {
        errno = 0;
        if (fnp_runtime_file(libs[i], real, sizeof(real), why, sizeof(why))) {
            if (i == 0) {
                first_errno = errno;
                snprintf(first_why, sizeof(first_why), "%s", why);
            }
            continue;
        }
        char lib_needed[64];
        enum fnp_mpi_flavour have = fnp_mpi_flavour_of(real, lib_needed, sizeof(lib_needed));
        if (want == FNP_MPI_UNKNOWN ? i == 0 : have == want)
            return preloadable("run", real, out, n);
        if (!found++) {
            first = have;
            snprintf(first_needed, sizeof(first_needed), "%s", lib_needed);
        }
    }
    if (found) {
        int mpich = want == FNP_MPI_MPICH;
        fnp_cli_error("run",
                      "--mpi: %s links %s (%s), and the wrappers built here are for %s (%s): "
                      "%s is missing (install the %s package; from source, install %s, "
                      "configure and build again)",
                      program, fnp_mpi_flavour_name(want), needed, fnp_mpi_flavour_name(first),
                      first_needed, mpich ? "libfnprof-mpich.so" : "libfnprof-mpi.so",
                      mpich ? "fnprof-mpich" : "fnprof-mpi",
                      mpich ? "libmpich-dev" : "libopenmpi-dev");
    } else if (first_errno == ENOENT) {
        fnp_cli_error("run",
                      "--mpi: libfnprof-mpi.so is missing (install the fnprof-mpi "
                      "package; from source, it is built when MPI is found: install "
                      "libopenmpi-dev or libmpich-dev, configure and build again); %s",
                      first_why);
    } else {
        fnp_cli_error("run", "--mpi: %s", first_why);
    }
    return -1;
}

/* The program may chdir before it exits: a relative output would land wherever it went. */
static char *absolute(const char *path)
{
    if (path[0] == '/')
        return strdup(path);
    char *cwd = getcwd(NULL, 0);
    if (!cwd)
        return NULL;
    char *abs = NULL;
    if (asprintf(&abs, "%s/%s", cwd, path) < 0)
        abs = NULL;
    free(cwd);
    return abs;
}

static const char *env(const char *name)
{
    return getenv(name);
}

/* The name the runtime gives the first process's file: out with %r, %h and %% replaced, and
 * under an MPI launcher (fnprof run started once per rank) ".rank<r>" when out has no %r
 * (profile/outname.c); the files of the processes below it are named after that. NULL when
 * out of memory. */
static char *launched_name(const char *out)
{
    char host[256] = "";
    if (gethostname(host, sizeof(host) - 1) != 0)
        host[0] = 0;
    struct fnp_outname_vars v = {.pid = (long)getpid(), .host = host};
    fnp_launch_detect(&v.launch, env);
    return fnp_outname(out, &v);
}

/* The line for a program that could not be started. A bare name is searched in PATH only,
 * as a shell does; where the current directory holds it, the line says how to run that. */
static void exec_error(const char *prog, int err)
{
    if (err == ENOENT && !strchr(prog, '/') && access(prog, X_OK) == 0)
        fnp_cli_error("run",
                      "%s: not found in PATH (the current directory is not searched): "
                      "run ./%s",
                      prog, prog);
    else
        fnp_cli_error("run", "%s: %s", prog, strerror(err));
}

static int exec_status(int err)
{
    return err == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_RUN;
}

/* ---- the files one run wrote ------------------------------------------------------- */

/* A file named as the runtime names a process's profile after OUT: OUT itself,
 * OUT.<pid>, OUT.exec<n> or OUT.<pid>.exec<n>. */
struct part {
    char *path;
    ino_t ino;
    struct timespec mtime;
    int top;          /* OUT itself */
    uint64_t pid, ex; /* for the order: the top first, then by pid, then by image */
};

struct parts {
    struct part *v;
    size_t n;
};

static const char *digits(const char *s, uint64_t *v)
{
    if (*s < '0' || *s > '9')
        return NULL;
    char *end;
    *v = strtoull(s, &end, 10);
    return end;
}

/* Whether name (in OUT's folder) is one of OUT's per-process names; fills p's keys. */
static int part_name(const char *base, const char *name, struct part *p)
{
    size_t bl = strlen(base);
    if (strncmp(name, base, bl) != 0)
        return 0;
    const char *s = name + bl;
    p->top = !*s;
    p->pid = p->ex = 0;
    if (!*s)
        return 1;
    if (*s++ != '.')
        return 0;
    if (strncmp(s, "exec", 4) != 0) {
        if (!(s = digits(s, &p->pid)))
            return 0;
        if (!*s)
            return 1;
        if (*s++ != '.' || strncmp(s, "exec", 4) != 0)
            return 0;
    }
    s = digits(s + 4, &p->ex);
    return s && !*s;
}

static void parts_free(struct parts *ps)
{
    for (size_t i = 0; i < ps->n; i++)
        free(ps->v[i].path);
    free(ps->v);
    ps->v = NULL;
    ps->n = 0;
}

/* Lists OUT and its per-process siblings as they are now. Returns 0 or -errno. */
static int parts_list(const char *out, struct parts *ps)
{
    char *dir = strdup(out);
    if (!dir)
        return -ENOMEM;
    char *slash = strrchr(dir, '/'); /* out is absolute */
    const char *base = slash + 1;
    *slash = '\0';
    DIR *dp = opendir(slash == dir ? "/" : dir);
    int rc = dp ? 0 : -errno;
    struct dirent *de;
    while (!rc && (de = readdir(dp))) {
        struct part p = {0};
        struct stat st;
        if (!part_name(base, de->d_name, &p))
            continue;
        if (asprintf(&p.path, "%s/%s", dir, de->d_name) < 0) {
            rc = -ENOMEM;
            break;
        }
        /* OUT itself may be a symlink to the file (the runtime writes through it). */
        if ((p.top ? stat(p.path, &st) : lstat(p.path, &st)) != 0 || !S_ISREG(st.st_mode)) {
            free(p.path);
            continue;
        }
        p.ino = st.st_ino;
        p.mtime = st.st_mtim;
        struct part *v = realloc(ps->v, (ps->n + 1) * sizeof *v);
        if (!v) {
            free(p.path);
            rc = -ENOMEM;
            break;
        }
        ps->v = v;
        ps->v[ps->n++] = p;
    }
    if (dp)
        closedir(dp);
    free(dir);
    return rc;
}

/* Whether p was there before the run, untouched (the runtime writes a new file and renames
 * it over the old one: a file it wrote has a new inode). */
static int stale(const struct parts *before, const struct part *p)
{
    for (size_t i = 0; i < before->n; i++) {
        const struct part *b = &before->v[i];
        if (strcmp(b->path, p->path) == 0)
            return b->ino == p->ino && b->mtime.tv_sec == p->mtime.tv_sec &&
                   b->mtime.tv_nsec == p->mtime.tv_nsec;
    }
    return 0;
}

static int part_cmp(const void *pa, const void *pb)
{
    const struct part *a = pa, *b = pb;
    if (a->top != b->top)
        return a->top ? -1 : 1;
    if (a->pid != b->pid)
        return a->pid < b->pid ? -1 : 1;
    return a->ex < b->ex ? -1 : a->ex > b->ex;
}

/* Adds the files together into out, then removes them (out itself stays). */
static void merge_parts(const char *out, const struct parts *ps, int quiet)
{
    struct fnp_profile sum;
    fnp_profile_init(&sum);
    int ok = 1;
    /* fnp_cli_load adds each file to the sum (fnp_profile_merge). fnprof merge reads each
     * apart to count the runs an input merged before; the runtime's files are one run each. */
    for (size_t i = 0; i < ps->n && ok; i++)
        ok = fnp_cli_load("run", ps->v[i].path, &sum, NULL) == 0;
    char count[24];
    snprintf(count, sizeof count, "%zu", ps->n);
    if (ok && sum.nmeta && fnp_profile_set_meta(&sum, "merged", count)) {
        fnp_cli_error("run", "%s: out of memory", out);
        ok = 0;
    }
    int err = ok ? fnp_write_file_atomic(out, fnp_profile_write_fn, &sum) : 0;
    if (err) {
        fnp_cli_error("run", "%s: %s", out, fnp_write_file_strerror(err));
        ok = 0;
    }
    fnp_profile_free(&sum);
    if (!ok) {
        fnp_cli_error("run", "the profiles of the %zu processes are left as they were written",
                      ps->n);
        return;
    }
    for (size_t i = 0; i < ps->n; i++)
        if (!ps->v[i].top)
            unlink(ps->v[i].path);
    if (!quiet)
        fnp_cli_error("run", "merged the profiles of %zu processes into %s", ps->n, out);
}

/* OUT is a FIFO, a device or a symlink, never renamed over: the one file's bytes are
 * written there as the runtime writes (fnp_write_file_atomic), then the file removed. */
static void copy_part(const char *out, const struct part *p, int quiet)
{
    char *data;
    size_t len;
    if (fnp_cli_read_file("run", p->path, &data, &len, NULL))
        return;
    int err = fnp_cli_write_file(out, data, len);
    free(data);
    if (err) {
        fnp_cli_error("run", "%s: %s; the profile stays in %s", out, fnp_write_file_strerror(err),
                      p->path);
        return;
    }
    unlink(p->path);
    if (!quiet)
        fnp_cli_error("run", "wrote %s, the one profile written, to %s", p->path, out);
}

/* Makes out of the files this run wrote: OUT's names listed now, less those that before
 * holds untouched (an earlier run's). */
static void gather(const char *out, const struct parts *before, int quiet)
{
    struct parts mine = {0};
    int err = parts_list(out, &mine);
    if (err) {
        fnp_cli_error("run", "%s: cannot list the profiles written: %s", out, strerror(-err));
        parts_free(&mine);
        return;
    }
    size_t kept = 0;
    for (size_t i = 0; i < mine.n; i++) {
        if (stale(before, &mine.v[i]))
            free(mine.v[i].path);
        else
            mine.v[kept++] = mine.v[i];
    }
    mine.n = kept;
    struct stat st;
    int plain = lstat(out, &st) == 0 ? S_ISREG(st.st_mode) : errno == ENOENT;
    if (mine.n == 1 && !mine.v[0].top && !plain) {
        /* OUT is a FIFO, a device or a symlink: never renamed over, written as the runtime
         * writes it (fnp_write_file_atomic), from the one file. */
        copy_part(out, &mine.v[0], quiet);
    } else if (mine.n == 1 && !mine.v[0].top) {
        /* One process wrote: its file becomes OUT, whole (a rename in one folder). */
        if (rename(mine.v[0].path, out) != 0)
            fnp_cli_error("run", "%s: cannot rename to %s: %s", mine.v[0].path, out,
                          strerror(errno));
        else if (!quiet)
            fnp_cli_error("run", "moved %s, the one profile written, to %s", mine.v[0].path, out);
    } else if (mine.n > 1) {
        qsort(mine.v, mine.n, sizeof *mine.v, part_cmp);
        merge_parts(out, &mine, quiet);
    }
    parts_free(&mine);
}

/* ---- running ----------------------------------------------------------------------- */

static volatile sig_atomic_t child_pid;

/* Signals sent to fnprof run (kill PID) are meant for the program. */
static void forward(int sig)
{
    if (child_pid > 0)
        kill((pid_t)child_pid, sig);
}

/* Ends this process the way the program ended: its exit status, or its signal (without a
 * core file of fnprof run's). */
static int pass_status(int status)
{
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    int sig = WIFSIGNALED(status) ? WTERMSIG(status) : SIGKILL;
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none);
    signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    fflush(NULL);
    raise(sig);
    return 128 + sig;
}

/* Runs argv with the environment set, waits for it, then makes out of the files the run
 * wrote. Returns the program's status. */
static int run_and_gather(char **argv, const char *out, int quiet)
{
    struct parts before = {0};
    if (parts_list(out, &before) == -ENOMEM) {
        fnp_cli_error("run", "out of memory");
        return FNP_EXIT_FAILURE;
    }
    /* The child reports a failed exec through a pipe that the exec closes. */
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        fnp_cli_error("run", "pipe: %s", strerror(errno));
        parts_free(&before);
        return FNP_EXIT_FAILURE;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        fnp_cli_error("run", "fork: %s", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        parts_free(&before);
        return FNP_EXIT_FAILURE;
    }
    if (pid == 0) {
        close(fds[0]);
        execvp(argv[0], argv);
        int err = errno;
        if (write(fds[1], &err, sizeof err) < 0)
            _exit(EXIT_CANNOT_RUN);
        _exit(exec_status(err));
    }
    close(fds[1]);
    child_pid = pid;
    /* As system(3) does: the terminal's ^C and ^\ reach the program, which decides; fnprof
     * run stays to gather what it wrote. Other signals sent to fnprof run go on to it. */
    struct sigaction ign = {.sa_handler = SIG_IGN}, fwd = {.sa_handler = forward};
    sigemptyset(&ign.sa_mask);
    sigemptyset(&fwd.sa_mask);
    fwd.sa_flags = SA_RESTART;
    static const int forwarded[] = {SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGALRM};
    enum { NFWD = sizeof forwarded / sizeof forwarded[0] };
    struct sigaction old_int, old_quit, old_fwd[NFWD];
    sigaction(SIGINT, &ign, &old_int);
    sigaction(SIGQUIT, &ign, &old_quit);
    for (size_t i = 0; i < NFWD; i++)
        sigaction(forwarded[i], &fwd, &old_fwd[i]);

    int err = 0;
    ssize_t got;
    while ((got = read(fds[0], &err, sizeof err)) < 0 && errno == EINTR)
        ;
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    child_pid = 0;
    /* The program is gone: a signal now is meant for fnprof run itself, which ends as it
     * would have, less the temporary of the file it was gathering (main.c's handlers). */
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    for (size_t i = 0; i < NFWD; i++)
        sigaction(forwarded[i], &old_fwd[i], NULL);
    if (got == (ssize_t)sizeof err) {
        exec_error(argv[0], err);
        parts_free(&before);
        return exec_status(err);
    }
    gather(out, &before, quiet);
    parts_free(&before);
    return pass_status(status);
}

int fnp_cmd_run(int argc, char **argv)
{
    enum { OPT_NO_MERGE = 256, OPT_MPI, OPT_LIBCALLS };
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'},
        {"quiet", no_argument, NULL, 'q'},
        {"no-merge", no_argument, NULL, OPT_NO_MERGE},
        {"mpi", no_argument, NULL, OPT_MPI},
        {"libcalls", optional_argument, NULL, OPT_LIBCALLS},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *output = DEFAULT_OUTPUT;
    const char *libcalls = NULL;
    int quiet = 0, merge = 1, mpi = 0, c;
    opterr = 0;
    /* '+': options end at PROGRAM, whose own options are its business. */
    while ((c = getopt_long(argc, argv, "+:o:qh", opts, NULL)) != -1) {
        switch (c) {
        case 'o':
            output = optarg;
            break;
        case 'q':
            quiet = 1;
            break;
        case OPT_NO_MERGE:
            merge = 0;
            break;
        case OPT_MPI:
            mpi = 1;
            break;
        case OPT_LIBCALLS:
            libcalls = optarg && *optarg ? optarg : "1";
            break;
        case 'h':
            usage(stdout);
            return FNP_EXIT_OK;
        default: /* ':' or '?' */
            return fnp_cli_option_error("run", c, argv);
        }
    }
    if (optind == argc)
        return fnp_cli_usage_error("run", "no program given");
    if (!*output)
        return fnp_cli_usage_error("run", "empty output file name");

    char lib[PATH_MAX], mpilib[PATH_MAX] = "";
    if (fnp_run_library("run", lib, sizeof(lib)) ||
        (mpi && mpi_library(argv[optind], mpilib, sizeof(mpilib))))
        return FNP_EXIT_FAILURE;
    char *out = absolute(output);
    char *preload = NULL;
    const char *old = getenv("LD_PRELOAD");
    /* libfnprof.so ahead of the wrappers: their calls to the hooks go to the first library
     * in load order that defines them, and glibc's empty pair comes after the preloads. */
    int n = asprintf(&preload, "%s%s%s%s%s", lib, *mpilib ? ":" : "", mpilib,
                     old && *old ? ":" : "", old && *old ? old : "");
    if (!out || n < 0) {
        fnp_cli_error("run", "%s", strerror(errno ? errno : ENOMEM));
        return FNP_EXIT_FAILURE;
    }
    if (setenv("PROF_OUTPUT", out, 1) || setenv("LD_PRELOAD", preload, 1) ||
        (quiet && setenv("PROF_QUIET", "1", 1)) ||
        (libcalls && setenv("PROF_LIBCALLS", libcalls, 1))) {
        fnp_cli_error("run", "setenv: %s", strerror(errno));
        return FNP_EXIT_FAILURE;
    }
    free(preload);
    /* %p names every process's file already; a schedule writes a file per cycle. Those
     * files are what was asked for: nothing to gather, so the program simply replaces us. */
    const char *schedule = getenv("PROF_SCHEDULE");
    if (fnp_outname_has(out, 'p') || (schedule && *schedule))
        merge = 0;
    int rc;
    char *named = merge ? launched_name(out) : NULL;
    if (merge && !named) {
        fnp_cli_error("run", "out of memory");
        rc = FNP_EXIT_FAILURE;
    } else if (merge) {
        rc = run_and_gather(argv + optind, named, quiet);
    } else {
        fflush(stdout);
        execvp(argv[optind], argv + optind);
        int err = errno;
        rc = exec_status(err);
        exec_error(argv[optind], err);
    }
    free(named);
    free(out);
    return rc;
}
