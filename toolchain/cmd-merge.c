/* SPDX-License-Identifier: MIT */
/*
 * fnprof merge: adds profiles together as pstats.Stats(a, b, ...).dump_stats(out) does:
 * function by function and edge by edge. Per-thread or per-process files become one.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *out)
{
    fprintf(out, "usage: fnprof merge -o OUT IN...\n"
                 "\n"
                 "Adds the pstats files IN together, as pstats.Stats(IN...).dump_stats(OUT)\n"
                 "would, and writes the sum to OUT (whole or not at all; OUT may be an IN).\n"
                 "The calling-context trees of fnprof's files are added path by path; if an\n"
                 "input has none (CPython's cProfile wrote it), OUT has none either.\n"
                 "A count-only and a timed profile are not added (calls are not seconds).\n"
                 "Sums saturate: at 2^64 - 1 calls, at the largest double of seconds.\n"
                 "Metadata (program, pid, start, ...): the first input's pairs, then any other\n"
                 "input's keys the first lacks, and \"merged\": the number of runs added (an\n"
                 "input made by fnprof merge counts its own); none if no input has any.\n"
                 "Inputs of several MPI ranks: \"ranks\" lists them (0-3) in place of \"rank\".\n"
                 "\n"
                 "Options:\n"
                 "  -o, --output OUT  the file to write (required)\n"
                 "  -h, --help        show this help\n");
}

/* A count-only run's "seconds" are calls (docs/pstats.md): its tree counts calls, or, when a
 * merge dropped the tree, its metadata names no clock. */
static int count_only(const struct fnp_profile *p)
{
    const char *clock = fnp_profile_meta(p, "clock");
    return p->tree_kind == FNP_TREE_CALLS || (clock && strcmp(clock, "none") == 0);
}

/* Calls added to seconds mean nothing: refused, as fnprof diff refuses to compare their
 * times. CPython's files (no tree, no metadata) are timed. */
static int same_unit(const char *a_path, const struct fnp_profile *a, const char *b_path,
                     const struct fnp_profile *b)
{
    if (count_only(a) == count_only(b))
        return 0;
    fnp_cli_error("merge", "%s is count-only and %s is timed: calls and seconds do not add up",
                  count_only(a) ? a_path : b_path, count_only(a) ? b_path : a_path);
    return -1;
}

/* The MPI ranks the inputs hold, as intervals [lo, hi]: an input's "rank", or the "ranks"
 * an earlier merge wrote. Bounded by the inputs' metadata (a value of at most
 * FNP_TREE_MAX_META_VALUE bytes per input). */
struct rank_set {
    struct span {
        long lo, hi;
    } * v;
    size_t n, cap;
};

static int add_span(struct rank_set *rs, long lo, long hi)
{
    if (fnp_array_grow((void **)&rs->v, &rs->cap, rs->n + 1, sizeof(*rs->v)))
        return -1;
    rs->v[rs->n++] = (struct span){lo, hi};
    return 0;
}

/* A "ranks" value: "N" or "N-M" items joined by ',', as ranks_text writes them, perhaps
 * ending in "..." where it was cut. Items that are not numbers below 2^31 are skipped. */
static int add_ranks_text(struct rank_set *rs, const char *text)
{
    char item[64];
    for (const char *c = text; *c && strncmp(c, "...", 3) != 0;) {
        size_t len = strcspn(c, ",");
        if (len < sizeof(item)) {
            memcpy(item, c, len);
            item[len] = 0;
            char *dash = strchr(item, '-');
            if (dash)
                *dash = 0;
            long lo = fnp_decimal31(item), hi = dash ? fnp_decimal31(dash + 1) : lo;
            if (lo >= 0 && hi >= lo && add_span(rs, lo, hi))
                return -1;
        }
        c += len + (c[len] == ',');
    }
    return 0;
}

static int add_ranks(struct rank_set *rs, const struct fnp_profile *p)
{
    long r = fnp_decimal31(fnp_profile_meta(p, "rank"));
    if (r >= 0)
        return add_span(rs, r, r);
    const char *text = fnp_profile_meta(p, "ranks");
    return text ? add_ranks_text(rs, text) : 0;
}

static int by_lo(const void *a, const void *b)
{
    const struct span *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The sum's metadata names the ranks it holds: one rank stays "rank"; several become
 * "ranks", e.g. "0-3" or "0,2-5", and "rank" goes: a merge of four ranks is none of them.
 * A list longer than the format's values is cut at an item and ends in "...". */
static int set_ranks(struct fnp_profile *sum, struct rank_set *rs)
{
    if (!rs->n)
        return 0;
    qsort(rs->v, rs->n, sizeof(*rs->v), by_lo);
    size_t k = 0;
    for (size_t i = 1; i < rs->n; i++) {
        if (rs->v[i].lo <= rs->v[k].hi + 1) {
            if (rs->v[i].hi > rs->v[k].hi)
                rs->v[k].hi = rs->v[i].hi;
        } else {
            rs->v[++k] = rs->v[i];
        }
    }
    rs->n = k + 1;
    if (rs->n == 1 && rs->v[0].lo == rs->v[0].hi) {
        char one[24];
        snprintf(one, sizeof(one), "%ld", rs->v[0].lo);
        fnp_profile_del_meta(sum, "ranks");
        return fnp_profile_set_meta(sum, "rank", one);
    }
    char text[FNP_TREE_MAX_META_VALUE + 1];
    size_t len = 0;
    for (size_t i = 0; i < rs->n; i++) {
        char item[48];
        int n =
            rs->v[i].lo == rs->v[i].hi
                ? snprintf(item, sizeof(item), "%s%ld", i ? "," : "", rs->v[i].lo)
                : snprintf(item, sizeof(item), "%s%ld-%ld", i ? "," : "", rs->v[i].lo, rs->v[i].hi);
        if (len + (size_t)n + 4 > FNP_TREE_MAX_META_VALUE) {
            memcpy(text + len, ",...", 5);
            len += 4;
            break;
        }
        memcpy(text + len, item, (size_t)n + 1);
        len += (size_t)n;
    }
    fnp_profile_del_meta(sum, "rank");
    return fnp_profile_set_meta(sum, "ranks", text);
}

/* The runs a profile holds: its "merged" count if an earlier merge wrote one (a decimal
 * number, at least 1), else 1. */
static uint64_t runs_in(const struct fnp_profile *p)
{
    const char *v = fnp_profile_meta(p, "merged");
    if (!v || !*v || strspn(v, "0123456789") != strlen(v) || strlen(v) > 12)
        return 1;
    uint64_t n = strtoull(v, NULL, 10);
    return n ? n : 1;
}

int fnp_cmd_merge(int argc, char **argv)
{
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *output = NULL;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'o':
            output = optarg;
            break;
        case 'h':
            usage(stdout);
            return FNP_EXIT_OK;
        default: /* ':' or '?' */
            return fnp_cli_option_error("merge", c, argv);
        }
    }
    if (!output || !*output)
        return fnp_cli_usage_error("merge", "no output file (-o OUT)");
    if (optind == argc)
        return fnp_cli_usage_error("merge", "no input profile");

    struct fnp_profile sum, in;
    fnp_profile_init(&sum);
    int rc = FNP_EXIT_OK;
    const char *treeless = NULL; /* the input that left the sum without a tree */
    uint64_t runs = 0;
    struct rank_set ranks = {0};
    for (int i = optind; i < argc && rc == FNP_EXIT_OK; i++) {
        int had = i == optind || sum.tree_kind != FNP_TREE_NONE;
        /* Each input read on its own, then added (as fnp_pstats_read itself would add it),
         * so that its own "merged" count can be seen. */
        struct fnp_profile *into = i == optind ? &sum : &in;
        fnp_profile_init(&in);
        if (fnp_cli_load("merge", argv[i], into, NULL)) {
            rc = FNP_EXIT_FAILURE;
        } else {
            runs += runs_in(into);
            if (add_ranks(&ranks, into)) {
                fnp_cli_error("merge", "%s: out of memory", argv[i]);
                rc = FNP_EXIT_FAILURE;
            }
            if (into == &in && (fnp_cli_same_kind("merge", argv[optind], &sum, argv[i], &in) ||
                                same_unit(argv[optind], &sum, argv[i], &in))) {
                rc = FNP_EXIT_FAILURE;
            } else if (rc == FNP_EXIT_OK && into == &in && fnp_profile_merge(&sum, &in)) {
                fnp_cli_error("merge", "%s: out of memory", argv[i]);
                rc = FNP_EXIT_FAILURE;
            } else if (had && sum.tree_kind == FNP_TREE_NONE) {
                treeless = argv[i];
            }
        }
        fnp_profile_free(&in);
    }
    if (rc == FNP_EXIT_OK && sum.nmeta) {
        char count[24];
        snprintf(count, sizeof(count), "%" PRIu64, runs);
        if (set_ranks(&sum, &ranks) || fnp_profile_set_meta(&sum, "merged", count)) {
            fnp_cli_error("merge", "%s: out of memory", output);
            rc = FNP_EXIT_FAILURE;
        }
    }
    if (rc == FNP_EXIT_OK) {
        int err = fnp_write_file_atomic(output, fnp_profile_write_fn, &sum);
        if (err) {
            fnp_cli_error("merge", "%s: %s", output, fnp_write_file_strerror(err));
            rc = FNP_EXIT_FAILURE;
        } else if (treeless) {
            /* The sum of trees is a tree only when every input has one. */
            fnp_cli_error("merge",
                          "%s: note: written without a calling-context tree: %s has none; "
                          "fnprof convert will rebuild call paths from edges",
                          output, treeless);
        }
        if (!err && !sum.nedges) {
            /* docs/pstats.md: it loads, but snakeviz draws nothing; say so rather than leave the
             * user wondering. */
            fnp_cli_error("merge", "%s: note: no caller->callee edge, snakeviz will draw nothing",
                          output);
        }
    }
    fnp_profile_free(&sum);
    free(ranks.v);
    return rc;
}
