/*
 * fnprof merge: adds profiles together as pstats.Stats(a, b, ...).dump_stats(out) does:
 * function by function and edge by edge. Per-thread or per-process files become one.
 */
#include <getopt.h>
#include <stdio.h>
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
                 "\n"
                 "Options:\n"
                 "  -o, --output OUT  the file to write (required)\n"
                 "  -h, --help        show this help\n");
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
        case ':':
            return fnp_cli_usage_error("merge", "option '%s' needs a value", argv[optind - 1]);
        default:
            if (optopt)
                return fnp_cli_usage_error("merge", "unknown option '-%c'", optopt);
            return fnp_cli_usage_error("merge", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (!output || !*output)
        return fnp_cli_usage_error("merge", "no output file (-o OUT)");
    if (optind == argc)
        return fnp_cli_usage_error("merge", "no input profile");

    struct fnp_profile sum;
    fnp_profile_init(&sum);
    int rc = FNP_EXIT_OK;
    const char *treeless = NULL; /* the input that left the sum without a tree */
    for (int i = optind; i < argc && rc == FNP_EXIT_OK; i++) {
        int had = i == optind || sum.tree_kind != FNP_TREE_NONE;
        if (fnp_cli_load("merge", argv[i], &sum, NULL))
            rc = FNP_EXIT_FAILURE;
        else if (had && sum.tree_kind == FNP_TREE_NONE)
            treeless = argv[i];
    }
    if (rc == FNP_EXIT_OK) {
        int err = fnp_write_file_atomic(output, fnp_profile_write_fn, &sum);
        if (err) {
            fnp_cli_error("merge", "%s: %s", output, strerror(-err));
            rc = FNP_EXIT_FAILURE;
        } else if (treeless) {
            /* The sum of trees is a tree only when every input has one of the same unit. */
            fnp_cli_error("merge",
                          "%s: note: written without a calling-context tree: %s has none (or "
                          "times where the others count calls); fnprof convert will rebuild "
                          "call paths from edges",
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
