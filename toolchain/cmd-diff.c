/* SPDX-License-Identifier: MIT */
/*
 * fnprof diff BASE NEW, or BASE... -- NEW...: profiles compared function by function
 * (pstats key), the largest change first, and --fail-on rules for CI (docs/diff.md). With
 * several runs a side a time rule breaks only beyond the runs' own spread (a rank test,
 * profile/ranktest.c). The matching, order and verdict are profile/diff.c's; this file
 * reads the files and prints, as text or --json.
 *
 * Exit statuses follow diff(1) and cmp(1), not the other subcommands: 0 when no rule is
 * broken (the profiles may still differ), 1 when one is, 2 for trouble (a bad option or
 * rule, a file that cannot be read or is no profile), so that CI can tell a regression from
 * a broken job; and 3 when the runs are too few for a time rule ever to break, so that a
 * gate that cannot see never passes in silence.
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
#define DEFAULT_ALPHA 0.05
#define EXIT_BROKEN 1
#define EXIT_TROUBLE 2
#define EXIT_TOO_FEW_RUNS 3

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

struct diff_cmd {
    struct side *base, *next; /* the runs of each side; one each in the two-file form */
    size_t mruns, nruns;
    int runs; /* the runs form (BASE... -- NEW...): time rules judged by the rank test */
    double alpha;
    struct fnp_diff d;
    struct fnp_diff_judgement j;
    const struct unit *unit;
    int times;    /* both profiles count the same thing: times are compared */
    size_t limit; /* --limit; 0: all */
    size_t shown; /* the rows printed: the first limit of d's */
    unsigned sort;
    struct fnp_diff_rule *rules;
    size_t nrules;
};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: fnprof diff BASE NEW [options]\n"
            "       fnprof diff BASE... -- NEW... [options]   several runs a side\n"
            "       fnprof diff --runs-needed [--alpha A]\n"
            "\n"
            "Compares pstats files (fnprof's or CPython's cProfile's) function by\n"
            "function, a function being its pstats key (file, line, name): calls, tottime\n"
            "and cumtime in BASE and NEW and their change, in amount and percent, the\n"
            "largest change of cumtime first. Functions only in NEW are marked \"new\",\n"
            "those only in BASE \"gone\".\n"
            "\n"
            "With several runs a side (BASE's files, then --, then NEW's; options may\n"
            "follow), each side's times are its runs' smallest, and a time rule breaks\n"
            "only where the one-sided rank-sum test also finds NEW's runs slower than\n"
            "BASE's, at --alpha with Holm's correction over the functions tested: an\n"
            "unchanged program fails with probability at most alpha. Count rules stay\n"
            "exact: NEW's smallest count against BASE's largest.\n"
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
            "      --alpha A      several runs a side: the chance that an unchanged\n"
            "                     program fails the time rules, at most (default %g)\n"
            "      --runs-needed  print the runs a side the rank test needs to show a\n"
            "                     change among k tested functions at --alpha, and exit\n"
            "  -h, --help         show this help\n"
            "\n"
            "Exit status: 0 no rule broken, 1 a rule broken, 2 trouble (a bad rule or\n"
            "option, a file missing or not a profile), as diff(1) and cmp(1); 3 too few\n"
            "runs for a time rule ever to break at --alpha.\n",
            DEFAULT_LIMIT, DEFAULT_ALPHA);
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

/* "LOW-HIGH", or one number when the runs agree. */
static void put_range(const char *low, const char *high)
{
    if (strcmp(low, high))
        printf("%s-%s", low, high);
    else
        printf("%s", low);
}

/* One side of the runs form: its runs, the range of their sizes and totals, their paths. */
static void print_runs(const char *label, const struct diff_cmd *c, const struct side *runs,
                       size_t k)
{
    size_t fmin = SIZE_MAX, fmax = 0;
    unsigned __int128 cmin = ~(unsigned __int128)0, cmax = 0;
    double tmin = INFINITY, tmax = 0;
    for (size_t i = 0; i < k; i++) {
        const struct side *s = &runs[i];
        fmin = s->p.nfuncs < fmin ? s->p.nfuncs : fmin;
        fmax = s->p.nfuncs > fmax ? s->p.nfuncs : fmax;
        cmin = s->calls < cmin ? s->calls : cmin;
        cmax = s->calls > cmax ? s->calls : cmax;
        tmin = s->tottime < tmin ? s->tottime : tmin;
        tmax = s->tottime > tmax ? s->tottime : tmax;
    }
    char a[64], b[64];
    printf("%s %zu run%s, ", label, k, k == 1 ? "" : "s");
    snprintf(a, sizeof(a), "%zu", fmin);
    snprintf(b, sizeof(b), "%zu", fmax);
    put_range(a, b);
    printf(" functions, ");
    put_range(fnp_cli_u128(cmin, a, sizeof(a)), fnp_cli_u128(cmax, b, sizeof(b)));
    printf(" calls");
    if (runs[0].count_only) {
        printf(", count-only (times are calls)");
    } else {
        const struct unit *u = c->times ? c->unit : &units[0];
        printf(", ");
        put_range(time_text(u, tmin, 0, a, sizeof(a)), time_text(u, tmax, 0, b, sizeof(b)));
        printf(" %s", u->word);
    }
    printf(":");
    for (size_t i = 0; i < k; i++) {
        putchar(' ');
        fnp_cli_put_text(stdout, runs[i].path);
    }
    putchar('\n');
}

static void print_side(const char *label, const struct diff_cmd *c, const struct side *s)
{
    if (c->runs) {
        print_runs(label, c, s == c->base ? c->base : c->next, s == c->base ? c->mruns : c->nruns);
        return;
    }
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

/* "RULE  FUNCTION: METRIC BASE -> NEW (CHANGE, PERCENT)", BASE "none" for a new function;
 * with several runs, then the test's p, and p after Holm's correction against alpha. */
static void print_verdict(const struct diff_cmd *c, const struct fnp_diff_verdict *b,
                          const char *indent)
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
    printf("%s", indent);
    fnp_cli_put_text(stdout, rule->text);
    printf("  ");
    put_function(stdout, r->key);
    printf(": %s %s -> %s (%s, %s)%s", fnp_diff_metric_name(m),
           r->ibase == FNP_DIFF_ABSENT ? "none" : b1, b2, b3,
           percent_text(fnp_diff_percent(r, m), b4, sizeof(b4)),
           r->ibase == FNP_DIFF_ABSENT ? ", new function" : "");
    if (!isnan(b->p))
        printf(", p %.2g, after Holm %.2g %s %g", b->p, b->holm, b->breach ? "<=" : ">",
               c->j.alpha);
    putchar('\n');
}

/* The test's terms, for the --fail-on section: what a breach had to beat. */
static void print_test(const struct diff_cmd *c)
{
    const struct fnp_diff_judgement *j = &c->j;
    printf("rank test: one-sided, alpha %g, Holm over %zu tested function%s; %zu and %zu runs "
           "allow p down to %.2g",
           j->alpha, j->tested, j->tested == 1 ? "" : "s", c->mruns, c->nruns, j->min_p);
    if (j->tested)
        printf(", %.2g after Holm", j->min_p * (double)j->tested);
    putchar('\n');
}

static void print_text(const struct diff_cmd *c)
{
    const struct fnp_diff *d = &c->d;
    print_side("base:", c, c->base);
    print_side("new: ", c, c->next);
    printf("%zu functions: %zu in both, %zu new, %zu gone; ", d->nrows, d->nboth, d->nnew,
           d->ngone);
    if (c->sort == FNP_DIFF_NAME)
        printf("by name");
    else
        printf("largest change of %s first", fnp_diff_metric_name(c->sort));
    printf(", %zu shown\n", c->shown);
    if (c->runs)
        printf("each side's times are the smallest of its runs; its calls BASE's largest and "
               "NEW's smallest count\n");
    putchar('\n');

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
    if (!c->nrules)
        return;
    const struct fnp_diff_judgement *j = &c->j;
    printf("\n--fail-on: ");
    if (j->nbreaches)
        printf("%zu breach%s\n", j->nbreaches, j->nbreaches == 1 ? "" : "es");
    else if (j->blind)
        printf("undecided: too few runs for a time rule to break (below)\n");
    else
        printf("no rule broken (%zu rule%s)\n", c->nrules, c->nrules == 1 ? "" : "s");
    for (size_t i = 0; i < j->nv; i++)
        if (j->v[i].breach)
            print_verdict(c, &j->v[i], "  ");
    if (!c->runs)
        return;
    print_test(c);
    if (j->nv > j->nbreaches) {
        printf("grew past a rule, but within the runs' spread (not breaches):\n");
        for (size_t i = 0; i < j->nv; i++)
            if (!j->v[i].breach)
                print_verdict(c, &j->v[i], "    ");
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
    fnp_sink_puts(s, "}");
    if (c->runs) {
        size_t i = (size_t)(r - c->d.rows);
        fnp_sink_printf(s, ",\n     \"runs\": {\"base\": %" PRIu32 ", \"new\": %" PRIu32 "}",
                        r->nbase, r->nnew);
        if (c->times) {
            fnp_sink_puts(s, ", \"p\": {\"tottime\": ");
            fnp_json_double(s, c->j.p[0] ? c->j.p[0][i] : NAN);
            fnp_sink_puts(s, ", \"cumtime\": ");
            fnp_json_double(s, c->j.p[1] ? c->j.p[1][i] : NAN);
            fnp_sink_puts(s, "}");
        }
    }
    fnp_sink_puts(s, "}");
}

/* A side: its file, or in the runs form the list of its runs' files. */
static void json_sides(struct fnp_sink *s, const struct diff_cmd *c, const struct side *runs,
                       size_t k)
{
    if (!c->runs) {
        json_side(s, &runs[0]);
        return;
    }
    fnp_sink_puts(s, "[");
    for (size_t i = 0; i < k; i++) {
        fnp_sink_puts(s, i ? ",\n    " : "\n    ");
        json_side(s, &runs[i]);
    }
    fnp_sink_puts(s, "]");
}

/* One verdict of the --fail-on rules, for "breaches" and "spread". */
static void json_verdict(struct fnp_sink *s, const struct diff_cmd *c,
                         const struct fnp_diff_verdict *v)
{
    const struct fnp_diff_rule *rule = &c->rules[v->rule];
    const struct fnp_diff_row *r = &c->d.rows[v->row];
    fnp_sink_puts(s, "{\"rule\": ");
    fnp_json_string(s, rule->text);
    fnp_sink_puts(s, ", ");
    json_key(s, r->key);
    fnp_sink_printf(s, ", \"metric\": \"%s\", \"base\": ", fnp_diff_metric_name(rule->metric));
    if (r->ibase == FNP_DIFF_ABSENT)
        fnp_sink_puts(s, "null");
    else if (rule->metric == FNP_DIFF_NCALLS)
        fnp_sink_printf(s, "%" PRIu64, r->before.ncalls);
    else
        fnp_json_double(s, fnp_diff_value(&r->before, rule->metric));
    fnp_sink_puts(s, ", \"new\": ");
    if (rule->metric == FNP_DIFF_NCALLS)
        fnp_sink_printf(s, "%" PRIu64, r->after.ncalls);
    else
        fnp_json_double(s, fnp_diff_value(&r->after, rule->metric));
    if (c->runs) {
        fnp_sink_puts(s, ", \"p\": ");
        fnp_json_double(s, v->p);
        fnp_sink_puts(s, ", \"holm\": ");
        fnp_json_double(s, v->holm);
    }
    fnp_sink_puts(s, "}");
}

static int print_json(const struct diff_cmd *c)
{
    const struct fnp_diff *d = &c->d;
    struct fnp_sink s;
    int err = fnp_sink_fd(&s, 1);
    if (err)
        return err;
    fnp_sink_puts(&s, "{\n  \"fnprof_diff\": 1,\n  \"base\": ");
    json_sides(&s, c, c->base, c->mruns);
    fnp_sink_puts(&s, ",\n  \"new\": ");
    json_sides(&s, c, c->next, c->nruns);
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
    const struct fnp_diff_judgement *j = &c->j;
    for (size_t i = 0, n = 0; i < j->nv; i++) {
        if (!j->v[i].breach)
            continue;
        fnp_sink_puts(&s, n++ ? ",\n    " : "\n    ");
        json_verdict(&s, c, &j->v[i]);
    }
    fnp_sink_puts(&s, j->nbreaches ? "\n  ]" : "]");
    if (c->runs) {
        fnp_sink_puts(&s, ",\n  \"spread\": [");
        for (size_t i = 0, n = 0; i < j->nv; i++) {
            if (j->v[i].breach)
                continue;
            fnp_sink_puts(&s, n++ ? ",\n    " : "\n    ");
            json_verdict(&s, c, &j->v[i]);
        }
        fnp_sink_puts(&s, j->nv > j->nbreaches ? "\n  ]" : "]");
        fnp_sink_puts(&s, ",\n  \"test\": {\"alpha\": ");
        fnp_json_double(&s, j->alpha);
        fnp_sink_printf(&s, ", \"tested\": %zu, \"smallest_p\": ", j->tested);
        fnp_json_double(&s, j->min_p);
        fnp_sink_printf(&s, ", \"too_few_runs\": %s}", j->blind ? "true" : "false");
    }
    fnp_sink_puts(&s, "\n}\n");
    err = fnp_sink_flush(&s);
    fnp_sink_free(&s);
    return err;
}

/* ---- the command ------------------------------------------------------------------ */

/* A side's runs: each a profile of the same kind, counted the same way. */
static int load_runs(struct side *runs, size_t k)
{
    for (size_t i = 0; i < k; i++)
        if (load_side(&runs[i]))
            return -1;
    for (size_t i = 1; i < k; i++) {
        if (fnp_cli_same_kind("diff", runs[0].path, &runs[0].p, runs[i].path, &runs[i].p))
            return -1;
        if (runs[i].count_only != runs[0].count_only) {
            fnp_cli_error("diff", "%s is %s and %s is %s: the runs of a side must be timed alike",
                          runs[0].path, runs[0].count_only ? "count-only" : "timed", runs[i].path,
                          runs[i].count_only ? "count-only" : "timed");
            return -1;
        }
    }
    return 0;
}

/* The first function's name, printable, for a one-line note. */
static const char *printable(const char *name, char *buf, size_t n)
{
    size_t i = 0;
    for (; name[i] && i + 1 < n; i++)
        buf[i] = (unsigned char)name[i] < 0x20 || name[i] == 0x7f ? '?' : name[i];
    buf[i] = '\0';
    return buf;
}

/* Runs of one side that disagree on a function's calls: a deterministic program's do
 * not, so say so, once a side. */
static void note_varying_calls(const struct diff_cmd *c)
{
    for (int side = 0; side < 2; side++) {
        size_t n = 0;
        const struct fnp_diff_row *first = NULL;
        for (size_t i = 0; i < c->d.nrows; i++)
            if (c->d.rows[i].calls_vary >> side & 1) {
                first = first ? first : &c->d.rows[i];
                n++;
            }
        if (!n)
            continue;
        char name[96];
        fnp_cli_error("diff",
                      "note: %s's runs disagree on the calls of %zu function%s (%s first): "
                      "count rules compare NEW's smallest count with BASE's largest",
                      side ? "NEW" : "BASE", n, n == 1 ? "" : "s",
                      printable(first->key->name, name, sizeof(name)));
    }
}

static int run(struct diff_cmd *c, int json, int sort_given, int limit_given)
{
    if (load_runs(c->base, c->mruns) || load_runs(c->next, c->nruns) ||
        fnp_cli_same_kind("diff", c->base[0].path, &c->base[0].p, c->next[0].path, &c->next[0].p))
        return EXIT_TROUBLE;
    c->times = c->base[0].count_only == c->next[0].count_only;
    if (!c->times) {
        /* Calls against seconds mean nothing: only the counts are compared. */
        const char *counted = c->base[0].count_only ? c->base[0].path : c->next[0].path;
        const char *timed = c->base[0].count_only ? c->next[0].path : c->base[0].path;
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
    } else if (c->base[0].count_only) {
        if (c->unit != &units[0]) /* --unit given: seconds are the default */
            fnp_cli_error("diff",
                          "note: count-only profiles, whose times are calls: --unit %s "
                          "ignored",
                          c->unit->word);
        c->unit = &calls_unit;
    }
    const struct fnp_profile **profiles = malloc((c->mruns + c->nruns) * sizeof(*profiles));
    if (!profiles) {
        fnp_cli_error("diff", "out of memory");
        return EXIT_TROUBLE;
    }
    for (size_t i = 0; i < c->mruns + c->nruns; i++)
        profiles[i] = i < c->mruns ? &c->base[i].p : &c->next[i - c->mruns].p;
    int built = fnp_diff_build_runs(&c->d, profiles, c->mruns, profiles + c->mruns, c->nruns);
    free(profiles);
    if (built) {
        fnp_cli_error("diff", "out of memory");
        return EXIT_TROUBLE;
    }
    fnp_diff_sort(&c->d, c->sort);
    if (fnp_diff_judge(&c->j, &c->d, c->rules, c->nrules, c->runs, c->alpha)) {
        fnp_cli_error("diff", "out of memory");
        return EXIT_TROUBLE;
    }
    if (c->runs)
        note_varying_calls(c);
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
    const struct fnp_diff_judgement *j = &c->j;
    if (j->blind) /* never a silent pass: the time rules could not have broken */
        fnp_cli_error("diff",
                      "%zu and %zu runs cannot show a change among %zu tested function%s at "
                      "alpha %g: their smallest p, %.2g, is %.2g after Holm's correction; %zu "
                      "runs a side would do (fnprof diff --runs-needed)",
                      c->mruns, c->nruns, j->tested, j->tested == 1 ? "" : "s", j->alpha, j->min_p,
                      j->min_p * (double)j->tested, fnp_ranktest_runs_needed(j->alpha, j->tested));
    if (!j->nbreaches)
        return j->blind ? EXIT_TOO_FEW_RUNS : FNP_EXIT_OK;
    /* The rows are on stdout (or in the JSON); this line is for logs that keep stderr. */
    fnp_cli_error("diff", "%zu breach%s of --fail-on rules", j->nbreaches,
                  j->nbreaches == 1 ? "" : "es");
    return EXIT_BROKEN;
}

/* --runs-needed: the table of runs a side against the functions tested. */
static int print_runs_needed(double alpha)
{
    static const size_t ks[] = {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 10000, 100000};
    printf("Runs a side for fnprof diff's rank test to show a change at alpha %g:\n"
           "with m = n runs the smallest p-value is 1/C(2n, n), reached when every NEW run\n"
           "is slower than every BASE run; Holm over k tested functions asks alpha/k of\n"
           "it. These are the fewest runs for which a breach is possible at all: a change\n"
           "near the runs' spread needs more.\n\n",
           alpha);
    printf("%10s %6s %12s %12s\n", "functions", "runs", "smallest p", "alpha/k");
    for (size_t i = 0; i < sizeof(ks) / sizeof(ks[0]); i++) {
        size_t n = fnp_ranktest_runs_needed(alpha, ks[i]);
        printf("%10zu %6zu %12.3g %12.3g\n", ks[i], n, fnp_ranktest_min_p(n, n),
               alpha / (double)ks[i]);
    }
    if (fflush(stdout) || ferror(stdout)) {
        fnp_cli_error("diff", "standard output: %s", strerror(errno));
        return EXIT_TROUBLE;
    }
    return FNP_EXIT_OK;
}

/* --alpha: a decimal fraction strictly between 0 and 1 ("0.05", ".01"). */
static int parse_alpha(const char *s, double *alpha)
{
    size_t n = strspn(s, "0123456789.");
    if (!n || s[n] || strchr(s, '.') != strrchr(s, '.') || n > 32)
        return -1;
    char *end;
    double a = strtod(s, &end);
    if (*end || !(a > 0 && a < 1))
        return -1;
    *alpha = a;
    return 0;
}

/* What the command line said besides the rules, which go straight into the command. */
struct args {
    char **files[2]; /* BASE's (or both, in the two-file form), NEW's after a "--" */
    size_t nfiles[2];
    int json, sort_given, limit_given, alpha_given, runs_needed, help;
};

/*
 * One pass of getopt over argv, its files appended to a->files[side] in order ('-' mode:
 * a file comes back as option 1). Returns FNP_EXIT_OK, or a usage error; *stop gets the
 * index after a "--" that ended the pass (not an option's value that reads "--"), else 0.
 */
static int parse(struct diff_cmd *c, struct args *a, int side, int argc, char **argv, int *stop)
{
    enum { OPT_JSON = 256, OPT_FAIL_ON, OPT_ALPHA, OPT_RUNS_NEEDED };
    static const struct option opts[] = {
        {"sort", required_argument, NULL, 's'},
        {"limit", required_argument, NULL, 'n'},
        {"unit", required_argument, NULL, 'u'},
        {"json", no_argument, NULL, OPT_JSON},
        {"fail-on", required_argument, NULL, OPT_FAIL_ON},
        {"alpha", required_argument, NULL, OPT_ALPHA},
        {"runs-needed", no_argument, NULL, OPT_RUNS_NEEDED},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *last_optarg = NULL;
    int opt, rc = FNP_EXIT_OK;
    optind = 0; /* from the start, state reset: this runs once a side */
    opterr = 0;
    while (rc == FNP_EXIT_OK && (opt = getopt_long(argc, argv, "-:s:n:u:h", opts, NULL)) != -1) {
        last_optarg = optarg;
        switch (opt) {
        case 1:
            a->files[side][a->nfiles[side]++] = optarg;
            break;
        case 's': {
            int m = fnp_diff_metric_parse(optarg);
            if (m < 0)
                rc = fnp_cli_usage_error("diff",
                                         "--sort wants cumtime, tottime, ncalls or name, "
                                         "not '%s'",
                                         optarg);
            c->sort = (unsigned)m;
            a->sort_given = 1;
            break;
        }
        case 'n':
            if (fnp_cli_parse_limit(optarg, &c->limit))
                rc = fnp_cli_usage_error("diff", "--limit wants a count, not '%s'", optarg);
            a->limit_given = 1;
            break;
        case 'u': {
            const struct unit *u = NULL;
            for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
                if (!strcmp(optarg, units[i].word))
                    u = &units[i];
            if (!u)
                rc = fnp_cli_usage_error("diff", "--unit wants s, ms, us or ns, not '%s'", optarg);
            c->unit = u;
            break;
        }
        case OPT_JSON:
            a->json = 1;
            break;
        case OPT_FAIL_ON: {
            char why[256];
            if (fnp_diff_rule_parse(&c->rules[c->nrules], optarg, why, sizeof(why)))
                rc = fnp_cli_usage_error("diff", "bad --fail-on rule '%s': %s", optarg, why);
            else
                c->nrules++;
            break;
        }
        case OPT_ALPHA:
            if (parse_alpha(optarg, &c->alpha))
                rc = fnp_cli_usage_error("diff",
                                         "--alpha wants a fraction between 0 and 1, "
                                         "such as 0.05, not '%s'",
                                         optarg);
            a->alpha_given = 1;
            break;
        case OPT_RUNS_NEEDED:
            a->runs_needed = 1;
            break;
        case 'h':
            a->help = 1;
            return FNP_EXIT_OK;
        default: /* ':' or '?' */
            rc = fnp_cli_option_error("diff", opt, argv);
        }
    }
    *stop = rc == FNP_EXIT_OK && optind > 1 && optind <= argc && !strcmp(argv[optind - 1], "--") &&
                    argv[optind - 1] != last_optarg
                ? optind
                : 0;
    return rc;
}

/* The files of one side, each a side to load; NULL when out of memory. */
static struct side *sides(char **paths, size_t k)
{
    struct side *s = calloc(k + 1, sizeof(*s));
    for (size_t i = 0; s && i < k; i++) {
        s[i].path = paths[i];
        fnp_profile_init(&s[i].p);
    }
    return s;
}

static void free_sides(struct side *s, size_t k)
{
    for (size_t i = 0; s && i < k; i++)
        fnp_profile_free(&s[i].p);
    free(s);
}

/* The files of the command line into c's sides, or a usage error. */
static int choose_sides(struct diff_cmd *c, struct args *a)
{
    if (c->runs) {
        c->mruns = a->nfiles[0];
        c->nruns = a->nfiles[1];
        if (!c->mruns)
            return fnp_cli_usage_error("diff", "BASE's profiles wanted before the --");
        if (!c->nruns)
            return fnp_cli_usage_error("diff", "NEW's profiles wanted after the --");
        c->base = sides(a->files[0], c->mruns);
        c->next = sides(a->files[1], c->nruns);
        return FNP_EXIT_OK;
    }
    /* The two-file form, as it always was: BASE NEW. */
    if (a->nfiles[0] != 2)
        return fnp_cli_usage_error("diff", a->nfiles[0] < 2
                                               ? "two profiles wanted, BASE and NEW"
                                               : "only two profiles, BASE and NEW (several "
                                                 "runs a side: BASE... -- NEW...)");
    if (a->alpha_given)
        fnp_cli_error("diff", "note: --alpha applies to several runs a side "
                              "(BASE... -- NEW...): ignored");
    c->mruns = c->nruns = 1;
    c->base = sides(a->files[0], 1);
    c->next = sides(a->files[0] + 1, 1);
    return FNP_EXIT_OK;
}

int fnp_cmd_diff(int argc, char **argv)
{
    struct diff_cmd c = {.unit = &units[0],
                         .limit = DEFAULT_LIMIT,
                         .sort = FNP_DIFF_CUMTIME,
                         .alpha = DEFAULT_ALPHA};
    struct args a = {0};
    int rc = FNP_EXIT_OK, stop = 0;
    /* At most one rule, or one file, per argument: sized once. */
    c.rules = calloc((size_t)argc + 1, sizeof(*c.rules));
    a.files[0] = calloc((size_t)argc + 1, sizeof(char *));
    a.files[1] = calloc((size_t)argc + 1, sizeof(char *));
    if (!c.rules || !a.files[0] || !a.files[1]) {
        fnp_cli_error("diff", "out of memory");
        rc = EXIT_TROUBLE;
    }
    if (rc == FNP_EXIT_OK)
        rc = parse(&c, &a, 0, argc, argv, &stop);
    if (rc == FNP_EXIT_OK && stop && !a.help) {
        /* After the "--", NEW's files, and options still (the rules often come last); a
         * second "--" makes everything after it a file. argv[stop - 1] stands in for the
         * command's name, which getopt skips. */
        c.runs = 1;
        int second = 0;
        rc = parse(&c, &a, 1, argc - (stop - 1), argv + (stop - 1), &second);
        if (rc == FNP_EXIT_OK && second)
            for (int i = stop - 1 + second; i < argc; i++)
                a.files[1][a.nfiles[1]++] = argv[i];
    }
    if (rc == FNP_EXIT_OK && a.help)
        usage(stdout);
    else if (rc == FNP_EXIT_OK && a.runs_needed)
        rc = a.nfiles[0] || c.runs ? fnp_cli_usage_error("diff", "--runs-needed takes no profiles")
                                   : print_runs_needed(c.alpha);
    else if (rc == FNP_EXIT_OK)
        rc = choose_sides(&c, &a);
    if (rc == FNP_EXIT_OK && !a.help && !a.runs_needed) {
        if (!c.base || !c.next) {
            fnp_cli_error("diff", "out of memory");
            rc = EXIT_TROUBLE;
        } else {
            rc = run(&c, a.json, a.sort_given, a.limit_given);
        }
    }
    fnp_diff_judgement_free(&c.j);
    fnp_diff_free(&c.d);
    free_sides(c.base, c.mruns);
    free_sides(c.next, c.nruns);
    free(c.rules);
    free(a.files[0]);
    free(a.files[1]);
    return rc;
}
