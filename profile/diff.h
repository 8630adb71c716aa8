/* SPDX-License-Identifier: MIT */
/*
 * profile/diff.h: two profiles compared function by function, and the rules that gate CI
 * on the change (fnprof diff, docs/diff.md). Only the fnprof command links it (it sits in
 * fnp_profile_read with the readers): the printing is toolchain/cmd-diff.c's, the matching,
 * ordering and rule logic here, where a unit test reaches it (tests/check_diff.c).
 */
#ifndef FNPROF_DIFF_H
#define FNPROF_DIFF_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"

/* A row's function index on a side where the function did not run. */
#define FNP_DIFF_ABSENT UINT32_MAX

/* What rows are ordered by and rules look at. FNP_DIFF_NAME only orders. */
enum fnp_diff_metric {
    FNP_DIFF_NCALLS,
    FNP_DIFF_TOTTIME,
    FNP_DIFF_CUMTIME,
    FNP_DIFF_NAME,
};

/*
 * One function: its numbers in both profiles, matched by pstats key (file, line, name).
 * With several runs a side (fnp_diff_build_runs), before and after are what the rules
 * compare: each time the smallest of the side's runs (interference only adds time, so the
 * least disturbed run is the best estimate), the calls BASE's largest and NEW's smallest
 * count (a count rule is broken only beyond the runs' own spread). A run the function is
 * absent from counts as zeros. With one run a side they are that run's numbers.
 */
struct fnp_diff_row {
    const struct fnp_key *key; /* borrowed from the first profile holding it, BASE's first */
    uint32_t ibase, inew;      /* function indices in the first run of each side holding it,
                                  or FNP_DIFF_ABSENT where no run of the side has it */
    struct fnp_stats before;   /* all zero where ibase is absent */
    struct fnp_stats after;    /* all zero where inew is absent */
    uint32_t nbase, nnew;      /* how many runs of each side have the function */
    int calls_vary;            /* bit 0: BASE's runs disagree on ncalls; bit 1: NEW's */
    size_t sample;             /* its runs' numbers: d->samples[sample ...], BASE's first */
};

struct fnp_diff {
    struct fnp_diff_row *rows; /* every function of any profile, once */
    size_t nrows;
    size_t nboth, nnew, ngone;
    size_t mruns, nruns;       /* runs of BASE and of NEW */
    struct fnp_stats *samples; /* nrows blocks of mruns + nruns, zeros where absent */
};

/*
 * The rows of base and next, in key order (Python's order of (file, line, name) tuples).
 * Keys point into the profiles, which must outlive d. Returns 0 or -ENOMEM (d then
 * empty). Caller frees with fnp_diff_free.
 */
int fnp_diff_build(struct fnp_diff *d, const struct fnp_profile *base,
                   const struct fnp_profile *next);
/* The same over m runs of BASE and n of NEW; fnp_diff_build is m = n = 1. Returns 0,
 * -EINVAL when a side has no run, or -ENOMEM. */
int fnp_diff_build_runs(struct fnp_diff *d, const struct fnp_profile *const *base, size_t m,
                        const struct fnp_profile *const *next, size_t n);
/* Frees d's rows; accepts a zeroed d. */
void fnp_diff_free(struct fnp_diff *d);

/* A metric of st as a double (ncalls exact below 2^53). */
double fnp_diff_value(const struct fnp_stats *st, unsigned metric);
/* after - before for the metric: a gone function's change is minus its base value. */
double fnp_diff_change(const struct fnp_diff_row *r, unsigned metric);
/* The change in percent of the base value: +INFINITY when the base value is 0 and the
 * new one is not (a new function), 0 when both are 0. */
double fnp_diff_percent(const struct fnp_diff_row *r, unsigned metric);

/* Orders d's rows: by the largest absolute change of metric first (FNP_DIFF_NAME: by
 * name, file, line), ties in key order, so that the order never depends on the sort. */
void fnp_diff_sort(struct fnp_diff *d, unsigned metric);

/*
 * A --fail-on rule: METRIC>+N% or METRIC>+N, then optionally ,min=M (docs/diff.md).
 * Thresholds are in calls or seconds (a count-only profile's "seconds" are calls).
 */
struct fnp_diff_rule {
    const char *text; /* the rule as written: borrowed, for messages */
    unsigned metric;  /* FNP_DIFF_NCALLS, _TOTTIME or _CUMTIME */
    int percent;      /* limit is a percentage of the base value, else an amount */
    double limit;
    double min; /* the floor: the rule holds only where before or after is at least this;
                   0 for none */
};

/* Longest rule text accepted, and longest number in one. */
#define FNP_DIFF_RULE_MAX 128

/* Parses text into *r. Returns 0, or -EINVAL with the reason in why (one line, without
 * the rule itself). */
int fnp_diff_rule_parse(struct fnp_diff_rule *r, const char *text, char *why, size_t whylen);

/*
 * Whether row breaks rule: the new value grew by more than the limit, strictly, and the
 * base or the new value reaches the floor. A percentage rule on a base value of 0 (a new
 * function, or one that took no time before) is broken by any new value above 0 that
 * reaches the floor: an infinite increase. A gone function breaks nothing.
 */
int fnp_diff_rule_breaks(const struct fnp_diff_rule *rule, const struct fnp_diff_row *row);

/*
 * The verdict of the rules on a diff. With one run a side every rule is exact, as above.
 * With several (runs != 0), a time rule is broken only where both hold:
 *  - the size: fnp_diff_rule_breaks on the row (the runs' smallest times, above), and
 *  - the evidence: the one-sided rank-sum test says NEW's runs are slower than BASE's,
 *    with Holm's correction at alpha over every (time rule, function) tested.
 * A function is tested when at least n of all m + n runs, sides ignored, reach the rule's
 * floor (and its amount, for an amount rule) and are above 0: any function that could
 * break the rule passes that (its NEW runs all do), and a choice made without the sides
 * leaves each test exact, so an unchanged program, its runs exchangeable, fails the gate
 * with probability at most alpha. Count rules stay exact (BASE's largest count against
 * NEW's smallest).
 */
struct fnp_diff_verdict {
    size_t rule, row;
    double p;    /* the test's p-value; NAN for an exact rule */
    double holm; /* p adjusted by Holm's correction: a breach needs it <= alpha; NAN for
                    an exact rule */
    int breach;  /* else the size was there and the evidence not: within the spread */
};

struct fnp_diff_judgement {
    struct fnp_diff_verdict *v; /* breaches and near misses, rules in order, rows in d's */
    size_t nv, nbreaches;
    size_t tested; /* (time rule, function) tests in Holm's family */
    double alpha;  /* as given */
    double min_p;  /* the smallest p the runs allow: 1 / C(m + n, n) */
    int blind;     /* tested > 0 and min_p > alpha / tested: no time rule can break */
    double *p[2];  /* per row, tottime's and cumtime's p; NAN where not tested */
};

/* Judges d (in its current order) by the rules. Returns 0 or -ENOMEM. Caller frees with
 * fnp_diff_judgement_free. */
int fnp_diff_judge(struct fnp_diff_judgement *j, const struct fnp_diff *d,
                   const struct fnp_diff_rule *rules, size_t nrules, int runs, double alpha);
void fnp_diff_judgement_free(struct fnp_diff_judgement *j);

/* ---- profile/ranktest.c: the statistic ------------------------------------------ */

/* Up to this many values in all the p-value is exact; beyond, the normal approximation. */
#define FNP_RANKTEST_EXACT_MAX 40

/* Scratch memory kept between tests. */
struct fnp_ranktest {
    struct pooled *pool;
    size_t pool_cap;
    double *count;
    size_t count_cap;
};

void fnp_ranktest_init(struct fnp_ranktest *t);
/* Accepts an initialised or freed t. */
void fnp_ranktest_free(struct fnp_ranktest *t);

/*
 * The one-sided Wilcoxon-Mann-Whitney test that next[0..n) is larger than base[0..m):
 * *p = P(W >= w), W the sum of next's ranks among all m + n values (ties at their mean
 * rank), over the equally likely choices of which values are next's, exact (conditional
 * on the ties) up to FNP_RANKTEST_EXACT_MAX values. *p is 1 when a side is empty. Returns
 * 0 or -ENOMEM.
 */
int fnp_ranktest_p(struct fnp_ranktest *t, const double *base, size_t m, const double *next,
                   size_t n, double *p);
/* The smallest p-value m and n values can give: 1 / C(m + n, n) (no ties, sides apart). */
double fnp_ranktest_min_p(size_t m, size_t n);
/* Runs a side (m = n) for fnp_ranktest_min_p to reach alpha / k: what Holm over k tests
 * asks of the most extreme result; 0 for k = 0, 64 meaning "more than 63". */
size_t fnp_ranktest_runs_needed(double alpha, size_t k);
/*
 * Holm's step-down over p[0..k): the i-th smallest p (from 0) is compared with
 * alpha / (k - i), and rejected while every smaller one was. reject[i] gets 1 for the
 * rejected; adjusted (may be NULL) each one's Holm-adjusted p-value, the largest
 * (k - j) * p_j up to it in p's order, at most 1: rejected exactly when it is at most
 * alpha. Returns 0 or -ENOMEM.
 */
int fnp_ranktest_holm(const double *p, size_t k, double alpha, unsigned char *reject,
                      double *adjusted);
/* p <= bound, allowing for the rounding of both (1/20 against 0.05). */
static inline int fnp_ranktest_within(double p, double bound)
{
    return p <= bound * (1 + 1e-9);
}

/* "ncalls", "tottime", "cumtime", "name". */
const char *fnp_diff_metric_name(unsigned metric);
/* The metric named word, or -1. */
int fnp_diff_metric_parse(const char *word);

#endif
