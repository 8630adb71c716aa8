/* SPDX-License-Identifier: MIT */
/*
 * fnprof ranks: one row per function over the profiles of one MPI run, a file (or more)
 * per rank: calls, cumtime and tottime at their min, mean and max over the ranks with the
 * rank that holds the max, and the imbalance (max / mean cumtime). Sorted by what the
 * imbalance costs, max - mean cumtime: the time every rank waits at the next collective
 * for the slowest one, on average.
 *
 * A rank is its files' "rank" metadata (runtime/meta.c), so a rank's forked children and
 * its execs, which carry the same rank, are added to it. When a file has none, every file
 * is a rank of its own, numbered by its position among FILES.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define DEFAULT_LIMIT 30

enum sort_key { BY_COST, BY_CUMTIME, BY_TOTTIME, BY_CALLS, BY_IMBALANCE };

static const char *const sort_names[] = {"cost", "cumtime", "tottime", "calls", "imbalance"};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: fnprof ranks [--sort KEY] [--limit N] [--json] FILE...\n"
            "\n"
            "Compares the profiles of one MPI run's ranks (fnprof names them by rank: %%r in\n"
            "PROF_OUTPUT, or .rank<r> appended). One row per function: its calls over all\n"
            "ranks; its cumtime and tottime at their min, mean and max over the ranks, with\n"
            "the rank that holds the max; the imbalance, max / mean cumtime; and the cost,\n"
            "max - mean cumtime: what the slowest rank keeps the others waiting, on average.\n"
            "A function a rank never called counts 0 there.\n"
            "\n"
            "A rank is the \"rank\" in its file's metadata: files of the same rank (a rank's\n"
            "forked children) are added together. If a file has none, each file is a rank,\n"
            "numbered by its position among FILES.\n"
            "\n"
            "Options:\n"
            "  -s, --sort KEY   cost (default), cumtime (max), tottime (max), calls,\n"
            "                   imbalance; the largest first\n"
            "  -n, --limit N    show the first N functions (default %d, 0: all; --json\n"
            "                   shows all unless given)\n"
            "      --json       the table as JSON on stdout (docs/mpi.md)\n"
            "  -h, --help       show this help\n",
            DEFAULT_LIMIT);
}

/* min, mean and max of one figure over the ranks. */
struct spread {
    double min, mean, max;
    long max_rank;
};

struct row {
    uint32_t func; /* in the union's function table */
    unsigned __int128 calls, pcalls;
    struct spread cum, tot;
    double imbalance; /* max / mean cumtime; negative: mean is 0 */
    double cost;
};

/* One rank: the files that name it, added together in their column of the table. */
struct rank {
    long rank;
    const char *path; /* its first file */
    size_t nfiles;
    size_t col; /* its column of cum and tot */
};

struct ranks_cmd {
    struct fnp_profile keys; /* only its function table: the union of every file's keys */
    struct rank *ranks;      /* sorted by rank once read */
    size_t nranks;
    double *cum, *tot;                 /* [func * stride + column] */
    unsigned __int128 *calls, *pcalls; /* per function, over every file */
    size_t stride;                     /* columns: at most one per file */
    size_t cap;                        /* functions the arrays hold */
    enum sort_key sort_by;
};

static int grow(struct ranks_cmd *c, size_t nfuncs)
{
    if (nfuncs <= c->cap)
        return 0;
    size_t cap = c->cap ? c->cap : 256;
    while (cap < nfuncs)
        cap *= 2;
    size_t old = c->cap * c->stride, n = cap * c->stride;
    double *cum = realloc(c->cum, n * sizeof(double));
    if (cum)
        c->cum = cum;
    double *tot = cum ? realloc(c->tot, n * sizeof(double)) : NULL;
    if (tot)
        c->tot = tot;
    unsigned __int128 *calls = tot ? realloc(c->calls, cap * sizeof(*calls)) : NULL;
    if (calls)
        c->calls = calls;
    unsigned __int128 *pcalls = calls ? realloc(c->pcalls, cap * sizeof(*pcalls)) : NULL;
    if (!pcalls)
        return -ENOMEM;
    c->pcalls = pcalls;
    memset(c->cum + old, 0, (n - old) * sizeof(double));
    memset(c->tot + old, 0, (n - old) * sizeof(double));
    memset(c->calls + c->cap, 0, (cap - c->cap) * sizeof(*calls));
    memset(c->pcalls + c->cap, 0, (cap - c->cap) * sizeof(*pcalls));
    c->cap = cap;
    return 0;
}

/* Adds file p's functions to column col. */
static int add_file(struct ranks_cmd *c, const struct fnp_profile *p, size_t col)
{
    for (size_t i = 0; i < p->nfuncs; i++) {
        int64_t f = fnp_profile_func(&c->keys, &p->funcs[i].key);
        if (f < 0 || grow(c, c->keys.nfuncs))
            return -ENOMEM;
        size_t at = (size_t)f * c->stride + col;
        const struct fnp_stats *st = &p->funcs[i].st;
        c->cum[at] += st->cumtime;
        c->tot[at] += st->tottime;
        c->calls[f] += st->ncalls;
        c->pcalls[f] += st->pcalls;
    }
    return 0;
}

/* min, mean and max of one function's figures (its row at v) over the ranks. The mean as
 * a sum of quotients: a sum of finite times near DBL_MAX would overflow. */
static struct spread spread_of(const double *v, const struct rank *ranks, size_t n)
{
    struct spread s = {v[ranks[0].col], 0, v[ranks[0].col], ranks[0].rank};
    for (size_t r = 0; r < n; r++) {
        double x = v[ranks[r].col];
        s.mean += x / (double)n;
        if (x < s.min)
            s.min = x;
        if (x > s.max) {
            s.max = x;
            s.max_rank = ranks[r].rank;
        }
    }
    if (s.mean > s.max) /* rounding: the mean of equal figures */
        s.mean = s.max;
    return s;
}

static double sort_value(enum sort_key by, const struct row *r)
{
    switch (by) {
    case BY_CUMTIME:
        return r->cum.max;
    case BY_TOTTIME:
        return r->tot.max;
    case BY_CALLS:
        return (double)r->calls;
    case BY_IMBALANCE:
        return r->imbalance;
    default:
        return r->cost;
    }
}

/* The largest first, by c's key; ties in pstats' key order. */
static int row_cmp(const void *a, const void *b, void *ctx)
{
    const struct row *x = a, *y = b;
    const struct ranks_cmd *c = ctx;
    if (c->sort_by == BY_CALLS && x->calls != y->calls)
        return x->calls > y->calls ? -1 : 1;
    double u = sort_value(c->sort_by, x), v = sort_value(c->sort_by, y);
    if (u != v)
        return u > v ? -1 : 1;
    return fnp_key_cmp(&c->keys.funcs[x->func].key, &c->keys.funcs[y->func].key);
}

/* A time in the table's 10 columns: microseconds, or 4 digits where it would not fit. */
static void seconds(char *buf, size_t n, double v)
{
    snprintf(buf, n, v < 1e3 && v > -1e3 ? "%.6f" : "%.4g", v);
}

static void print_text(const struct ranks_cmd *c, const struct row *rows, size_t n, size_t shown,
                       size_t nfiles)
{
    long lo = c->ranks[0].rank, hi = c->ranks[c->nranks - 1].rank;
    printf("%zu rank%s (%ld-%ld) from %zu file%s; %zu functions; sorted by %s\n\n", c->nranks,
           c->nranks == 1 ? "" : "s", lo, hi, nfiles, nfiles == 1 ? "" : "s", n,
           c->sort_by == BY_COST ? "cost: max - mean cumtime" : sort_names[c->sort_by]);
    printf("%12s %10s %10s %10s %9s %10s %10s %10s %9s %9s %10s  %s\n", "calls", "cum min",
           "cum mean", "cum max", "at", "tot min", "tot mean", "tot max", "at", "imbalance", "cost",
           "function");
    for (size_t i = 0; i < shown; i++) {
        const struct row *r = &rows[i];
        char calls[48], cat[24], tat[24], imb[24];
        snprintf(cat, sizeof(cat), "rank %ld", r->cum.max_rank);
        snprintf(tat, sizeof(tat), "rank %ld", r->tot.max_rank);
        if (r->imbalance < 0)
            snprintf(imb, sizeof(imb), "-");
        else
            snprintf(imb, sizeof(imb), r->imbalance < 1e6 ? "%.2f" : "%.3g", r->imbalance);
        const double v[] = {r->cum.min,  r->cum.mean, r->cum.max, r->tot.min,
                            r->tot.mean, r->tot.max,  r->cost};
        char t[sizeof(v) / sizeof(v[0])][32];
        for (size_t k = 0; k < sizeof(v) / sizeof(v[0]); k++)
            seconds(t[k], sizeof(t[k]), v[k]);
        printf("%12s %10s %10s %10s %9s %10s %10s %10s %9s %9s %10s  ",
               fnp_cli_u128(r->calls, calls, sizeof(calls)), t[0], t[1], t[2], cat, t[3], t[4],
               t[5], tat, imb, t[6]);
        fnp_cli_put_function(stdout, &c->keys.funcs[r->func].key);
        putchar('\n');
    }
    if (shown < n)
        printf("... %zu more (--limit 0 shows all)\n", n - shown);
}

static void json_spread(struct fnp_sink *s, const struct spread *sp)
{
    fnp_sink_puts(s, "{\"min\": ");
    fnp_json_double(s, sp->min);
    fnp_sink_puts(s, ", \"mean\": ");
    fnp_json_double(s, sp->mean);
    fnp_sink_puts(s, ", \"max\": ");
    fnp_json_double(s, sp->max);
    fnp_sink_printf(s, ", \"max_rank\": %ld}", sp->max_rank);
}

static int print_json(const struct ranks_cmd *c, const struct row *rows, size_t shown)
{
    struct fnp_sink s;
    int err = fnp_sink_fd(&s, 1);
    if (err)
        return err;
    fnp_sink_puts(&s, "{\"ranks\": [");
    for (size_t r = 0; r < c->nranks; r++) {
        fnp_sink_printf(&s, "%s{\"rank\": %ld, \"files\": %zu, \"path\": ", r ? ", " : "",
                        c->ranks[r].rank, c->ranks[r].nfiles);
        fnp_json_string(&s, c->ranks[r].path);
        fnp_sink_puts(&s, "}");
    }
    fnp_sink_puts(&s, "],\n \"functions\": [");
    for (size_t i = 0; i < shown; i++) {
        const struct row *r = &rows[i];
        const struct fnp_key *k = &c->keys.funcs[r->func].key;
        char calls[48], pcalls[48];
        fnp_sink_puts(&s, i ? ",\n  {\"file\": " : "\n  {\"file\": ");
        fnp_json_string(&s, k->file);
        fnp_sink_printf(&s, ", \"line\": %" PRIu32 ", \"name\": ", k->line);
        fnp_json_string(&s, k->name);
        fnp_sink_printf(&s, ", \"calls\": %s, \"primitive_calls\": %s, \"cumtime\": ",
                        fnp_cli_u128(r->calls, calls, sizeof(calls)),
                        fnp_cli_u128(r->pcalls, pcalls, sizeof(pcalls)));
        json_spread(&s, &r->cum);
        fnp_sink_puts(&s, ", \"tottime\": ");
        json_spread(&s, &r->tot);
        fnp_sink_puts(&s, ", \"imbalance\": ");
        if (r->imbalance < 0)
            fnp_sink_puts(&s, "null");
        else
            fnp_json_double(&s, r->imbalance);
        fnp_sink_puts(&s, ", \"cost\": ");
        fnp_json_double(&s, r->cost);
        fnp_sink_puts(&s, "}");
    }
    fnp_sink_puts(&s, "\n]}\n");
    err = fnp_sink_flush(&s);
    fnp_sink_free(&s);
    return err;
}

static int rank_cmp(const void *a, const void *b)
{
    const struct rank *x = a, *y = b;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* The column of rank r, added if new. */
static size_t column(struct ranks_cmd *c, long r, const char *path)
{
    for (size_t i = 0; i < c->nranks; i++)
        if (c->ranks[i].rank == r) {
            c->ranks[i].nfiles++;
            return c->ranks[i].col;
        }
    c->ranks[c->nranks] = (struct rank){r, path, 1, c->nranks};
    return c->nranks++;
}

/* Reads the files one at a time into c: each file's rank is its metadata's, a file without
 * one is numbered after the highest rank the others name, in the order given. Returns 0,
 * or -1 after a message. */
static int load(struct ranks_cmd *c, char **files, size_t nfiles)
{
    struct fnp_profile p;
    struct stat *seen = calloc(nfiles, sizeof(*seen));
    size_t nunranked = 0;
    const char *first_unranked = NULL; /* numbered once every file is read */
    c->ranks = calloc(nfiles, sizeof(*c->ranks));
    c->stride = nfiles;
    long top = -1, size = -1;
    int rc = seen && c->ranks ? 0 : -1, sizes_differ = 0;
    if (rc)
        fnp_cli_error("ranks", "out of memory");
    for (size_t i = 0; i < nfiles && !rc; i++) {
        fnp_profile_init(&p);
        if (fnp_cli_load("ranks", files[i], &p, &seen[i])) {
            rc = -1;
            break;
        }
        for (size_t j = 0; j < i && !rc; j++)
            if (seen[j].st_dev == seen[i].st_dev && seen[j].st_ino == seen[i].st_ino) {
                fnp_cli_error("ranks", "%s: given twice (also as %s): its calls would count twice",
                              files[i], files[j]);
                rc = -1;
            }
        long r = fnp_decimal31(fnp_profile_meta(&p, "rank")),
             sz = fnp_decimal31(fnp_profile_meta(&p, "size"));
        if (sz > 0) {
            sizes_differ |= size > 0 && sz != size;
            size = sz;
        }
        if (r > top)
            top = r;
        if (r < 0 && !nunranked++)
            first_unranked = files[i];
        if (!rc && add_file(c, &p, column(c, r >= 0 ? r : -1 - (long)i, files[i]))) {
            fnp_cli_error("ranks", "out of memory");
            rc = -1;
        }
        fnp_profile_free(&p);
    }
    if (!rc && nunranked) {
        long next = top + 1; /* the ranks are in the order of their first file */
        for (size_t i = 0; i < c->nranks; i++)
            if (c->ranks[i].rank < 0)
                c->ranks[i].rank = next++;
        fnp_cli_error("ranks",
                      "%zu file%s without a rank in the metadata (first: %s): numbered from %ld "
                      "in the order given",
                      nunranked, nunranked == 1 ? "" : "s", first_unranked, top + 1);
    }
    if (!rc) {
        qsort(c->ranks, c->nranks, sizeof(*c->ranks), rank_cmp);
        long first = c->ranks[0].rank, last = c->ranks[c->nranks - 1].rank;
        if (sizes_differ)
            fnp_cli_error("ranks", "note: the files come from runs of different sizes: are they "
                                   "one run's?");
        else if (size > 0 && !nunranked && (size_t)size != c->nranks)
            fnp_cli_error("ranks",
                          "note: %zu of the run's %ld ranks given: the figures are over "
                          "these only",
                          c->nranks, size);
        else if (first != 0 || (size_t)last + 1 != c->nranks)
            fnp_cli_error("ranks",
                          "note: the ranks given are %ld-%ld with gaps: the figures are "
                          "over these %zu only",
                          first, last, c->nranks);
    }
    free(seen);
    return rc;
}

int fnp_cmd_ranks(int argc, char **argv)
{
    static const struct option opts[] = {
        {"sort", required_argument, NULL, 's'},
        {"limit", required_argument, NULL, 'n'},
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    size_t limit = DEFAULT_LIMIT;
    int json = 0, limit_given = 0, c;
    enum sort_key sort_by = BY_COST;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":s:n:h", opts, NULL)) != -1) {
        switch (c) {
        case 's': {
            size_t k = 0;
            while (k < sizeof(sort_names) / sizeof(sort_names[0]) && strcmp(optarg, sort_names[k]))
                k++;
            if (k == sizeof(sort_names) / sizeof(sort_names[0]))
                return fnp_cli_usage_error(
                    "ranks", "unknown sort key '%s' (cost, cumtime, tottime, calls, imbalance)",
                    optarg);
            sort_by = (enum sort_key)k;
            break;
        }
        case 'n':
            if (fnp_cli_parse_limit(optarg, &limit))
                return fnp_cli_usage_error("ranks", "--limit needs a count, not '%s'", optarg);
            limit_given = 1;
            break;
        case 'j':
            json = 1;
            break;
        case 'h':
            usage(stdout);
            return FNP_EXIT_OK;
        default: /* ':' or '?' */
            return fnp_cli_option_error("ranks", c, argv);
        }
    }
    if (optind == argc)
        return fnp_cli_usage_error("ranks", "no profile given");

    struct ranks_cmd cmd = {0};
    fnp_profile_init(&cmd.keys);
    size_t nfiles = (size_t)(argc - optind);
    struct row *rows = NULL;
    int rc = load(&cmd, argv + optind, nfiles) ? FNP_EXIT_FAILURE : FNP_EXIT_OK;
    size_t n = cmd.keys.nfuncs;
    if (rc == FNP_EXIT_OK && !(rows = calloc(n ? n : 1, sizeof(*rows)))) {
        fnp_cli_error("ranks", "out of memory");
        rc = FNP_EXIT_FAILURE;
    }
    if (rc == FNP_EXIT_OK) {
        for (size_t f = 0; f < n; f++) {
            struct row *r = &rows[f];
            size_t at = f * cmd.stride;
            r->func = (uint32_t)f;
            r->calls = cmd.calls[f];
            r->pcalls = cmd.pcalls[f];
            r->cum = spread_of(cmd.cum + at, cmd.ranks, cmd.nranks);
            r->tot = spread_of(cmd.tot + at, cmd.ranks, cmd.nranks);
            r->imbalance = r->cum.mean > 0 ? r->cum.max / r->cum.mean : -1;
            r->cost = r->cum.max - r->cum.mean;
        }
        cmd.sort_by = sort_by;
        qsort_r(rows, n, sizeof(*rows), row_cmp, &cmd);
        size_t shown = limit && limit < n && (limit_given || !json) ? limit : n;
        if (json) {
            int err = print_json(&cmd, rows, shown);
            if (err) {
                fnp_cli_error("ranks", "writing the output: %s", strerror(-err));
                rc = FNP_EXIT_FAILURE;
            }
        } else {
            print_text(&cmd, rows, n, shown, nfiles);
        }
    }
    free(rows);
    free(cmd.ranks);
    free(cmd.cum);
    free(cmd.tot);
    free(cmd.calls);
    free(cmd.pcalls);
    fnp_profile_free(&cmd.keys);
    return rc;
}
