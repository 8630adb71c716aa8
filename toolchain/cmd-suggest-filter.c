/* SPDX-License-Identifier: MIT */
/*
 * fnprof suggest-filter: a Score-P filter file (docs/filter.md) excluding the functions
 * whose instrumentation costs more than it tells: called very often, each call too short
 * to be worth a measurement. The rule is scorep-score -g's idea (time per visit) with
 * TAU's tau_reduce bounds as defaults: at least 1,000,000 calls, under 2 us a call
 * (cumulative time over calls, so a function that does its work in callees is kept).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "filter.h"

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

/* A name as a pattern that matches it alone, on one line (fnp_filter_pattern). */
static void put_pattern(struct fnp_sink *s, const char *name)
{
    char *pattern = fnp_filter_pattern(name);
    if (!pattern) {
        s->err = s->err ? s->err : -ENOMEM;
        return;
    }
    fnp_sink_puts(s, pattern);
    free(pattern);
}

/* Text of a comment line (a path, a file name): a newline would end the comment, and the
 * rest would be read as patterns; control characters, C1 controls and invalid UTF-8
 * would drive the terminal the filter is printed on. Each becomes '?'. */
static void put_comment_text(struct fnp_sink *s, const char *text)
{
    const unsigned char *c = (const unsigned char *)text;
    while (*c) {
        size_t n = *c < 0x80 ? 1 : fnp_utf8_len(c);
        if (*c < 0x20 || *c == 0x7f || n == 0 || (n == 2 && c[0] == 0xc2 && c[1] < 0xa0)) {
            fnp_sink_write(s, "?", 1);
            c += n ? n : 1;
            continue;
        }
        fnp_sink_write(s, c, n);
        c += n;
    }
}

static int by_calls(const void *a, const void *b)
{
    const struct fnp_func *x = *(const struct fnp_func *const *)a;
    const struct fnp_func *y = *(const struct fnp_func *const *)b;
    if (x->st.ncalls != y->st.ncalls)
        return x->st.ncalls < y->st.ncalls ? 1 : -1;
    return strcmp(x->key.name, y->key.name);
}

static int is_main(const struct fnp_func *f)
{
    return strcmp(f->key.name, "main") == 0 || strncmp(f->key.name, "main(", 5) == 0;
}

/* The filter file's content: the rule, then the picked functions, most calls first. */
struct suggestion {
    const char *path, *max_text;
    uint64_t min_calls, total, saved;
    int count_only;
    const struct fnp_func **picks;
    size_t npicks;
};

/* An fnp_write_fn: the file goes to -o through fnp_write_file_atomic, else to stdout. */
static int write_filter(struct fnp_sink *s, void *ctx)
{
    const struct suggestion *sg = ctx;
    fnp_sink_puts(s, "# fnprof suggest-filter ");
    put_comment_text(s, sg->path);
    fnp_sink_puts(s, "\n");
    if (sg->count_only)
        fnp_sink_printf(s, "# rule: at least %" PRIu64 " calls (a count-only profile: no times)\n",
                        sg->min_calls);
    else
        fnp_sink_printf(s, "# rule: at least %" PRIu64 " calls, under %s a call (cumulative)\n",
                        sg->min_calls, sg->max_text);
    fnp_sink_printf(s,
                    "# %zu functions excluded, %" PRIu64 " of %" PRIu64 " calls (%.1f%%) no longer "
                    "recorded\n",
                    sg->npicks, sg->saved, sg->total,
                    sg->total ? 100.0 * (double)sg->saved / (double)sg->total : 0.0);
    fnp_sink_puts(s, "SCOREP_REGION_NAMES_BEGIN\n");
    for (size_t i = 0; i < sg->npicks; i++) {
        const struct fnp_func *f = sg->picks[i];
        fnp_sink_puts(s, "  # ");
        put_comment_text(s, f->key.file);
        if (sg->count_only)
            fnp_sink_printf(s, ":%u: %" PRIu64 " calls\n", f->key.line, f->st.ncalls);
        else
            fnp_sink_printf(s, ":%u: %" PRIu64 " calls, %.3g us a call\n", f->key.line,
                            f->st.ncalls, f->st.cumtime / (double)f->st.ncalls * 1e6);
        fnp_sink_puts(s, "  EXCLUDE ");
        put_pattern(s, f->key.name);
        fnp_sink_puts(s, "\n");
    }
    fnp_sink_puts(s, "SCOREP_REGION_NAMES_END\n");
    return s->err;
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
    struct suggestion sg = {.path = path, .max_text = max_text, .min_calls = min_calls};
    sg.count_only = clock && strcmp(clock, "none") == 0;
    sg.picks = malloc((p.nfuncs ? p.nfuncs : 1) * sizeof(*sg.picks));
    if (!sg.picks) {
        fnp_cli_error("suggest-filter", "out of memory");
        fnp_profile_free(&p);
        return FNP_EXIT_FAILURE;
    }
    for (size_t i = 0; i < p.nfuncs; i++) {
        const struct fnp_func *f = &p.funcs[i];
        sg.total += f->st.ncalls;
        if (f->st.ncalls < min_calls || f->st.ncalls == 0 || is_main(f))
            continue;
        if (!sg.count_only && f->st.cumtime / (double)f->st.ncalls >= max_per_call)
            continue;
        sg.picks[sg.npicks++] = f;
        sg.saved += f->st.ncalls;
    }
    qsort(sg.picks, sg.npicks, sizeof(*sg.picks), by_calls);

    /* As fnprof convert writes: -o whole or not at all, else straight to fd 1. */
    int err;
    if (output) {
        err = fnp_write_file_atomic(output, write_filter, &sg);
        if (err)
            fnp_cli_error("suggest-filter", "%s: cannot write: %s", output,
                          fnp_write_file_strerror(err));
    } else {
        struct fnp_sink s;
        err = fnp_sink_fd(&s, 1);
        if (!err)
            err = write_filter(&s, &sg);
        if (!err)
            err = fnp_sink_flush(&s);
        fnp_sink_free(&s);
        if (err) /* main.c's words for a failed stdout */
            fnp_cli_error(NULL, "standard output: %s", strerror(-err));
    }
    free(sg.picks);
    fnp_profile_free(&p);
    return err ? FNP_EXIT_FAILURE : FNP_EXIT_OK;
}
