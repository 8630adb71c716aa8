/*
 * fnprof run: runs a program with libfnprof.so preloaded, so that its instrumented code
 * (built with -finstrument-functions) is profiled without linking fnprof in.
 *
 * libfnprof.so is found relative to this executable, by the path CMake computed from the
 * bin directory to the lib directory: the build tree and an install share that layout.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#ifndef FNPROF_REL_LIBDIR
#error "the build passes FNPROF_REL_LIBDIR, the path from the bin to the lib directory"
#endif

#define DEFAULT_OUTPUT "fnprof.prof"

static void usage(FILE *out)
{
    fprintf(out, "usage: fnprof run [-o FILE] [--quiet] [--] PROGRAM [ARGS...]\n"
                 "\n"
                 "Runs PROGRAM with libfnprof.so preloaded (LD_PRELOAD); its instrumented\n"
                 "functions are profiled and the profile written to FILE when it exits.\n"
                 "The exit status is PROGRAM's.\n"
                 "\n"
                 "Options:\n"
                 "  -o, --output FILE  write the profile to FILE (PROF_OUTPUT; default\n"
                 "                     " DEFAULT_OUTPUT " in the current directory); %%p in\n"
                 "                     FILE becomes the process id\n"
                 "  -q, --quiet        no messages from the profiler (PROF_QUIET=1)\n"
                 "  -h, --help         show this help\n");
}

/* <directory of /proc/self/exe>/FNPROF_REL_LIBDIR/libfnprof.so, resolved. */
static int find_library(char *out, size_t n)
{
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (len < 0) {
        fnp_cli_error("run", "/proc/self/exe: %s", strerror(errno));
        return -1;
    }
    exe[len] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash)
        *slash = '\0';
    char path[PATH_MAX + 64];
    snprintf(path, sizeof(path), "%s/%s/libfnprof.so", exe, FNPROF_REL_LIBDIR);
    char real[PATH_MAX];
    if (!realpath(path, real)) {
        fnp_cli_error("run", "%s: %s", path, strerror(errno));
        return -1;
    }
    /* ld.so splits LD_PRELOAD at spaces and colons and has no way to quote them. */
    if (strpbrk(real, " :")) {
        fnp_cli_error("run", "%s: LD_PRELOAD cannot name a path with a space or colon", real);
        return -1;
    }
    snprintf(out, n, "%s", real);
    return 0;
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

int fnp_cmd_run(int argc, char **argv)
{
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *output = DEFAULT_OUTPUT;
    int quiet = 0, c;
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
        case 'h':
            usage(stdout);
            return FNP_EXIT_OK;
        case ':':
            return fnp_cli_usage_error("run", "option '%s' needs a value", argv[optind - 1]);
        default:
            if (optopt)
                return fnp_cli_usage_error("run", "unknown option '-%c'", optopt);
            return fnp_cli_usage_error("run", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind == argc)
        return fnp_cli_usage_error("run", "no program given");
    if (!*output)
        return fnp_cli_usage_error("run", "empty output file name");

    char lib[PATH_MAX];
    if (find_library(lib, sizeof(lib)))
        return FNP_EXIT_FAILURE;
    char *out = absolute(output);
    char *preload = NULL;
    const char *old = getenv("LD_PRELOAD");
    int n = old && *old ? asprintf(&preload, "%s:%s", lib, old) : asprintf(&preload, "%s", lib);
    if (!out || n < 0) {
        fnp_cli_error("run", "%s", strerror(errno ? errno : ENOMEM));
        return FNP_EXIT_FAILURE;
    }
    if (setenv("PROF_OUTPUT", out, 1) || setenv("LD_PRELOAD", preload, 1) ||
        (quiet && setenv("PROF_QUIET", "1", 1))) {
        fnp_cli_error("run", "setenv: %s", strerror(errno));
        return FNP_EXIT_FAILURE;
    }
    fflush(stdout);
    execvp(argv[optind], argv + optind);
    fnp_cli_error("run", "%s: %s", argv[optind], strerror(errno));
    free(out);
    free(preload);
    return FNP_EXIT_FAILURE;
}
