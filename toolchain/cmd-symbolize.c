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
    fprintf(out, "usage: fnprof symbolize [-o OUT] [--trace FILE] [--remove-raw] [--quiet] RAW\n"
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
                 "      --trace FILE  also write the flight recording RAW holds\n"
                 "                    (PROF_TRACE_LAST) to FILE: a Chrome JSON\n"
                 "                    trace, or Perfetto's for a .pftrace FILE\n"
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

static int build_named(struct fnp_profile *p, struct fnp_raw *r, void *api)
{
    return fnp_profile_build(p, r, api);
}

/* The flight recording (PROF_TRACE_LAST) a fatal signal's handler put in the snapshot, as
 * the Chrome JSON trace the process would have written: its functions named by the same
 * symbolizer, one root each, as the runtime names a trace's calls. */
static int write_flight(const struct fnp_raw_file *raw, const char *trace_path,
                        const struct fnp_symbolizer_api *api, const char *process, size_t *ncalls)
{
    size_t n = raw->nflight;
    uint64_t *keys = malloc((n ? n : 1) * sizeof(*keys));
    uint32_t *func_of = malloc((n ? n : 1) * sizeof(*func_of));
    struct fnp_trace_event *ev = malloc((n ? n : 1) * sizeof(*ev));
    struct fnp_trace_track *tracks = calloc(n ? n : 1, sizeof(*tracks));
    uint8_t *is_region = NULL;
    struct fnp_profile names;
    fnp_profile_init(&names);
    int rc = keys && func_of && ev && tracks ? 0 : -ENOMEM;
    size_t ntracks = 0;
    for (size_t i = 0; i < n && !rc; i++)
        keys[i] = raw->flight[i].fn;
    if (!rc)
        rc = fnp_profile_name_keys(&names, &raw->raw, keys, n, func_of, build_named, (void *)api);
    /* The run's metadata the snapshot has: the program (its first module) and process. */
    char pid[32];
    snprintf(pid, sizeof(pid), "%llu", (unsigned long long)raw->flight_pid);
    if (!rc && raw->raw.nmods)
        rc = fnp_profile_set_meta(&names, "program", raw->raw.mods[0].path);
    if (!rc)
        rc = fnp_profile_set_meta(&names, "pid", pid);
    if (!rc && !(is_region = calloc(names.nfuncs ? names.nfuncs : 1, 1)))
        rc = -ENOMEM;
    for (size_t i = 0; i < n && !rc; i++)
        if (keys[i] & FNP_REGION_TAG)
            is_region[func_of[i]] = 1;
    for (size_t i = 0; i < n && !rc; i++) {
        const struct fnp_raw_flight_call *c = &raw->flight[i];
        size_t k = 0;
        while (k < ntracks && tracks[k].tid != (int)c->tid)
            k++;
        if (k == ntracks)
            tracks[ntracks++] = (struct fnp_trace_track){(int)c->tid, NULL};
        uint64_t o = raw->flight_origin;
        ev[i] = (struct fnp_trace_event){c->t0 > o ? c->t0 - o : 0, c->t1 > o ? c->t1 - o : 0,
                                         func_of[i], (uint32_t)k};
    }
    for (size_t j = 0; j < raw->nflight_tracks && !rc; j++)
        for (size_t k = 0; k < ntracks; k++)
            if (tracks[k].tid == (int)raw->flight_tracks[j].tid && raw->flight_tracks[j].name[0])
                tracks[k].name = raw->flight_tracks[j].name;
    struct fnp_trace t = {.prof = &names,
                          .events = ev,
                          .nevents = n,
                          .tracks = tracks,
                          .ntracks = ntracks,
                          .is_region = is_region,
                          .pid = (int)raw->flight_pid,
                          .process = process,
                          .tick_seconds = raw->raw.tick_seconds,
                          .dropped = raw->flight_not_kept,
                          .limit = raw->flight_last,
                          .last = raw->flight_last,
                          .overwritten = raw->flight_overwritten};
    if (!rc)
        rc = fnp_write_file_atomic(trace_path,
                                   fnp_trace_path_is_perfetto(trace_path)
                                       ? fnp_trace_write_pftrace_fn
                                       : fnp_trace_write_fn,
                                   &t);
    *ncalls = n;
    fnp_profile_free(&names);
    free(keys);
    free(func_of);
    free(ev);
    free(tracks);
    free(is_region);
    return rc;
}

static int symbolize(const char *raw_path, const char *output, const char *trace, int quiet)
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
    if (!rc && trace && raw.flight_seen) {
        /* The process's name: the executable's file name, the first module listed. */
        const char *exe = raw.raw.nmods ? raw.raw.mods[0].path : "process";
        const char *slash = strrchr(exe, '/');
        size_t calls = 0;
        int trc = write_flight(&raw, trace, &api, slash ? slash + 1 : exe, &calls);
        if (trc) {
            fnp_cli_error("symbolize", "%s: %s", trace, fnp_write_file_strerror(trc));
            rc = trc;
        } else if (!quiet) {
            fnp_cli_error(NULL,
                          "wrote %s (flight recording: %zu calls, the open ones included; %llu "
                          "older ones overwritten)",
                          trace, calls, (unsigned long long)raw.flight_overwritten);
        }
    } else if (!rc && trace) {
        fnp_cli_error("symbolize",
                      "%s: holds no flight recording (PROF_TRACE_LAST); %s not "
                      "written",
                      raw_path, trace);
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
    enum { OPT_REMOVE = 256, OPT_TRACE };
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'},
        {"remove-raw", no_argument, NULL, OPT_REMOVE},
        {"trace", required_argument, NULL, OPT_TRACE},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *output = NULL, *trace = NULL;
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
        case OPT_TRACE:
            trace = optarg;
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
    int rc = symbolize(raw_path, output ? output : dflt, trace, quiet);
    if (rc == FNP_EXIT_OK && remove_raw && unlink(raw_path) != 0)
        fnp_cli_error("symbolize", "%s: cannot remove: %s", raw_path, strerror(errno));
    free(dflt);
    return rc;
}
