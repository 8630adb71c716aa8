/* SPDX-License-Identifier: MIT */
/*
 * fnprof symbolize: the profile of a process that died by a signal. Its handler could only
 * write a raw snapshot (runtime/raw.c: addresses and counts); this names the functions
 * with the same symbolizer and builds the same profile the exit path would have. The
 * handler runs it itself when it can; otherwise the user does, on the same machine, while
 * the binaries are still the ones that ran.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "symbolizer.h"

static void usage(FILE *out)
{
    fprintf(out, "usage: fnprof symbolize [-o OUT] [--remove-raw] [--quiet] RAW\n"
                 "\n"
                 "Makes the pstats profile from RAW, the raw snapshot a process profiled by\n"
                 "fnprof writes when a signal kills it (PROF_OUTPUT.raw). Run it on the\n"
                 "machine that ran the program, before its binaries change.\n"
                 "\n"
                 "PROF_DEBUG_DIR (':'-separated roots, default /usr/lib/debug) says where\n"
                 "separate debug files are, as at the profiled program's exit.\n"
                 "\n"
                 "Options:\n"
                 "  -o, --output OUT  the profile to write (default: RAW without .raw)\n"
                 "      --remove-raw  delete RAW once OUT is written\n"
                 "  -q, --quiet       no \"fnprof: wrote\" line\n"
                 "  -h, --help        show this help\n");
}

static void warn_line(void *ctx, const char *msg)
{
    (void)ctx;
    fnp_cli_error("symbolize", "%s", msg);
}

/* OUT for RAW: "x.prof.raw" -> "x.prof"; a name without .raw gets ".prof". */
static char *default_output(const char *raw)
{
    size_t n = strlen(raw);
    char *out = malloc(n + 6);
    if (!out)
        return NULL;
    memcpy(out, raw, n + 1);
    if (n > 4 && strcmp(raw + n - 4, ".raw") == 0)
        out[n - 4] = 0;
    else
        strcat(out, ".prof");
    return out;
}

static int symbolize(const char *raw_path, const char *output, int quiet)
{
    char *data = NULL;
    size_t len = 0;
    if (fnp_cli_read_file("symbolize", raw_path, &data, &len, NULL))
        return FNP_EXIT_FAILURE;
    struct fnp_raw_file raw;
    char why[512];
    int rc = fnp_raw_read(&raw, data, len, why, sizeof(why));
    free(data);
    if (rc) {
        if (rc == -EINVAL)
            fnp_cli_error("symbolize", "%s: not a valid raw snapshot: %s", raw_path, why);
        else
            fnp_cli_error("symbolize", "%s: %s", raw_path, strerror(-rc));
        fnp_raw_file_free(&raw);
        return FNP_EXIT_FAILURE;
    }
    if (raw.raw.n == 0) {
        fnp_cli_error("symbolize", "%s: no call was recorded; nothing written", raw_path);
        fnp_raw_file_free(&raw);
        return FNP_EXIT_FAILURE;
    }
    struct fnp_symbolizer_api api = {
        .create = fnp_symbolizer_new,
        .resolve = fnp_symbolizer_resolve,
        .destroy = fnp_symbolizer_free,
        .warn = warn_line,
        .debug_dirs = getenv("PROF_DEBUG_DIR"),
        .set_debug_dirs = fnp_symbolizer_set_debug_dirs,
    };
    struct fnp_profile prof;
    fnp_profile_init(&prof);
    rc = fnp_profile_build(&prof, &raw.raw, &api);
    if (!rc)
        rc = fnp_write_file_atomic(output, fnp_profile_write_fn, &prof);
    if (rc) {
        fnp_cli_error("symbolize", "%s: %s", output, fnp_write_file_strerror(rc));
    }
    char line[1024];
    if (!rc && fnp_raw_merged_line(line, sizeof(line), &raw.raw))
        fnp_cli_error(NULL, "%s", line);
    if (!rc && !quiet) {
        fnp_raw_wrote_line(line, sizeof(line), &raw.raw, output, prof.nfuncs, raw.threads_seen);
        fnp_cli_error(NULL, "%s", line);
    }
    fnp_profile_free(&prof);
    fnp_raw_file_free(&raw);
    return rc ? FNP_EXIT_FAILURE : FNP_EXIT_OK;
}

int fnp_cmd_symbolize(int argc, char **argv)
{
    enum { OPT_REMOVE = 256 };
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'},
        {"remove-raw", no_argument, NULL, OPT_REMOVE},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *output = NULL;
    int remove_raw = 0, quiet = 0, c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:qh", opts, NULL)) != -1) {
        switch (c) {
        case 'o':
            output = optarg;
            break;
        case OPT_REMOVE:
            remove_raw = 1;
            break;
        case 'q':
            quiet = 1;
            break;
        case 'h':
            usage(stdout);
            return FNP_EXIT_OK;
        default: /* ':' or '?' */
            return fnp_cli_option_error("symbolize", c, argv);
        }
    }
    if (optind != argc - 1)
        return fnp_cli_usage_error("symbolize", optind == argc ? "no raw snapshot"
                                                               : "one raw snapshot at a time");
    const char *raw_path = argv[optind];
    char *dflt = output ? NULL : default_output(raw_path);
    if (!output && !dflt) {
        fnp_cli_error("symbolize", "%s", strerror(ENOMEM));
        return FNP_EXIT_FAILURE;
    }
    int rc = symbolize(raw_path, output ? output : dflt, quiet);
    if (rc == FNP_EXIT_OK && remove_raw && unlink(raw_path) != 0)
        fnp_cli_error("symbolize", "%s: cannot remove: %s", raw_path, strerror(errno));
    free(dflt);
    return rc;
}
