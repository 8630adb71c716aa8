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

/* One function: its numbers in both profiles, matched by pstats key (file, line, name). */
struct fnp_diff_row {
    const struct fnp_key *key; /* borrowed from the base profile, else the new one */
    uint32_t ibase, inew;      /* function indices, or FNP_DIFF_ABSENT */
    struct fnp_stats before;   /* all zero where ibase is absent */
    struct fnp_stats after;    /* all zero where inew is absent */
};

struct fnp_diff {
    struct fnp_diff_row *rows; /* every function of either profile, once */
    size_t nrows;
    size_t nboth, nnew, ngone;
};

/*
 * The rows of base and next, in key order (Python's order of (file, line, name) tuples).
 * Keys point into the profiles, which must outlive d. Returns 0 or -ENOMEM (d then
 * empty). Caller frees with fnp_diff_free.
 */
int fnp_diff_build(struct fnp_diff *d, const struct fnp_profile *base,
                   const struct fnp_profile *next);
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

/* "ncalls", "tottime", "cumtime", "name". */
const char *fnp_diff_metric_name(unsigned metric);
/* The metric named word, or -1. */
int fnp_diff_metric_parse(const char *word);

#endif
