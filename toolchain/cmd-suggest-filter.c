/*
 * fnprof suggest-filter: a Score-P filter file (docs/filter.md) excluding the functions
 * whose instrumentation costs more than it tells: called very often, each call too short
 * to be worth a measurement. The rule is scorep-score -g's idea (time per visit) with
 * TAU's tau_reduce bounds as defaults: at least 1,000,000 calls, under 2 us a call
 * (cumulative time over calls, so a function that does its work in callees is kept).
 */
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static void usage(FILE *out)
{
    fprintf(out, "usage: fnprof suggest-filter [options] PROFILE\n"
                 "\n"
                 "Prints a Score-P filter file (for PROF_FILTER or fnprof-cc --filter) that\n"
                 "excludes every function called at least --min-calls times whose calls take\n"
                 "under --max-per-call each (cumulative time / calls). main is never excluded.\n"
                 "A count-only profile has no times: only --min-calls applies.\n"
                 "\n"
                 "Options:\n"
                 "  --min-calls N       calls at least (default 1000000)\n"
                 "  --max-per-call T    time per call under T, with a unit: s, ms, us, ns\n"
                 "                      (default 2us)\n"
                 "  -o, --output FILE   write there (whole or not at all) instead of stdout\n"
                 "  -h, --help          show this help\n");
}

/* "2us" -> 2e-6; -1 when malformed. */
static double parse_time(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || !isfinite(v) || v < 0)
        return -1;
    static const struct {
        const char *unit;
        double scale;
    } units[] = {{"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}};
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        if (strcmp(end, units[i].unit) == 0)
            return v * units[i].scale;
    return -1;
}

/* A name as a pattern that matches it alone: fnmatch's special characters, '#' and
 * white space escaped with a backslash. */
static void put_pattern(FILE *out, const char *name)
{
    for (const char *c = name; *c; c++) {
        if (strchr("\\*?[]# \t", *c))
            fputc('\\', out);
        fputc(*c, out);
    }
}

struct pick {
    const struct fnp_func *f;
};

static int by_calls(const void *a, const void *b)
{
    const struct fnp_func *x = ((const struct pick *)a)->f, *y = ((const struct pick *)b)->f;
    if (x->st.ncalls != y->st.ncalls)
        return x->st.ncalls < y->st.ncalls ? 1 : -1;
    return strcmp(x->key.name, y->key.name);
}

static int is_main(const struct fnp_func *f)
{
    return strcmp(f->key.name, "main") == 0 || strncmp(f->key.name, "main(", 5) == 0;
}

int fnp_cmd_suggest_filter(int argc, char **argv)
{
    static const struct option opts[] = {
        {"min-calls", required_argument, NULL, 'c'},
        {"max-per-call", required_argument, NULL, 't'},
        {"output", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    uint64_t min_calls = 1000000;
    double max_per_call = 2e-6;
    const char *max_text = "2us", *output = NULL;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'c': {
            char *end;
            unsigned long long v = strtoull(optarg, &end, 10);
            if (!*optarg || *end || optarg[0] == '-')
                return fnp_cli_usage_error("suggest-filter", "--min-calls: '%s' is not a count",
                                           optarg);
            min_calls = v;
            break;
        }
        case 't':
            if ((max_per_call = parse_time(optarg)) < 0)
                return fnp_cli_usage_error(
                    "suggest-filter", "--max-per-call: '%s' is not a time such as 2us", optarg);
            max_text = optarg;
            break;
        case 'o':
            output = optarg;
            break;
        case 'h':
            usage(stdout);
            return FNP_EXIT_OK;
        case ':':
            return fnp_cli_usage_error("suggest-filter", "option '%s' needs a value",
                                       argv[optind - 1]);
        default:
            return fnp_cli_usage_error("suggest-filter", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind != argc - 1)
        return fnp_cli_usage_error("suggest-filter", "one profile expected");
    const char *path = argv[optind];
    struct fnp_profile p;
    fnp_profile_init(&p);
    if (fnp_cli_load("suggest-filter", path, &p, NULL)) {
        fnp_profile_free(&p);
        return FNP_EXIT_FAILURE;
    }
    const char *clock = fnp_profile_meta(&p, "clock");
    int count_only = clock && strcmp(clock, "none") == 0;
    struct pick *v = malloc((p.nfuncs ? p.nfuncs : 1) * sizeof(*v));
    if (!v) {
        fnp_cli_error("suggest-filter", "out of memory");
        fnp_profile_free(&p);
        return FNP_EXIT_FAILURE;
    }
    size_t n = 0;
    uint64_t total = 0, saved = 0;
    for (size_t i = 0; i < p.nfuncs; i++) {
        const struct fnp_func *f = &p.funcs[i];
        total += f->st.ncalls;
        if (f->st.ncalls < min_calls || f->st.ncalls == 0 || is_main(f))
            continue;
        if (!count_only && f->st.cumtime / (double)f->st.ncalls >= max_per_call)
            continue;
        v[n++].f = f;
        saved += f->st.ncalls;
    }
    qsort(v, n, sizeof(*v), by_calls);

    FILE *out = stdout;
    char tmp[4096];
    if (output) {
        if (snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", output) >= (int)sizeof(tmp)) {
            fnp_cli_error("suggest-filter", "%s: path too long", output);
            goto fail;
        }
        int fd = mkstemp(tmp);
        if (fd < 0 || !(out = fdopen(fd, "w"))) {
            fnp_cli_error("suggest-filter", "%s: cannot write", output);
            goto fail;
        }
    }
    fprintf(out, "# fnprof suggest-filter %s\n", path);
    if (count_only)
        fprintf(out, "# rule: at least %" PRIu64 " calls (a count-only profile: no times)\n",
                min_calls);
    else
        fprintf(out, "# rule: at least %" PRIu64 " calls, under %s a call (cumulative)\n",
                min_calls, max_text);
    fprintf(out,
            "# %zu functions excluded, %" PRIu64 " of %" PRIu64 " calls (%.1f%%) no longer "
            "recorded\n",
            n, saved, total, total ? 100.0 * (double)saved / (double)total : 0.0);
    fprintf(out, "SCOREP_REGION_NAMES_BEGIN\n");
    for (size_t i = 0; i < n; i++) {
        const struct fnp_func *f = v[i].f;
        if (count_only)
            fprintf(out, "  # %s:%u: %" PRIu64 " calls\n", f->key.file, f->key.line, f->st.ncalls);
        else
            fprintf(out, "  # %s:%u: %" PRIu64 " calls, %.3g us a call\n", f->key.file, f->key.line,
                    f->st.ncalls, f->st.cumtime / (double)f->st.ncalls * 1e6);
        fputs("  EXCLUDE ", out);
        put_pattern(out, f->key.name);
        fputc('\n', out);
    }
    fprintf(out, "SCOREP_REGION_NAMES_END\n");
    if (output) {
        int bad = ferror(out);
        if (fclose(out) || bad || rename(tmp, output)) {
            unlink(tmp);
            fnp_cli_error("suggest-filter", "%s: cannot write", output);
            goto fail;
        }
    } else if (fflush(stdout)) {
        goto fail;
    }
    free(v);
    fnp_profile_free(&p);
    return FNP_EXIT_OK;
fail:
    free(v);
    fnp_profile_free(&p);
    return FNP_EXIT_FAILURE;
}
