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
            if (into == &in && (fnp_cli_same_kind("merge", argv[optind], &sum, argv[i], &in) ||
                                same_unit(argv[optind], &sum, argv[i], &in))) {
                rc = FNP_EXIT_FAILURE;
            } else if (into == &in && fnp_profile_merge(&sum, &in)) {
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
        if (fnp_profile_set_meta(&sum, "merged", count)) {
            fnp_cli_error("merge", "%s: out of memory", output);
            rc = FNP_EXIT_FAILURE;
        }
    }
    if (rc == FNP_EXIT_OK) {
        int err = fnp_write_file_atomic(output, fnp_profile_write_fn, &sum);
        if (err) {
            fnp_cli_error("merge", "%s: %s", output, strerror(-err));
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
    return rc;
}
