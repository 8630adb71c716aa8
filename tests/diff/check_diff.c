/*
 * fnprof diff's logic (profile/diff.c): rows matched by key, new and gone functions, the
 * order, the --fail-on grammar and when a rule is broken, at its exact boundaries.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../check_run.h"
#include "diff.h"

/* Adds a function with these numbers to p. */
static void add(struct fnp_profile *p, const char *file, uint32_t line, const char *name,
                uint64_t ncalls, double tottime, double cumtime)
{
    struct fnp_key k = {file, line, name};
    int64_t i = fnp_profile_func(p, &k);
    ck_assert_int_ge(i, 0);
    p->funcs[i].st = (struct fnp_stats){ncalls, ncalls, tottime, cumtime};
}

static const struct fnp_diff_row *row_named(const struct fnp_diff *d, const char *name,
                                            uint32_t line)
{
    for (size_t i = 0; i < d->nrows; i++)
        if (!strcmp(d->rows[i].key->name, name) && d->rows[i].key->line == line)
            return &d->rows[i];
    ck_abort_msg("no row %s:%u", name, line);
    return NULL;
}

START_TEST(rows_match_by_whole_key_and_mark_new_and_gone)
{
    struct fnp_profile a, b;
    fnp_profile_init(&a);
    fnp_profile_init(&b);
    add(&a, "x.c", 1, "main", 1, 0.1, 1.0);
    add(&a, "x.c", 5, "f", 10, 0.2, 0.3);
    add(&a, "x.c", 9, "moved", 2, 0.1, 0.1); /* its line changes: gone here, new there */
    add(&a, "y.c", 3, "old", 4, 0.5, 0.5);
    add(&b, "y.c", 7, "fresh", 6, 0.4, 0.4);
    add(&b, "x.c", 11, "moved", 2, 0.1, 0.1);
    add(&b, "x.c", 5, "f", 12, 0.25, 0.35);
    add(&b, "x.c", 1, "main", 1, 0.1, 1.2);
    struct fnp_diff d;
    ck_assert_int_eq(fnp_diff_build(&d, &a, &b), 0);
    ck_assert_uint_eq(d.nrows, 6);
    ck_assert_uint_eq(d.nboth, 2);
    ck_assert_uint_eq(d.nnew, 2);
    ck_assert_uint_eq(d.ngone, 2);
    /* Key order: file, then line, then name. */
    static const char *const order[] = {"main", "f", "moved", "moved", "old", "fresh"};
    for (size_t i = 0; i < 6; i++)
        ck_assert_str_eq(d.rows[i].key->name, order[i]);
    const struct fnp_diff_row *f = row_named(&d, "f", 5);
    ck_assert_uint_eq(f->before.ncalls, 10);
    ck_assert_uint_eq(f->after.ncalls, 12);
    ck_assert(f->ibase != FNP_DIFF_ABSENT && f->inew != FNP_DIFF_ABSENT);
    const struct fnp_diff_row *gone = row_named(&d, "moved", 9);
    ck_assert(gone->inew == FNP_DIFF_ABSENT && gone->ibase != FNP_DIFF_ABSENT);
    ck_assert_uint_eq(gone->after.ncalls, 0);
    const struct fnp_diff_row *fresh = row_named(&d, "fresh", 7);
    ck_assert(fresh->ibase == FNP_DIFF_ABSENT);
    ck_assert_uint_eq(fresh->after.ncalls, 6);
    ck_assert_double_eq(fnp_diff_change(fresh, FNP_DIFF_CUMTIME), 0.4);
    ck_assert_double_eq(fnp_diff_change(row_named(&d, "old", 3), FNP_DIFF_NCALLS), -4);
    fnp_diff_free(&d);
    fnp_diff_free(&d); /* twice: a freed diff is empty */
    fnp_profile_free(&a);
    fnp_profile_free(&b);
}
END_TEST

START_TEST(largest_absolute_change_first_ties_in_key_order)
{
    struct fnp_profile a, b;
    fnp_profile_init(&a);
    fnp_profile_init(&b);
    add(&a, "x.c", 1, "up", 1, 0, 1.0);
    add(&a, "x.c", 2, "down", 1, 0, 3.0);
    add(&a, "x.c", 4, "tie_b", 1, 0, 1.0);
    add(&a, "x.c", 3, "tie_a", 1, 0, 1.0);
    add(&b, "x.c", 1, "up", 1, 0, 2.0);     /* +1 */
    add(&b, "x.c", 2, "down", 1, 0, 0.5);   /* -2.5: a fall counts by its size */
    add(&b, "x.c", 4, "tie_b", 1, 0, 1.5);  /* +0.5 */
    add(&b, "x.c", 3, "tie_a", 1, 0, 0.5);  /* -0.5: same size, earlier line */
    add(&b, "x.c", 9, "fresh", 1, 0, 1.25); /* new: +1.25 */
    struct fnp_diff d;
    ck_assert_int_eq(fnp_diff_build(&d, &a, &b), 0);
    fnp_diff_sort(&d, FNP_DIFF_CUMTIME);
    static const char *const want[] = {"down", "fresh", "up", "tie_a", "tie_b"};
    for (size_t i = 0; i < 5; i++)
        ck_assert_str_eq(d.rows[i].key->name, want[i]);
    fnp_diff_sort(&d, FNP_DIFF_NAME);
    static const char *const by_name[] = {"down", "fresh", "tie_a", "tie_b", "up"};
    for (size_t i = 0; i < 5; i++)
        ck_assert_str_eq(d.rows[i].key->name, by_name[i]);
    fnp_diff_free(&d);
    fnp_profile_free(&a);
    fnp_profile_free(&b);
}
END_TEST

START_TEST(call_counts_order_exactly_beyond_doubles)
{
    /* 2^60 + 1 and 2^60 are one double: an order through doubles would call them equal
     * and fall back to key order (x before y). */
    struct fnp_profile a, b;
    fnp_profile_init(&a);
    fnp_profile_init(&b);
    uint64_t big = UINT64_C(1) << 60;
    add(&a, "x.c", 1, "x", 0, 0, 0);
    add(&a, "x.c", 2, "y", 0, 0, 0);
    add(&b, "x.c", 1, "x", big, 0, 0);
    add(&b, "x.c", 2, "y", big + 1, 0, 0);
    struct fnp_diff d;
    ck_assert_int_eq(fnp_diff_build(&d, &a, &b), 0);
    fnp_diff_sort(&d, FNP_DIFF_NCALLS);
    ck_assert_str_eq(d.rows[0].key->name, "y");
    fnp_diff_free(&d);
    fnp_profile_free(&a);
    fnp_profile_free(&b);
}
END_TEST

START_TEST(percent_is_infinite_for_a_new_value_and_zero_for_nothing)
{
    struct fnp_diff_row r = {0};
    r.ibase = FNP_DIFF_ABSENT;
    r.after.cumtime = 0.5;
    ck_assert(isinf(fnp_diff_percent(&r, FNP_DIFF_CUMTIME)));
    ck_assert_double_eq(fnp_diff_percent(&r, FNP_DIFF_TOTTIME), 0);
    r.ibase = 0;
    r.before.cumtime = 2.0;
    ck_assert_double_eq(fnp_diff_percent(&r, FNP_DIFF_CUMTIME), -75);
    r.before.ncalls = 4;
    ck_assert_double_eq(fnp_diff_percent(&r, FNP_DIFF_NCALLS), -100); /* gone: all of it */
}
END_TEST

static struct fnp_diff_rule parse_ok(const char *text)
{
    struct fnp_diff_rule r;
    char why[256] = "";
    ck_assert_msg(fnp_diff_rule_parse(&r, text, why, sizeof(why)) == 0, "%s: %s", text, why);
    ck_assert_ptr_eq(r.text, text);
    return r;
}

START_TEST(rules_parse_metric_amount_unit_and_floor)
{
    struct fnp_diff_rule r = parse_ok("cumtime>+10%");
    ck_assert_uint_eq(r.metric, FNP_DIFF_CUMTIME);
    ck_assert(r.percent);
    ck_assert_double_eq(r.limit, 10);
    ck_assert_double_eq(r.min, 0);

    r = parse_ok("tottime>+5ms");
    ck_assert_uint_eq(r.metric, FNP_DIFF_TOTTIME);
    ck_assert(!r.percent);
    ck_assert_double_eq(r.limit, 0.005);

    r = parse_ok("cumtime>2.5us,min=1ms"); /* '+' optional */
    ck_assert_double_eq(r.limit, 2.5e-6);
    ck_assert_double_eq(r.min, 0.001);

    r = parse_ok("cumtime>+7"); /* no unit: seconds, the file's own */
    ck_assert_double_eq(r.limit, 7);
    r = parse_ok("cumtime>+5800000000000ns"); /* divided: exactly 5800 s */
    ck_assert_double_eq(r.limit, 5800);
    r = parse_ok("cumtime>+5800000ms");
    ck_assert_double_eq(r.limit, 5800);
    r = parse_ok("tottime>+1.5s,min=250ns");
    ck_assert_double_eq(r.limit, 1.5);
    ck_assert_double_eq(r.min, 250e-9);

    r = parse_ok("ncalls>+100,min=5");
    ck_assert_uint_eq(r.metric, FNP_DIFF_NCALLS);
    ck_assert(!r.percent);
    ck_assert_double_eq(r.limit, 100);
    ck_assert_double_eq(r.min, 5);
    r = parse_ok("ncalls>+12.5%");
    ck_assert(r.percent);
    ck_assert_double_eq(r.limit, 12.5);
}
END_TEST

START_TEST(rules_refuse_what_they_do_not_say)
{
    static const char *const bad[] = {
        "",
        "cumtime",
        "speed>+10%",
        "cumtim>+10%",
        "cumtime<+10%",
        "cumtime>=10%",
        "cumtime>+",
        "cumtime>+-5%",
        "cumtime>-5%",
        "cumtime>+1e3s",
        "cumtime>+inf",
        "cumtime>+nan%",
        "cumtime>+0x10",
        "cumtime>+.5s",
        "cumtime>+5.s",
        "cumtime>+10h",
        "cumtime>+10 ms",
        " cumtime>+10%",
        "cumtime>+10%%",
        "cumtime>+10%,",
        "cumtime>+10%,min=",
        "cumtime>+10%,min=5%",
        "cumtime>+10%,max=5ms",
        "cumtime>+10%,min=5ms,",
        "cumtime>+10%,min=5ms,min=6ms",
        "ncalls>+1.5",
        "ncalls>+5ms",
        "ncalls>+5s",
        "ncalls>+10,min=1ms",
        "ncalls>+10,min=2.5",
        ("cumtime>+"
         "100000000000000000000000000000000000000000000000000000000000000000000000000000000"
         "00000000000000000000000000000000000000000000000000000000000000000000000000000000s"),
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct fnp_diff_rule r;
        char why[256] = "";
        ck_assert_msg(fnp_diff_rule_parse(&r, bad[i], why, sizeof(why)) == -EINVAL,
                      "'%s' was accepted", bad[i]);
        ck_assert_msg(why[0] && !strchr(why, '\n'), "'%s': no one-line reason", bad[i]);
    }
}
END_TEST

static struct fnp_diff_row calls_row(uint64_t before, uint64_t after, int is_new)
{
    struct fnp_diff_row r = {0};
    r.ibase = is_new ? FNP_DIFF_ABSENT : 0;
    r.inew = 0;
    r.before.ncalls = before;
    r.after.ncalls = after;
    return r;
}

static struct fnp_diff_row time_row(double before, double after, int is_new)
{
    struct fnp_diff_row r = {0};
    r.ibase = is_new ? FNP_DIFF_ABSENT : 0;
    r.before.cumtime = r.before.tottime = before;
    r.after.cumtime = r.after.tottime = after;
    return r;
}

START_TEST(rules_break_only_beyond_their_limit)
{
    struct fnp_diff_rule pct = parse_ok("ncalls>+10%");
    struct fnp_diff_row r = calls_row(10, 11, 0);
    ck_assert(!fnp_diff_rule_breaks(&pct, &r)); /* exactly 10%: not more */
    r = calls_row(10, 12, 0);
    ck_assert(fnp_diff_rule_breaks(&pct, &r));
    r = calls_row(1000, 1101, 0);
    ck_assert(fnp_diff_rule_breaks(&pct, &r));
    r = calls_row(1000, 1100, 0);
    ck_assert(!fnp_diff_rule_breaks(&pct, &r));

    struct fnp_diff_rule abs = parse_ok("ncalls>+100");
    r = calls_row(100, 200, 0);
    ck_assert(!fnp_diff_rule_breaks(&abs, &r));
    r = calls_row(100, 201, 0);
    ck_assert(fnp_diff_rule_breaks(&abs, &r));
    r = calls_row(0, 101, 1); /* new, counted from 0 */
    ck_assert(fnp_diff_rule_breaks(&abs, &r));
    r = calls_row(500, 0, 0); /* gone: a fall, never a breach */
    r.inew = FNP_DIFF_ABSENT;
    ck_assert(!fnp_diff_rule_breaks(&abs, &r));

    struct fnp_diff_rule t = parse_ok("tottime>+1ms");
    r = time_row(0.010, 0.0105, 0);
    ck_assert(!fnp_diff_rule_breaks(&t, &r));
    r = time_row(0.010, 0.0115, 0);
    ck_assert(fnp_diff_rule_breaks(&t, &r));
}
END_TEST

START_TEST(a_new_function_breaks_a_percent_rule_from_the_floor_up)
{
    struct fnp_diff_rule bare = parse_ok("cumtime>+10%");
    struct fnp_diff_rule floor = parse_ok("cumtime>+10%,min=5ms");
    struct fnp_diff_row r = time_row(0, 1e-6, 1);
    ck_assert(fnp_diff_rule_breaks(&bare, &r)); /* no floor: any new time is infinite growth */
    ck_assert(!fnp_diff_rule_breaks(&floor, &r));
    r = time_row(0, 0.005, 1);
    ck_assert(fnp_diff_rule_breaks(&floor, &r)); /* at least min */
    r = time_row(0, 0, 1);
    ck_assert(!fnp_diff_rule_breaks(&bare, &r)); /* new but nothing grew */
    r = time_row(0, 0.001, 0);                   /* there before with no time: the same */
    ck_assert(fnp_diff_rule_breaks(&bare, &r));
    /* The floor keeps small functions' noise out of the rule. */
    r = time_row(0.001, 0.003, 0);
    ck_assert(fnp_diff_rule_breaks(&bare, &r));
    ck_assert(!fnp_diff_rule_breaks(&floor, &r));
    r = time_row(0.004, 0.006, 0); /* only the new value reaches min: enough */
    ck_assert(fnp_diff_rule_breaks(&floor, &r));
    struct fnp_diff_rule calls = parse_ok("ncalls>+50%,min=10");
    r = calls_row(3, 5, 0);
    ck_assert(!fnp_diff_rule_breaks(&calls, &r));
    r = calls_row(6, 10, 0);
    ck_assert(fnp_diff_rule_breaks(&calls, &r));
}
END_TEST

/* Several runs a side: times the smallest of a side's runs (absent: 0), calls BASE's
 * largest and NEW's smallest, the runs counted, disagreeing calls flagged. */
START_TEST(runs_take_the_smallest_times_and_bracket_the_calls)
{
    struct fnp_profile p[4];
    for (int i = 0; i < 4; i++)
        fnp_profile_init(&p[i]);
    add(&p[0], "x.c", 1, "f", 10, 0.30, 0.50);
    add(&p[1], "x.c", 1, "f", 12, 0.20, 0.60);
    add(&p[1], "x.c", 9, "sometimes", 1, 0.1, 0.1); /* one BASE run of two */
    add(&p[2], "x.c", 1, "f", 11, 0.40, 0.70);
    add(&p[3], "x.c", 1, "f", 11, 0.45, 0.65);
    add(&p[3], "y.c", 2, "fresh", 3, 0.2, 0.2); /* one NEW run of two */
    const struct fnp_profile *base[] = {&p[0], &p[1]}, *next[] = {&p[2], &p[3]};
    struct fnp_diff d;
    ck_assert_int_eq(fnp_diff_build_runs(&d, base, 2, next, 2), 0);
    ck_assert_uint_eq(d.nrows, 3);
    ck_assert_uint_eq(d.mruns, 2);
    ck_assert_uint_eq(d.nruns, 2);
    const struct fnp_diff_row *f = row_named(&d, "f", 1);
    ck_assert_uint_eq(f->before.ncalls, 12); /* BASE's largest */
    ck_assert_uint_eq(f->after.ncalls, 11);  /* NEW's smallest */
    ck_assert_double_eq(f->before.tottime, 0.20);
    ck_assert_double_eq(f->before.cumtime, 0.50);
    ck_assert_double_eq(f->after.tottime, 0.40);
    ck_assert_double_eq(f->after.cumtime, 0.65);
    ck_assert_int_eq(f->calls_vary, 1); /* BASE's 10 and 12; NEW's agree */
    ck_assert(f->nbase == 2 && f->nnew == 2);
    ck_assert_double_eq(d.samples[f->sample + 1].cumtime, 0.60); /* BASE's second run */
    ck_assert_double_eq(d.samples[f->sample + 3].cumtime, 0.65); /* NEW's second */
    const struct fnp_diff_row *some = row_named(&d, "sometimes", 9);
    ck_assert(some->nbase == 1 && some->inew == FNP_DIFF_ABSENT);
    ck_assert_double_eq(some->before.cumtime, 0); /* absent from a run: its time there is 0 */
    ck_assert_uint_eq(some->before.ncalls, 1);    /* and its largest count 1 */
    ck_assert_int_eq(some->calls_vary, 1);
    const struct fnp_diff_row *fresh = row_named(&d, "fresh", 2);
    ck_assert(fresh->ibase == FNP_DIFF_ABSENT && fresh->nnew == 1);
    ck_assert_uint_eq(fresh->after.ncalls, 0);
    ck_assert_uint_eq(d.nboth, 1);
    ck_assert_uint_eq(d.ngone, 1);
    ck_assert_uint_eq(d.nnew, 1);
    fnp_diff_free(&d);
    for (int i = 0; i < 4; i++)
        fnp_profile_free(&p[i]);
}
END_TEST

/* The runs' profiles, alive while their diff is (it borrows their keys). */
static struct fnp_profile runs_p[16];
static size_t np;

/* k runs a side of f's times, BASE's b[], NEW's n[]; g steady at 1 s. */
static void judge_runs(struct fnp_diff_judgement *j, struct fnp_diff *d, const double *b,
                       const double *n, size_t k, const char *rule_text, double alpha)
{
    const struct fnp_profile *base[8], *next[8];
    for (size_t i = 0; i < 2 * k; i++) {
        fnp_profile_init(&runs_p[i]);
        double v = i < k ? b[i] : n[i - k];
        add(&runs_p[i], "x.c", 1, "f", 1, v, v);
        add(&runs_p[i], "x.c", 5, "g", 1, 1, 1);
        if (i < k)
            base[i] = &runs_p[i];
        else
            next[i - k] = &runs_p[i];
    }
    ck_assert_int_eq(fnp_diff_build_runs(d, base, k, next, k), 0);
    struct fnp_diff_rule rule;
    char why[128];
    ck_assert_int_eq(fnp_diff_rule_parse(&rule, rule_text, why, sizeof(why)), 0);
    ck_assert_int_eq(fnp_diff_judge(j, d, &rule, 1, 1, alpha), 0);
    np = 2 * k;
}

static void judged_free(struct fnp_diff_judgement *j, struct fnp_diff *d)
{
    fnp_diff_judgement_free(j);
    fnp_diff_free(d);
    for (size_t i = 0; i < np; i++)
        fnp_profile_free(&runs_p[i]);
}

START_TEST(runs_break_a_time_rule_only_with_size_and_evidence)
{
    struct fnp_diff d;
    struct fnp_diff_judgement j;
    /* NEW's runs all slower, by 20% and more: p = 1/252, 2 tested (f and g): a breach. */
    double b1[] = {1.0, 1.3, 1.1, 1.6, 1.2}, n1[] = {1.7, 1.8, 1.9, 2.0, 2.5};
    judge_runs(&j, &d, b1, n1, 5, "cumtime>+10%", 0.05);
    ck_assert_uint_eq(j.tested, 2);
    ck_assert_uint_eq(j.nbreaches, 1);
    ck_assert_str_eq(d.rows[j.v[0].row].key->name, "f");
    ck_assert_double_eq_tol(j.v[0].p, 1.0 / 252, 1e-15);
    ck_assert_double_eq_tol(j.v[0].holm, 2.0 / 252, 1e-15);
    ck_assert(!j.blind);
    judged_free(&j, &d);
    /* The smallest grows by 50% but the runs overlap: the size without the evidence. */
    double b2[] = {1.0, 2.0, 1.9, 1.6, 2.2}, n2[] = {1.5, 1.7, 2.1, 2.3, 1.8};
    judge_runs(&j, &d, b2, n2, 5, "cumtime>+10%", 0.05);
    ck_assert_uint_eq(j.nbreaches, 0);
    ck_assert_uint_eq(j.nv, 1);
    ck_assert(j.v[0].p > 0.05);
    judged_free(&j, &d);
    /* Every NEW run slower but by 5%: the evidence without the size. */
    double b3[] = {1.0, 1.01, 1.02, 1.03, 1.04}, n3[] = {1.05, 1.06, 1.07, 1.08, 1.09};
    judge_runs(&j, &d, b3, n3, 5, "cumtime>+10%", 0.05);
    ck_assert_uint_eq(j.nv, 0);
    judged_free(&j, &d);
    /* Below the floor in half the runs: not tested, so Holm is over g alone... and g is
     * at 1 s, below min=1.5s too: nothing tested, nothing blind. */
    double b4[] = {1.0, 1.0, 1.0, 1.0, 1.0}, n4[] = {1.2, 1.2, 1.3, 1.3, 1.4};
    judge_runs(&j, &d, b4, n4, 5, "cumtime>+10%,min=1.5s", 0.05);
    ck_assert_uint_eq(j.tested, 0);
    ck_assert(!j.blind && j.nv == 0);
    judged_free(&j, &d);
    /* 3 a side: p >= 1/20, times 2 after Holm: blind, however large the change. */
    double b5[] = {1.0, 1.0, 1.0}, n5[] = {9.0, 9.0, 9.0};
    judge_runs(&j, &d, b5, n5, 3, "cumtime>+10%", 0.05);
    ck_assert(j.blind && j.nbreaches == 0 && j.tested == 2);
    ck_assert_double_eq_tol(j.min_p, 0.05, 1e-15);
    judged_free(&j, &d);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("diff");
    TCase *tc = tcase_create("diff");
    tcase_add_test(tc, rows_match_by_whole_key_and_mark_new_and_gone);
    tcase_add_test(tc, largest_absolute_change_first_ties_in_key_order);
    tcase_add_test(tc, call_counts_order_exactly_beyond_doubles);
    tcase_add_test(tc, percent_is_infinite_for_a_new_value_and_zero_for_nothing);
    tcase_add_test(tc, rules_parse_metric_amount_unit_and_floor);
    tcase_add_test(tc, rules_refuse_what_they_do_not_say);
    tcase_add_test(tc, rules_break_only_beyond_their_limit);
    tcase_add_test(tc, a_new_function_breaks_a_percent_rule_from_the_floor_up);
    tcase_add_test(tc, runs_take_the_smallest_times_and_bracket_the_calls);
    tcase_add_test(tc, runs_break_a_time_rule_only_with_size_and_evidence);
    suite_add_tcase(s, tc);
    return fnp_check_run(s);
}
/* SPDX-License-Identifier: MIT */
