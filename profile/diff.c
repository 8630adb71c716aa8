/* SPDX-License-Identifier: MIT */
/*
 * Two profiles side by side: rows matched by pstats key, their order, and the --fail-on
 * rules of fnprof diff (docs/diff.md). No printing here: toolchain/cmd-diff.c shows the
 * rows, tests/check_diff.c checks the logic.
 *
 * Matching sorts both function tables by key and walks them together: O(n log n) with no
 * hash table of its own, and the rows come out in key order, which is also the order of
 * ties later, so the output never depends on qsort's instability.
 */
#include "diff.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_func_index(const void *a, const void *b, void *p_)
{
    const struct fnp_profile *p = p_;
    return fnp_key_cmp(&p->funcs[*(const uint32_t *)a].key, &p->funcs[*(const uint32_t *)b].key);
}

/* p's function indices in key order; NULL when out of memory. */
static uint32_t *sorted_funcs(const struct fnp_profile *p)
{
    uint32_t *idx = malloc((p->nfuncs + 1) * sizeof(*idx));
    if (!idx)
        return NULL;
    for (size_t i = 0; i < p->nfuncs; i++)
        idx[i] = (uint32_t)i;
    qsort_r(idx, p->nfuncs, sizeof(*idx), cmp_func_index, (void *)p);
    return idx;
}

int fnp_diff_build(struct fnp_diff *d, const struct fnp_profile *base,
                   const struct fnp_profile *next)
{
    memset(d, 0, sizeof(*d));
    uint32_t *a = sorted_funcs(base), *b = sorted_funcs(next);
    /* Both counts are bounded by the readers (32-bit indices), so the sum cannot wrap. */
    d->rows = malloc((base->nfuncs + next->nfuncs + 1) * sizeof(*d->rows));
    if (!a || !b || !d->rows) {
        free(a);
        free(b);
        fnp_diff_free(d);
        return -ENOMEM;
    }
    size_t i = 0, j = 0;
    while (i < base->nfuncs || j < next->nfuncs) {
        struct fnp_diff_row *r = &d->rows[d->nrows++];
        memset(r, 0, sizeof(*r));
        r->ibase = r->inew = FNP_DIFF_ABSENT;
        int c;
        if (i == base->nfuncs)
            c = 1;
        else if (j == next->nfuncs)
            c = -1;
        else
            c = fnp_key_cmp(&base->funcs[a[i]].key, &next->funcs[b[j]].key);
        if (c <= 0) {
            r->ibase = a[i++];
            r->key = &base->funcs[r->ibase].key;
            r->before = base->funcs[r->ibase].st;
        }
        if (c >= 0) {
            r->inew = b[j++];
            if (!r->key)
                r->key = &next->funcs[r->inew].key;
            r->after = next->funcs[r->inew].st;
        }
        if (c < 0)
            d->ngone++;
        else if (c > 0)
            d->nnew++;
        else
            d->nboth++;
    }
    free(a);
    free(b);
    return 0;
}

void fnp_diff_free(struct fnp_diff *d)
{
    if (!d)
        return;
    free(d->rows);
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
