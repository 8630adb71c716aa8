/* SPDX-License-Identifier: MIT */
/*
 * fnprof diff BASE NEW: two profiles compared function by function (pstats key), the
 * largest change first, and --fail-on rules for CI (docs/diff.md). The matching, order and
 * rules are profile/diff.c's; this file reads the files and prints, as text or --json.
 *
 * Exit statuses follow diff(1) and cmp(1), not the other subcommands: 0 when no rule is
 * broken (the profiles may still differ), 1 when one is, 2 for trouble (a bad option or
 * rule, a file that cannot be read or is no profile), so that CI can tell a regression from
 * a broken job.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "diff.h"

#define DEFAULT_LIMIT 30
#define EXIT_BROKEN 1
#define EXIT_TROUBLE 2

/* How times are shown: seconds times scale, decimals decimals. Seconds get 6 (pstats' 3
 * would show most changes of a short run as 0.000). A count-only profile's "seconds" are
 * calls: whole numbers, named so. */
struct unit {
    const char *word;
    double scale;
    int decimals;
};

static const struct unit units[] = {
    {"s", 1, 6},
    {"ms", 1e3, 3},
    {"us", 1e6, 3},
    {"ns", 1e9, 0},
};
static const struct unit calls_unit = {"calls", 1, 0};

#define TIME_WIDTH 12

struct side {
    const char *path;
    struct fnp_profile p;
    int count_only;
    unsigned __int128 calls; /* Python ints: a hostile file's sum may pass 2^64 */
    double tottime;
};

/* A rule broken by a row. */
struct breach {
    size_t rule, row;
};

struct diff_cmd {
    struct side base, next;
    struct fnp_diff d;
    const struct unit *unit;
    int times;    /* both profiles count the same thing: times are compared */
    size_t limit; /* --limit; 0: all */
    size_t shown; /* the rows printed: the first limit of d's */
    unsigned sort;
    struct fnp_diff_rule *rules;
    size_t nrules;
    struct breach *breaches;
    size_t nbreaches;
};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: fnprof diff BASE NEW [--sort KEY] [--limit N] [--unit s|ms|us|ns] [--json]\n"
            "                   [--fail-on RULE]...\n"
            "\n"
            "Compares two pstats files (fnprof's or CPython's cProfile's) function by\n"
            "function, a function being its pstats key (file, line, name): calls, tottime\n"
            "and cumtime in BASE and NEW and their change, in amount and percent, the\n"
            "largest change of cumtime first. Functions only in NEW are marked \"new\",\n"
            "those only in BASE \"gone\".\n"
            "\n"
            "Options:\n"
            "  -s, --sort KEY     order by the largest absolute change of KEY: cumtime\n"
            "                     (default), tottime or ncalls; or by name\n"
            "  -n, --limit N      show the first N functions (default %d, 0: all; --json\n"
            "                     lists all unless --limit is given)\n"
            "  -u, --unit UNIT    times in s (default), ms, us or ns\n"
            "      --json         the comparison as JSON on stdout (docs/diff.md)\n"
            "      --fail-on RULE exit 1, listing the offending functions, when a function\n"
            "                     breaks RULE; repeatable. RULE is METRIC>+N%% (grew by\n"
            "                     more than N percent) or METRIC>+N (by more than N calls,\n"
            "                     or seconds; times take s, ms, us or ns), METRIC one of\n"
            "                     ncalls, tottime, cumtime, then optionally ,min=M: only\n"
            "                     where BASE's or NEW's value is at least M. A new\n"
            "                     function breaks a %% rule when its value reaches M.\n"
            "                     Example: --fail-on 'cumtime>+10%%,min=5ms'\n"
            "  -h, --help         show this help\n"
            "\n"
            "Exit status: 0 no rule broken, 1 a rule broken, 2 trouble (a bad rule or\n"
            "option, a file missing or not a profile), as diff(1) and cmp(1).\n",
            DEFAULT_LIMIT);
}

/* ---- reading ---------------------------------------------------------------------- */

static int load_side(struct side *s)
{
    fnp_profile_init(&s->p);
    if (fnp_cli_load("diff", s->path, &s->p, NULL))
        return -1;
    /* The tree says how the run counted: a count-only run's times are calls. CPython's
     * files have no tree and are timed. */
    s->count_only = s->p.tree_kind == FNP_TREE_CALLS;
    for (size_t i = 0; i < s->p.nfuncs; i++) {
        s->calls += s->p.funcs[i].st.ncalls;
        s->tottime += s->p.funcs[i].st.tottime; /* pstats' total, in the file's order */
    }
    return 0;
}

/* ---- text ------------------------------------------------------------------------- */

/* pstats' func_std_string: file:line(name), or {name} for CPython's built-ins. */
static void put_function(FILE *out, const struct fnp_key *k)
{
    size_t len = strlen(k->name);
    if (!strcmp(k->file, "~") && k->line == 0) {
        if (len >= 2 && k->name[0] == '<' && k->name[len - 1] == '>') {
            putc('{', out);
            for (size_t i = 1; i + 1 < len; i++)
                putc((unsigned char)k->name[i] < 0x20 ? '?' : k->name[i], out);
            putc('}', out);
        } else {
            fnp_cli_put_text(out, k->name);
        }
        return;
    }
    fnp_cli_put_text(out, k->file);
    fprintf(out, ":%" PRIu32 "(", k->line);
    fnp_cli_put_text(out, k->name);
    putc(')', out);
}

static const char *time_text(const struct unit *u, double seconds, int sign, char *buf, size_t n)
{
    double v = seconds * u->scale;
    snprintf(buf, n, sign && v != 0 ? "%+.*f" : "%.*f", u->decimals, v);
    return buf;
}

/* A time and its unit, for the breach lines. */
static const char *time_with_unit(const struct unit *u, double seconds, int sign, char *buf,
                                  size_t n)
{
    time_text(u, seconds, sign, buf, n);
    size_t len = strlen(buf);
    snprintf(buf + len, n - len, " %s", u->word);
    return buf;
}

static const char *calls_change_text(const struct fnp_diff_row *r, char *buf, size_t n)
{
    if (r->after.ncalls > r->before.ncalls)
        snprintf(buf, n, "+%" PRIu64, r->after.ncalls - r->before.ncalls);
    else if (r->after.ncalls < r->before.ncalls)
        snprintf(buf, n, "-%" PRIu64, r->before.ncalls - r->after.ncalls);
    else
        snprintf(buf, n, "0");
    return buf;
}

static const char *percent_text(double pct, char *buf, size_t n)
{
    if (isinf(pct))
        snprintf(buf, n, "+inf%%");
    else
        snprintf(buf, n, "%+.1f%%", pct);
    return buf;
}

static const char *status_word(const struct fnp_diff_row *r)
{
    return r->ibase == FNP_DIFF_ABSENT ? "new" : r->inew == FNP_DIFF_ABSENT ? "gone" : "";
}

/* One metric's four columns: base, new (each "-" where the function did not run), the
 * change and its percentage. */
static void put_columns(const struct diff_cmd *c, const struct fnp_diff_row *r, unsigned metric)
{
    char b1[64], b2[64], b3[64], b4[32];
    if (metric == FNP_DIFF_NCALLS) {
        snprintf(b1, sizeof(b1), "%" PRIu64, r->before.ncalls);
        snprintf(b2, sizeof(b2), "%" PRIu64, r->after.ncalls);
        printf("%9s %9s %9s %8s", r->ibase == FNP_DIFF_ABSENT ? "-" : b1,
               r->inew == FNP_DIFF_ABSENT ? "-" : b2, calls_change_text(r, b3, sizeof(b3)),
               percent_text(fnp_diff_percent(r, metric), b4, sizeof(b4)));
        return;
    }
    double before = fnp_diff_value(&r->before, metric), after = fnp_diff_value(&r->after, metric);
    printf("  %*s %*s %*s %8s", TIME_WIDTH,
           r->ibase == FNP_DIFF_ABSENT ? "-" : time_text(c->unit, before, 0, b1, sizeof(b1)),
           TIME_WIDTH,
           r->inew == FNP_DIFF_ABSENT ? "-" : time_text(c->unit, after, 0, b2, sizeof(b2)),
           TIME_WIDTH, time_text(c->unit, fnp_diff_change(r, metric), 1, b3, sizeof(b3)),
           percent_text(fnp_diff_percent(r, metric), b4, sizeof(b4)));
}

static void print_side(const char *label, const struct diff_cmd *c, const struct side *s)
{
    char b1[48], b2[64];
    printf("%s ", label);
    fnp_cli_put_text(stdout, s->path);
    printf(": %zu functions, %s calls", s->p.nfuncs, fnp_cli_u128(s->calls, b1, sizeof(b1)));
    if (s->count_only)
        printf(", count-only (times are calls)\n");
    else
        printf(", %s %s\n",
               time_text(c->times ? c->unit : &units[0], s->tottime, 0, b2, sizeof(b2)),
               c->times ? c->unit->word : "s");
}

/* "RULE  FUNCTION: METRIC BASE -> NEW (CHANGE, PERCENT)", BASE "none" for a new function. */
static void print_breach(const struct diff_cmd *c, const struct breach *b)
{
    const struct fnp_diff_rule *rule = &c->rules[b->rule];
    const struct fnp_diff_row *r = &c->d.rows[b->row];
    unsigned m = rule->metric;
    char b1[80], b2[80], b3[80], b4[32];
    if (m == FNP_DIFF_NCALLS) {
        snprintf(b1, sizeof(b1), "%" PRIu64, r->before.ncalls);
        snprintf(b2, sizeof(b2), "%" PRIu64, r->after.ncalls);
        calls_change_text(r, b3, sizeof(b3));
    } else {
        time_with_unit(c->unit, fnp_diff_value(&r->before, m), 0, b1, sizeof(b1));
        time_with_unit(c->unit, fnp_diff_value(&r->after, m), 0, b2, sizeof(b2));
        time_with_unit(c->unit, fnp_diff_change(r, m), 1, b3, sizeof(b3));
    }
    printf("  ");
    fnp_cli_put_text(stdout, rule->text);
    printf("  ");
    put_function(stdout, r->key);
    printf(": %s %s -> %s (%s, %s)%s\n", fnp_diff_metric_name(m),
           r->ibase == FNP_DIFF_ABSENT ? "none" : b1, b2, b3,
           percent_text(fnp_diff_percent(r, m), b4, sizeof(b4)),
           r->ibase == FNP_DIFF_ABSENT ? ", new function" : "");
}

static void print_text(const struct diff_cmd *c)
{
    const struct fnp_diff *d = &c->d;
    print_side("base:", c, &c->base);
    print_side("new: ", c, &c->next);
    printf("%zu functions: %zu in both, %zu new, %zu gone; ", d->nrows, d->nboth, d->nnew,
           d->ngone);
    if (c->sort == FNP_DIFF_NAME)
        printf("by name");
    else
        printf("largest change of %s first", fnp_diff_metric_name(c->sort));
    printf(", %zu shown\n\n", c->shown);

    /* Column groups, then the columns: each group's title sits over its first column. */
    if (c->times) {
        char title[32];
        printf("%-38s", "ncalls");
        snprintf(title, sizeof(title), "tottime (%s)", c->unit->word);
        printf("  %-*s", 3 * (TIME_WIDTH + 1) + 8, title);
        snprintf(title, sizeof(title), "cumtime (%s)", c->unit->word);
        printf("  %s", title);
    } else {
        printf("ncalls");
    }
    printf("\n%9s %9s %9s %8s", "base", "new", "change", "%");
    for (int g = 0; c->times && g < 2; g++)
        printf("  %*s %*s %*s %8s", TIME_WIDTH, "base", TIME_WIDTH, "new", TIME_WIDTH, "change",
               "%");
    printf("  %-6s %s\n", "status", "function");
    for (size_t i = 0; i < c->shown; i++) {
        const struct fnp_diff_row *r = &d->rows[i];
        put_columns(c, r, FNP_DIFF_NCALLS);
        if (c->times) {
            put_columns(c, r, FNP_DIFF_TOTTIME);
            put_columns(c, r, FNP_DIFF_CUMTIME);
        }
        printf("  %-6s ", status_word(r));
        put_function(stdout, r->key);
        putchar('\n');
    }
    if (c->nrules) {
        printf("\n--fail-on: ");
        if (!c->nbreaches)
            printf("no rule broken (%zu rule%s)\n", c->nrules, c->nrules == 1 ? "" : "s");
        else
            printf("%zu breach%s\n", c->nbreaches, c->nbreaches == 1 ? "" : "es");
        for (size_t i = 0; i < c->nbreaches; i++)
            print_breach(c, &c->breaches[i]);
    }
}

/* ---- JSON ------------------------------------------------------------------------- */

static void json_stats(struct fnp_sink *s, const struct fnp_stats *st, int present)
{
    if (!present) {
        fnp_sink_puts(s, "null");
        return;
    }
    fnp_sink_printf(s,
                    "{\"ncalls\": %" PRIu64 ", \"pcalls\": %" PRIu64 ", \"tottime\": ", st->ncalls,
                    st->pcalls);
    fnp_json_double(s, st->tottime);
    fnp_sink_puts(s, ", \"cumtime\": ");
    fnp_json_double(s, st->cumtime);
    fnp_sink_puts(s, "}");
}

/* b - a of two counts, exactly, as a JSON integer. */
static void json_count_change(struct fnp_sink *s, uint64_t a, uint64_t b)
{
    if (b >= a)
        fnp_sink_printf(s, "%" PRIu64, b - a);
    else
        fnp_sink_printf(s, "-%" PRIu64, a - b);
}

static void json_side(struct fnp_sink *s, const struct side *sd)
{
    char buf[48];
    fnp_sink_puts(s, "{\"path\": ");
    fnp_json_string(s, sd->path);
    fnp_sink_printf(s, ", \"functions\": %zu, \"calls\": %s, \"tottime\": ", sd->p.nfuncs,
                    fnp_cli_u128(sd->calls, buf, sizeof(buf)));
    fnp_json_double(s, sd->tottime);
    fnp_sink_printf(s, ", \"count_only\": %s}", sd->count_only ? "true" : "false");
}

static void json_key(struct fnp_sink *s, const struct fnp_key *k)
{
    fnp_sink_puts(s, "\"file\": ");
    fnp_json_string(s, k->file);
    fnp_sink_printf(s, ", \"line\": %" PRIu32 ", \"name\": ", k->line);
    fnp_json_string(s, k->name);
}

static void json_row(struct fnp_sink *s, const struct diff_cmd *c, const struct fnp_diff_row *r)
{
    fnp_sink_puts(s, "    {");
    json_key(s, r->key);
    fnp_sink_puts(s, ", \"status\": ");
    fnp_sink_puts(s, r->ibase == FNP_DIFF_ABSENT  ? "\"new\""
                     : r->inew == FNP_DIFF_ABSENT ? "\"gone\""
                                                  : "\"both\"");
    fnp_sink_puts(s, ",\n     \"base\": ");
    json_stats(s, &r->before, r->ibase != FNP_DIFF_ABSENT);
    fnp_sink_puts(s, ",\n     \"new\": ");
    json_stats(s, &r->after, r->inew != FNP_DIFF_ABSENT);
    fnp_sink_puts(s, ",\n     \"change\": {\"ncalls\": ");
    json_count_change(s, r->before.ncalls, r->after.ncalls);
    fnp_sink_puts(s, ", \"pcalls\": ");
    json_count_change(s, r->before.pcalls, r->after.pcalls);
    if (c->times) {
        fnp_sink_puts(s, ", \"tottime\": ");
        fnp_json_double(s, fnp_diff_change(r, FNP_DIFF_TOTTIME));
        fnp_sink_puts(s, ", \"cumtime\": ");
        fnp_json_double(s, fnp_diff_change(r, FNP_DIFF_CUMTIME));
    }
    fnp_sink_puts(s, "},\n     \"percent\": {\"ncalls\": ");
    fnp_json_double(s, fnp_diff_percent(r, FNP_DIFF_NCALLS));
    if (c->times) {
        fnp_sink_puts(s, ", \"tottime\": ");
        fnp_json_double(s, fnp_diff_percent(r, FNP_DIFF_TOTTIME));
        fnp_sink_puts(s, ", \"cumtime\": ");
        fnp_json_double(s, fnp_diff_percent(r, FNP_DIFF_CUMTIME));
    }
    fnp_sink_puts(s, "}}");
}

static int print_json(const struct diff_cmd *c)
{
    const struct fnp_diff *d = &c->d;
    struct fnp_sink s;
    int err = fnp_sink_fd(&s, 1);
    if (err)
        return err;
    fnp_sink_puts(&s, "{\n  \"fnprof_diff\": 1,\n  \"base\": ");
    json_side(&s, &c->base);
    fnp_sink_puts(&s, ",\n  \"new\": ");
    json_side(&s, &c->next);
    fnp_sink_printf(&s,
                    ",\n  \"times_compared\": %s,\n  \"sort\": \"%s\",\n"
                    "  \"counts\": {\"functions\": %zu, \"both\": %zu, \"new\": %zu, "
                    "\"gone\": %zu},\n  \"functions\": [",
                    c->times ? "true" : "false", fnp_diff_metric_name(c->sort), d->nrows, d->nboth,
                    d->nnew, d->ngone);
    for (size_t i = 0; i < c->shown; i++) {
        fnp_sink_puts(&s, i ? ",\n" : "\n");
        json_row(&s, c, &d->rows[i]);
    }
    fnp_sink_puts(&s, c->shown ? "\n  ],\n  \"rules\": [" : "],\n  \"rules\": [");
    for (size_t i = 0; i < c->nrules; i++) {
        const struct fnp_diff_rule *r = &c->rules[i];
        fnp_sink_puts(&s, i ? ",\n    {\"rule\": " : "\n    {\"rule\": ");
        fnp_json_string(&s, r->text);
        fnp_sink_printf(&s, ", \"metric\": \"%s\", \"percent\": %s, \"limit\": ",
                        fnp_diff_metric_name(r->metric), r->percent ? "true" : "false");
        fnp_json_double(&s, r->limit);
        fnp_sink_puts(&s, ", \"min\": ");
        fnp_json_double(&s, r->min);
        fnp_sink_puts(&s, "}");
    }
    fnp_sink_puts(&s, c->nrules ? "\n  ],\n  \"breaches\": [" : "],\n  \"breaches\": [");
    for (size_t i = 0; i < c->nbreaches; i++) {
        const struct fnp_diff_rule *rule = &c->rules[c->breaches[i].rule];
        const struct fnp_diff_row *r = &d->rows[c->breaches[i].row];
        fnp_sink_puts(&s, i ? ",\n    {\"rule\": " : "\n    {\"rule\": ");
        fnp_json_string(&s, rule->text);
        fnp_sink_puts(&s, ", ");
        json_key(&s, r->key);
        fnp_sink_printf(&s, ", \"metric\": \"%s\", \"base\": ", fnp_diff_metric_name(rule->metric));
        if (r->ibase == FNP_DIFF_ABSENT)
            fnp_sink_puts(&s, "null");
        else if (rule->metric == FNP_DIFF_NCALLS)
            fnp_sink_printf(&s, "%" PRIu64, r->before.ncalls);
        else
            fnp_json_double(&s, fnp_diff_value(&r->before, rule->metric));
        fnp_sink_puts(&s, ", \"new\": ");
        if (rule->metric == FNP_DIFF_NCALLS)
            fnp_sink_printf(&s, "%" PRIu64, r->after.ncalls);
        else
            fnp_json_double(&s, fnp_diff_value(&r->after, rule->metric));
        fnp_sink_puts(&s, "}");
    }
    fnp_sink_puts(&s, c->nbreaches ? "\n  ]\n}\n" : "]\n}\n");
    err = fnp_sink_flush(&s);
    fnp_sink_free(&s);
    return err;
}

/* ---- the command ------------------------------------------------------------------ */

/* Every rule against every row, rule by rule, rows in the table's order. */
static int find_breaches(struct diff_cmd *c)
{
    for (size_t i = 0; i < c->nrules; i++)
        for (size_t r = 0; r < c->d.nrows; r++) {
            if (!fnp_diff_rule_breaks(&c->rules[i], &c->d.rows[r]))
                continue;
            if ((c->nbreaches & (c->nbreaches - 1)) == 0) { /* 0, 1, 2, 4, ...: double */
                struct breach *b =
                    realloc(c->breaches, (c->nbreaches ? 2 * c->nbreaches : 1) * sizeof(*b));
                if (!b)
                    return -ENOMEM;
                c->breaches = b;
            }
            c->breaches[c->nbreaches++] = (struct breach){i, r};
        }
    return 0;
}

static int run(struct diff_cmd *c, int json, int sort_given, int limit_given)
{
    if (load_side(&c->base) || load_side(&c->next) ||
        fnp_cli_same_kind("diff", c->base.path, &c->base.p, c->next.path, &c->next.p))
        return EXIT_TROUBLE;
    c->times = c->base.count_only == c->next.count_only;
    if (!c->times) {
        /* Calls against seconds mean nothing: only the counts are compared. */
        const char *counted = c->base.count_only ? c->base.path : c->next.path;
        const char *timed = c->base.count_only ? c->next.path : c->base.path;
        for (size_t i = 0; i < c->nrules; i++)
            if (c->rules[i].metric != FNP_DIFF_NCALLS) {
                fnp_cli_error("diff",
                              "%s is count-only and %s is timed: their times cannot be "
                              "compared, so '%s' cannot hold (only ncalls rules can)",
                              counted, timed, c->rules[i].text);
                return EXIT_TROUBLE;
            }
        if (sort_given && (c->sort == FNP_DIFF_TOTTIME || c->sort == FNP_DIFF_CUMTIME)) {
            fnp_cli_error("diff",
                          "one profile is count-only and the other timed: --sort %s "
                          "cannot compare their times",
                          fnp_diff_metric_name(c->sort));
            return EXIT_TROUBLE;
        }
        if (!sort_given)
            c->sort = FNP_DIFF_NCALLS;
        fnp_cli_error("diff", "note: %s is count-only and %s is timed: only calls are compared",
                      counted, timed);
    } else if (c->base.count_only) {
        if (c->unit != &units[0]) /* --unit given: seconds are the default */
            fnp_cli_error("diff",
                          "note: count-only profiles, whose times are calls: --unit %s "
                          "ignored",
                          c->unit->word);
        c->unit = &calls_unit;
    }
    if (fnp_diff_build(&c->d, &c->base.p, &c->next.p)) {
        fnp_cli_error("diff", "out of memory");
        return EXIT_TROUBLE;
    }
    fnp_diff_sort(&c->d, c->sort);
    if (find_breaches(c)) {
        fnp_cli_error("diff", "out of memory");
        return EXIT_TROUBLE;
    }
    if (json && !limit_given)
        c->limit = 0; /* JSON is for programs: all rows unless asked */
    c->shown = c->limit && c->limit < c->d.nrows ? c->limit : c->d.nrows;
    if (json) {
        int err = print_json(c);
        if (err) {
            fnp_cli_error("diff", "standard output: %s", strerror(-err));
            return EXIT_TROUBLE;
        }
    } else {
        print_text(c);
        /* main.c would call a failed write 1, which here means "a rule broke". */
        if (fflush(stdout) || ferror(stdout)) {
            fnp_cli_error("diff", "standard output: %s", strerror(errno));
            clearerr(stdout);
            return EXIT_TROUBLE;
        }
    }
    if (!c->nbreaches)
        return FNP_EXIT_OK;
    /* The rows are on stdout (or in the JSON); this line is for logs that keep stderr. */
    fnp_cli_error("diff", "%zu breach%s of --fail-on rules", c->nbreaches,
                  c->nbreaches == 1 ? "" : "es");
    return EXIT_BROKEN;
}

int fnp_cmd_diff(int argc, char **argv)
{
    enum { OPT_JSON = 256, OPT_FAIL_ON };
    static const struct option opts[] = {
        {"sort", required_argument, NULL, 's'},
        {"limit", required_argument, NULL, 'n'},
        {"unit", required_argument, NULL, 'u'},
        {"json", no_argument, NULL, OPT_JSON},
        {"fail-on", required_argument, NULL, OPT_FAIL_ON},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct diff_cmd c = {.unit = &units[0], .limit = DEFAULT_LIMIT, .sort = FNP_DIFF_CUMTIME};
    int json = 0, sort_given = 0, limit_given = 0, opt, rc = FNP_EXIT_OK;
    /* At most one rule per argument: sized once. */
    c.rules = calloc((size_t)argc + 1, sizeof(*c.rules));
    if (!c.rules) {
        fnp_cli_error("diff", "out of memory");
        return EXIT_TROUBLE;
    }
    opterr = 0;
    while (rc == FNP_EXIT_OK && (opt = getopt_long(argc, argv, ":s:n:u:h", opts, NULL)) != -1) {
        switch (opt) {
        case 's': {
            int m = fnp_diff_metric_parse(optarg);
            if (m < 0)
                rc = fnp_cli_usage_error("diff",
                                         "--sort wants cumtime, tottime, ncalls or name, "
                                         "not '%s'",
                                         optarg);
            c.sort = (unsigned)m;
            sort_given = 1;
            break;
        }
        case 'n':
            if (fnp_cli_parse_limit(optarg, &c.limit))
                rc = fnp_cli_usage_error("diff", "--limit wants a count, not '%s'", optarg);
            limit_given = 1;
            break;
        case 'u': {
            const struct unit *u = NULL;
            for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
                if (!strcmp(optarg, units[i].word))
                    u = &units[i];
            if (!u)
                rc = fnp_cli_usage_error("diff", "--unit wants s, ms, us or ns, not '%s'", optarg);
            c.unit = u;
            break;
        }
        case OPT_JSON:
            json = 1;
            break;
        case OPT_FAIL_ON: {
            char why[256];
            if (fnp_diff_rule_parse(&c.rules[c.nrules], optarg, why, sizeof(why)))
                rc = fnp_cli_usage_error("diff", "bad --fail-on rule '%s': %s", optarg, why);
            else
                c.nrules++;
            break;
        }
        case 'h':
            usage(stdout);
            free(c.rules);
            return FNP_EXIT_OK;
        default: /* ':' or '?' */
            rc = fnp_cli_option_error("diff", opt, argv);
        }
    }
    if (rc == FNP_EXIT_OK && argc - optind != 2)
        rc = fnp_cli_usage_error("diff", argc - optind < 2 ? "two profiles wanted, BASE and NEW"
                                                           : "only two profiles, BASE and NEW");
    if (rc == FNP_EXIT_OK) {
        c.base.path = argv[optind];
        c.next.path = argv[optind + 1];
        rc = run(&c, json, sort_given, limit_given);
    }
    fnp_diff_free(&c.d);
    fnp_profile_free(&c.base.p);
    fnp_profile_free(&c.next.p);
    free(c.breaches);
    free(c.rules);
    return rc;
}
