/* SPDX-License-Identifier: MIT */
/*
 * Two profiles side by side: rows matched by pstats key, their order, and the --fail-on
 * rules of fnprof diff (docs/diff.md). No printing here: toolchain/cmd-diff.c shows the
 * rows, tests/check_diff.c checks the logic.
 *
 * Matching sorts every run's functions together by key, then run: O(n log n) with no hash
 * table of its own, and the rows come out in key order, which is also the order of ties
 * later, so the output never depends on qsort's instability. With several runs a side the
 * rules are judged by the rank test of ranktest.c (fnp_diff_judge).
 */
#include "diff.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One function of one run: sorted by key, then run, the table's rows come out grouped. */
struct entry {
    uint32_t run, func;
};

static const struct fnp_key *entry_key(const struct fnp_profile *const *runs, const struct entry *e)
{
    return &runs[e->run]->funcs[e->func].key;
}

static int cmp_entry(const void *a_, const void *b_, void *runs_)
{
    const struct fnp_profile *const *runs = runs_;
    const struct entry *a = a_, *b = b_;
    int c = fnp_key_cmp(entry_key(runs, a), entry_key(runs, b));
    if (c)
        return c;
    return a->run < b->run ? -1 : a->run > b->run;
}

/* Where the function ran on a side: the smallest times (interference only adds time) and,
 * for the calls, BASE's largest and NEW's smallest count, so that a count rule sees only a
 * change beyond the runs' own spread. One run: its numbers. */
static struct fnp_stats side_value(const struct fnp_stats *runs, size_t k, int largest_calls)
{
    struct fnp_stats v = runs[0];
    for (size_t i = 1; i < k; i++) {
        const struct fnp_stats *r = &runs[i];
        if (largest_calls) {
            v.ncalls = r->ncalls > v.ncalls ? r->ncalls : v.ncalls;
            v.pcalls = r->pcalls > v.pcalls ? r->pcalls : v.pcalls;
        } else {
            v.ncalls = r->ncalls < v.ncalls ? r->ncalls : v.ncalls;
            v.pcalls = r->pcalls < v.pcalls ? r->pcalls : v.pcalls;
        }
        v.tottime = r->tottime < v.tottime ? r->tottime : v.tottime;
        v.cumtime = r->cumtime < v.cumtime ? r->cumtime : v.cumtime;
    }
    return v;
}

static int calls_vary(const struct fnp_stats *runs, size_t k)
{
    for (size_t i = 1; i < k; i++)
        if (runs[i].ncalls != runs[0].ncalls)
            return 1;
    return 0;
}

int fnp_diff_build_runs(struct fnp_diff *d, const struct fnp_profile *const *base, size_t m,
                        const struct fnp_profile *const *next, size_t n)
{
    memset(d, 0, sizeof(*d));
    size_t nruns = m + n, total = 0;
    if (!m || !n || nruns > UINT32_MAX)
        return -EINVAL;
    const struct fnp_profile **runs = malloc(nruns * sizeof(*runs));
    if (!runs)
        return -ENOMEM;
    for (size_t r = 0; r < nruns; r++) {
        runs[r] = r < m ? base[r] : next[r - m];
        total += runs[r]->nfuncs; /* each below 2^32 (the readers' bound) */
    }
    struct entry *e = malloc((total + 1) * sizeof(*e));
    unsigned char *starts = malloc(total + 1); /* where a function's group begins */
    if (!e || !starts) {
        free(runs);
        free(e);
        free(starts);
        return -ENOMEM;
    }
    size_t k = 0;
    for (size_t r = 0; r < nruns; r++)
        for (size_t i = 0; i < runs[r]->nfuncs; i++)
            e[k++] = (struct entry){(uint32_t)r, (uint32_t)i};
    qsort_r(e, total, sizeof(*e), cmp_entry, (void *)runs);
    size_t groups = 0;
    for (size_t i = 0; i < total; i++) {
        starts[i] = i == 0 || fnp_key_cmp(entry_key(runs, &e[i - 1]), entry_key(runs, &e[i])) != 0;
        groups += starts[i];
    }
    d->rows = malloc((groups + 1) * sizeof(*d->rows));
    if (groups && nruns > SIZE_MAX / sizeof(*d->samples) / groups)
        d->samples = NULL;
    else
        d->samples = calloc(groups * nruns + 1, sizeof(*d->samples));
    if (!d->rows || !d->samples) {
        free(runs);
        free(e);
        free(starts);
        fnp_diff_free(d);
        return -ENOMEM;
    }
    d->mruns = m;
    d->nruns = n;
    for (size_t i = 0; i < total;) {
        struct fnp_diff_row *r = &d->rows[d->nrows];
        memset(r, 0, sizeof(*r));
        r->ibase = r->inew = FNP_DIFF_ABSENT;
        r->sample = d->nrows * nruns;
        r->key = entry_key(runs, &e[i]);
        struct fnp_stats *st = d->samples + r->sample;
        size_t j = i;
        for (; j < total && (j == i || !starts[j]); j++) {
            uint32_t run = e[j].run;
            st[run] = runs[run]->funcs[e[j].func].st;
            if (run < m) {
                if (!r->nbase++)
                    r->ibase = e[j].func;
            } else if (!r->nnew++) {
                r->inew = e[j].func;
            }
        }
        if (r->nbase)
            r->before = side_value(st, m, 1);
        if (r->nnew)
            r->after = side_value(st + m, n, 0);
        r->calls_vary = calls_vary(st, m) | calls_vary(st + m, n) << 1;
        if (!r->nbase)
            d->nnew++;
        else if (!r->nnew)
            d->ngone++;
        else
            d->nboth++;
        d->nrows++;
        i = j;
    }
    free(runs);
    free(e);
    free(starts);
    return 0;
}

int fnp_diff_build(struct fnp_diff *d, const struct fnp_profile *base,
                   const struct fnp_profile *next)
{
    return fnp_diff_build_runs(d, &base, 1, &next, 1);
}

void fnp_diff_free(struct fnp_diff *d)
{
    if (!d)
        return;
    free(d->rows);
    free(d->samples);
    memset(d, 0, sizeof(*d));
}

double fnp_diff_value(const struct fnp_stats *st, unsigned metric)
{
    switch (metric) {
    case FNP_DIFF_NCALLS:
        return (double)st->ncalls;
    case FNP_DIFF_TOTTIME:
        return st->tottime;
    case FNP_DIFF_CUMTIME:
        return st->cumtime;
    default:
        return 0;
    }
}

/* How far apart a row's call counts are, exactly: no double holds every uint64_t. */
static uint64_t calls_gap(const struct fnp_diff_row *r)
{
    return r->after.ncalls > r->before.ncalls ? r->after.ncalls - r->before.ncalls
                                              : r->before.ncalls - r->after.ncalls;
}

double fnp_diff_change(const struct fnp_diff_row *r, unsigned metric)
{
    if (metric == FNP_DIFF_NCALLS) /* exact: the counts' difference, then one rounding */
        return r->after.ncalls >= r->before.ncalls ? (double)calls_gap(r) : -(double)calls_gap(r);
    return fnp_diff_value(&r->after, metric) - fnp_diff_value(&r->before, metric);
}

double fnp_diff_percent(const struct fnp_diff_row *r, unsigned metric)
{
    double before = fnp_diff_value(&r->before, metric);
    double change = fnp_diff_change(r, metric);
    if (before == 0)
        return change > 0 ? INFINITY : 0;
    return change / before * 100;
}

/* The magnitude of a row's change, ncalls as an exact integer. */
static int cmp_change(const struct fnp_diff_row *x, const struct fnp_diff_row *y, unsigned metric)
{
    if (metric == FNP_DIFF_NCALLS) {
        uint64_t dx = calls_gap(x), dy = calls_gap(y);
        return dx < dy ? 1 : dx > dy ? -1 : 0;
    }
    double dx = fabs(fnp_diff_change(x, metric)), dy = fabs(fnp_diff_change(y, metric));
    return dx < dy ? 1 : dx > dy ? -1 : 0;
}

static int cmp_rows(const void *a, const void *b, void *metric_)
{
    const struct fnp_diff_row *x = a, *y = b;
    unsigned metric = *(const unsigned *)metric_;
    int c;
    if (metric == FNP_DIFF_NAME)
        c = strcmp(x->key->name, y->key->name);
    else
        c = cmp_change(x, y, metric);
    /* Keys are unique across rows, so this settles every tie. */
    return c ? c : fnp_key_cmp(x->key, y->key);
}

void fnp_diff_sort(struct fnp_diff *d, unsigned metric)
{
    qsort_r(d->rows, d->nrows, sizeof(*d->rows), cmp_rows, &metric);
}

static const char *const metric_names[] = {"ncalls", "tottime", "cumtime", "name"};

const char *fnp_diff_metric_name(unsigned metric)
{
    return metric < 4 ? metric_names[metric] : "?";
}

int fnp_diff_metric_parse(const char *word)
{
    for (int i = 0; i < 4; i++)
        if (!strcmp(word, metric_names[i]))
            return i;
    return -1;
}

__attribute__((format(printf, 3, 4))) static int fail(char *why, size_t whylen, const char *fmt,
                                                      ...)
{
    if (why && whylen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, whylen, fmt, ap);
        va_end(ap);
    }
    return -EINVAL;
}

/* What follows a number in a rule. */
enum suffix { SUFFIX_NONE, SUFFIX_PERCENT, SUFFIX_TIME };

/*
 * A number at *s: digits, then for fractions a point and digits (integer: only before
 * '%'). No sign, exponent, hex,
 * "inf" or "nan": what strtod would also take is refused, so that a typo is an error
 * rather than a threshold nobody meant. Then its suffix: '%', a time unit (the value is
 * returned in seconds) or nothing.
 */
static int parse_amount(const char **s, int integer, double *value, enum suffix *suffix, char *why,
                        size_t whylen)
{
    static const struct {
        const char *word;
        double per_second; /* divided by: exact for whole amounts (5000ms is 5 s) */
    } units[] = {{"ms", 1e3}, {"us", 1e6}, {"ns", 1e9}, {"s", 1}};
    const char *p = *s;
    int fraction = 0;
    size_t n = strspn(p, "0123456789");
    if (!n)
        return fail(why, whylen, "a number was expected at '%s'", p);
    if (p[n] == '.') {
        size_t f = strspn(p + n + 1, "0123456789");
        fraction = 1;
        if (!f)
            return fail(why, whylen, "digits were expected after the point in '%s'", p);
        n += 1 + f;
    }
    char num[FNP_DIFF_RULE_MAX + 1];
    if (n >= sizeof(num))
        return fail(why, whylen, "number too long");
    memcpy(num, p, n);
    num[n] = '\0';
    *value = strtod(num, NULL);
    p += n;
    *suffix = SUFFIX_NONE;
    if (*p == '%') {
        *suffix = SUFFIX_PERCENT;
        p++;
    } else {
        /* ms, us, ns before s: the first match wins. */
        for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
            size_t len = strlen(units[i].word);
            if (!strncmp(p, units[i].word, len)) {
                *value /= units[i].per_second;
                *suffix = SUFFIX_TIME;
                p += len;
                break;
            }
        }
    }
    /* A percentage of calls may have a fraction (12.5%), a number of calls not. */
    if (integer && fraction && *suffix != SUFFIX_PERCENT)
        return fail(why, whylen, "ncalls takes a whole number of calls");
    *s = p;
    return 0;
}

int fnp_diff_rule_parse(struct fnp_diff_rule *r, const char *text, char *why, size_t whylen)
{
    memset(r, 0, sizeof(*r));
    r->text = text;
    if (strlen(text) > FNP_DIFF_RULE_MAX)
        return fail(why, whylen, "longer than %d characters", FNP_DIFF_RULE_MAX);
    size_t mlen = strcspn(text, "><=,");
    int metric = -1;
    for (int i = FNP_DIFF_NCALLS; i <= FNP_DIFF_CUMTIME; i++)
        if (mlen == strlen(metric_names[i]) && !strncmp(text, metric_names[i], mlen))
            metric = i;
    if (metric < 0)
        return fail(why, whylen, "the metric must be ncalls, tottime or cumtime");
    r->metric = (unsigned)metric;
    const char *p = text + mlen;
    if (*p != '>')
        return fail(why, whylen, "'>' must follow the metric (a rule limits growth)");
    p++;
    if (*p == '+') /* "grows by more than": optional, as every rule is about growth */
        p++;
    int calls = r->metric == FNP_DIFF_NCALLS;
    enum suffix suffix;
    int rc = parse_amount(&p, calls, &r->limit, &suffix, why, whylen);
    if (rc)
        return rc;
    if (calls && suffix == SUFFIX_TIME)
        return fail(why, whylen, "ncalls takes a number of calls or a percentage, not a time");
    r->percent = suffix == SUFFIX_PERCENT;
    if (!strncmp(p, ",min=", 5)) {
        p += 5;
        rc = parse_amount(&p, calls, &r->min, &suffix, why, whylen);
        if (rc)
            return rc;
        if (suffix == SUFFIX_PERCENT)
            return fail(why, whylen, "min= is a value, not a percentage");
        if (calls && suffix == SUFFIX_TIME)
            return fail(why, whylen, "min= of an ncalls rule is a number of calls, not a time");
    }
    if (*p)
        return fail(why, whylen, "unexpected '%s' (a rule is METRIC>+N[%%|s|ms|us|ns][,min=M])", p);
    return 0;
}

int fnp_diff_rule_breaks(const struct fnp_diff_rule *rule, const struct fnp_diff_row *row)
{
    double before = fnp_diff_value(&row->before, rule->metric);
    double after = fnp_diff_value(&row->after, rule->metric);
    double change = fnp_diff_change(row, rule->metric);
    if (change <= 0)
        return 0;
    if (before < rule->min && after < rule->min)
        return 0;
    /* change / before > limit / 100, multiplied out: no division by a zero base, and
     * whole counts stay exact (10 -> 11 calls is 10%, not 10.000000000000002%). */
    if (rule->percent)
        return change * 100 > rule->limit * before;
    return change > rule->limit;
}

/* ---- the verdict --------------------------------------------------------------- */

static int time_rule(const struct fnp_diff_rule *r)
{
    return r->metric == FNP_DIFF_TOTTIME || r->metric == FNP_DIFF_CUMTIME;
}

static int cmp_double_desc(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x > y ? -1 : x < y;
}

/*
 * Whether row is in the rule's family: its n-th largest value among all runs, sides
 * ignored, is above 0, reaches the floor and, for an amount, exceeds it. A breach needs
 * NEW's smallest value to do all three, and then NEW's n values do: nothing that could
 * break the rule is left out, and the choice does not look at the sides.
 */
static int in_family(const struct fnp_diff *d, const struct fnp_diff_row *row,
                     const struct fnp_diff_rule *rule, double *scratch)
{
    size_t all = d->mruns + d->nruns;
    for (size_t i = 0; i < all; i++)
        scratch[i] = fnp_diff_value(&d->samples[row->sample + i], rule->metric);
    qsort(scratch, all, sizeof(*scratch), cmp_double_desc);
    double t = scratch[d->nruns - 1];
    return t > 0 && t >= rule->min && (rule->percent || t > rule->limit);
}

static int add_verdict(struct fnp_diff_judgement *j, struct fnp_diff_verdict v)
{
    if ((j->nv & (j->nv + 1)) == 0 || !j->v) { /* sizes 1, 3, 7, ...: doubled when full */
        struct fnp_diff_verdict *nv = realloc(j->v, (2 * j->nv + 1) * sizeof(*nv));
        if (!nv)
            return -ENOMEM;
        j->v = nv;
    }
    j->v[j->nv++] = v;
    j->nbreaches += v.breach != 0;
    return 0;
}

/* The exact rules of one run a side, and the count rules of several. */
static int judge_exact(struct fnp_diff_judgement *j, const struct fnp_diff *d,
                       const struct fnp_diff_rule *rule, size_t ri)
{
    for (size_t r = 0; r < d->nrows; r++)
        if (fnp_diff_rule_breaks(rule, &d->rows[r]) &&
            add_verdict(j, (struct fnp_diff_verdict){ri, r, NAN, NAN, 1}))
            return -ENOMEM;
    return 0;
}

struct test {
    size_t rule, row;
};

int fnp_diff_judge(struct fnp_diff_judgement *j, const struct fnp_diff *d,
                   const struct fnp_diff_rule *rules, size_t nrules, int runs, double alpha)
{
    memset(j, 0, sizeof(*j));
    j->alpha = alpha;
    j->min_p = runs ? fnp_ranktest_min_p(d->mruns, d->nruns) : NAN;
    if (!runs) {
        for (size_t i = 0; i < nrules; i++)
            if (judge_exact(j, d, &rules[i], i))
                goto oom;
        return 0;
    }
    size_t all = d->mruns + d->nruns;
    struct fnp_ranktest rt;
    fnp_ranktest_init(&rt);
    double *scratch = malloc((2 * all + 1) * sizeof(*scratch));
    double *tp = NULL, *adjusted = NULL;
    struct test *tests = NULL;
    unsigned char *reject = NULL;
    size_t ntests = 0, ntime = 0;
    int rc = -ENOMEM;
    for (size_t i = 0; i < nrules; i++)
        ntime += time_rule(&rules[i]);
    if (ntime && d->nrows > SIZE_MAX / sizeof(*tests) / ntime)
        goto oom_test;
    j->p[0] = malloc((d->nrows + 1) * sizeof(double));
    j->p[1] = malloc((d->nrows + 1) * sizeof(double));
    tests = malloc((ntime * d->nrows + 1) * sizeof(*tests));
    if (!scratch || !j->p[0] || !j->p[1] || !tests)
        goto oom_test;
    for (size_t r = 0; r < d->nrows; r++)
        j->p[0][r] = j->p[1][r] = NAN;
    for (size_t i = 0; i < nrules; i++) {
        if (!time_rule(&rules[i]))
            continue;
        unsigned m = rules[i].metric;
        double *p = j->p[m == FNP_DIFF_CUMTIME];
        for (size_t r = 0; r < d->nrows; r++) {
            const struct fnp_diff_row *row = &d->rows[r];
            if (!in_family(d, row, &rules[i], scratch))
                continue;
            if (isnan(p[r])) {
                for (size_t k = 0; k < all; k++)
                    scratch[k] = fnp_diff_value(&d->samples[row->sample + k], m);
                if (fnp_ranktest_p(&rt, scratch, d->mruns, scratch + d->mruns, d->nruns, &p[r]))
                    goto oom_test;
            }
            tests[ntests++] = (struct test){i, r};
        }
    }
    j->tested = ntests;
    j->blind = ntests && !fnp_ranktest_within(j->min_p, alpha / (double)ntests);
    tp = malloc((ntests + 1) * sizeof(*tp));
    adjusted = malloc((ntests + 1) * sizeof(*adjusted));
    reject = malloc(ntests + 1);
    if (!tp || !adjusted || !reject)
        goto oom_test;
    for (size_t t = 0; t < ntests; t++)
        tp[t] = j->p[rules[tests[t].rule].metric == FNP_DIFF_CUMTIME][tests[t].row];
    if (fnp_ranktest_holm(tp, ntests, alpha, reject, adjusted))
        goto oom_test;
    /* Rules in order, each with its rows in d's: tests were listed in that order. */
    size_t t = 0;
    for (size_t i = 0; i < nrules; i++) {
        if (!time_rule(&rules[i])) {
            if (judge_exact(j, d, &rules[i], i))
                goto oom_test;
            continue;
        }
        for (size_t r = 0; r < d->nrows; r++) {
            int tested = t < ntests && tests[t].rule == i && tests[t].row == r;
            /* A row that breaks the size is always tested (in_family): the check is for
             * safety, never a silent pass of an untested row as a breach. */
            if (fnp_diff_rule_breaks(&rules[i], &d->rows[r]) && tested &&
                add_verdict(j, (struct fnp_diff_verdict){i, r, tp[t], adjusted[t], reject[t]}))
                goto oom_test;
            t += tested;
        }
    }
    rc = 0;
oom_test: /* with rc still -ENOMEM */
    fnp_ranktest_free(&rt);
    free(scratch);
    free(tests);
    free(tp);
    free(adjusted);
    free(reject);
    if (!rc)
        return 0;
oom:
    fnp_diff_judgement_free(j);
    return -ENOMEM;
}

void fnp_diff_judgement_free(struct fnp_diff_judgement *j)
{
    if (!j)
        return;
    free(j->v);
    free(j->p[0]);
    free(j->p[1]);
    memset(j, 0, sizeof(*j));
}
