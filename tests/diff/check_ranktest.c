/*
 * The statistic behind fnprof diff's runs form (profile/ranktest.c): the one-sided
 * rank-sum test's exact p-values against the published tables of the Mann-Whitney U
 * distribution, with ties against a brute-force enumeration of every split, the normal
 * approximation beyond the exact range, the smallest p a number of runs allows, the runs
 * Holm asks for, and Holm's step-down itself.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check_run.h"
#include "diff.h"

static double p_of(const double *base, size_t m, const double *next, size_t n)
{
    struct fnp_ranktest t;
    fnp_ranktest_init(&t);
    double p = -1;
    ck_assert_int_eq(fnp_ranktest_p(&t, base, m, next, n, &p), 0);
    fnp_ranktest_free(&t);
    fnp_ranktest_free(&t); /* twice: a freed workspace is empty */
    return p;
}

#define P(b, n) p_of(b, sizeof(b) / sizeof(b[0]), n, sizeof(n) / sizeof(n[0]))

/* Mann-Whitney's tables (U of BASE over NEW, m = n): P(U <= u) = count / C(2n, n). */
START_TEST(exact_p_matches_the_u_tables)
{
    /* n = m = 3: NEW all above BASE is U = 0, the smallest p of three runs a side. */
    double b3[] = {1, 2, 3}, n3[] = {4, 5, 6};
    ck_assert_double_eq_tol(P(b3, n3), 1.0 / 20, 1e-15);
    /* n = m = 4: U = 1 is 2/70, U = 3 is 7/70 (frequencies 1 1 2 3 ...). */
    double b4a[] = {1, 2, 3, 5}, n4a[] = {4, 6, 7, 8};
    ck_assert_double_eq_tol(P(b4a, n4a), 2.0 / 70, 1e-15);
    double b4b[] = {1, 2, 4, 6}, n4b[] = {3, 5, 7, 8};
    ck_assert_double_eq_tol(P(b4b, n4b), 7.0 / 70, 1e-15);
    /* n = m = 5: U = 0 is 1/252; U = 4 is 12/252 = 0.0476, the table's one-sided 0.05
     * critical value; U = 5 is 19/252 = 0.0754, above it. */
    double b5[] = {1, 2, 3, 4, 5}, n5[] = {6, 7, 8, 9, 10};
    ck_assert_double_eq_tol(P(b5, n5), 1.0 / 252, 1e-15);
    double b5u4[] = {1, 2, 3, 6, 7}, n5u4[] = {4, 5, 8, 9, 10}; /* 6, 7 over 4, 5: U = 4 */
    ck_assert_double_eq_tol(P(b5u4, n5u4), 12.0 / 252, 1e-15);
    double b5u5[] = {1, 2, 3, 6, 8}, n5u5[] = {4, 5, 7, 9, 10};
    ck_assert_double_eq_tol(P(b5u5, n5u5), 19.0 / 252, 1e-15);
    /* Unequal sides: m = 3, n = 5, NEW all above: 1 / C(8, 3) = 1/56. */
    double bu[] = {0.1, 0.2, 0.3}, nu[] = {0.5, 0.4, 0.9, 0.7, 0.6};
    ck_assert_double_eq_tol(P(bu, nu), 1.0 / 56, 1e-15);
    /* The other way round the test says nothing: NEW all below BASE is p = 1. */
    ck_assert_double_eq_tol(P(nu, bu), 1, 1e-15);
    /* The order of the values within a side does not matter. */
    double b3r[] = {3, 1, 2}, n3r[] = {6, 4, 5};
    ck_assert_double_eq_tol(P(b3r, n3r), 1.0 / 20, 1e-15);
}
END_TEST

/* P(W >= w) by listing every choice of which n of the m + n values are NEW's: the
 * definition, with mean ranks for ties, to hold the counting programme to. */
static double brute_p(const double *base, size_t m, const double *next, size_t n)
{
    size_t total = m + n;
    double v[24], rank[24];
    memcpy(v, base, m * sizeof(double));
    memcpy(v + m, next, n * sizeof(double));
    for (size_t i = 0; i < total; i++) {
        double below = 0, equal = 0;
        for (size_t j = 0; j < total; j++) {
            below += v[j] < v[i];
            equal += v[j] == v[i];
        }
        rank[i] = below + (equal + 1) / 2;
    }
    double w = 0;
    for (size_t i = m; i < total; i++)
        w += rank[i];
    unsigned long all = 0, tail = 0;
    for (unsigned long mask = 0; mask < 1ul << total; mask++) {
        if ((size_t)__builtin_popcountl(mask) != n)
            continue;
        double s = 0;
        for (size_t i = 0; i < total; i++)
            if (mask >> i & 1)
                s += rank[i];
        all++;
        tail += s >= w - 1e-9;
    }
    return (double)tail / (double)all;
}

START_TEST(exact_p_with_ties_matches_every_split_counted)
{
    /* Hand-counted: ties at the mean rank (Python's fractions, every split listed). */
    double b1[] = {2, 2, 3}, n1[] = {2, 4, 4};
    ck_assert_double_eq_tol(P(b1, n1), 1.0 / 5, 1e-15);
    double b2[] = {0, 0, 1, 2}, n2[] = {0, 3, 3, 5};
    ck_assert_double_eq_tol(P(b2, n2), 1.0 / 10, 1e-15);
    /* All tied: no evidence. Each side tied within, NEW above: as if untied. */
    double b3[] = {5, 5, 5}, n3[] = {5, 5, 5};
    ck_assert_double_eq_tol(P(b3, n3), 1, 1e-15);
    double b4[] = {1, 1, 1}, n4[] = {2, 2, 2};
    ck_assert_double_eq_tol(P(b4, n4), 1.0 / 20, 1e-15);
    /* A function absent from every BASE run (zeros), present in every NEW one. */
    double b5[] = {0, 0, 0, 0, 0}, n5[] = {1, 2, 3, 4, 5};
    ck_assert_double_eq_tol(P(b5, n5), 1.0 / 252, 1e-15);
    /* Random small samples drawn from few values, so that ties are frequent. */
    unsigned seed = 12345;
    for (int round = 0; round < 400; round++) {
        size_t m = 1 + (size_t)(rand_r(&seed) % 8), n = 1 + (size_t)(rand_r(&seed) % 8);
        double b[8], x[8];
        for (size_t i = 0; i < m; i++)
            b[i] = rand_r(&seed) % 5;
        for (size_t i = 0; i < n; i++)
            x[i] = rand_r(&seed) % 5 + (round % 2) * 0.5 * (rand_r(&seed) % 2);
        double got = p_of(b, m, x, n), want = brute_p(b, m, x, n);
        ck_assert_msg(fabs(got - want) < 1e-12, "round %d (m %zu, n %zu): p %.17g, wanted %.17g",
                      round, m, n, got, want);
    }
}
END_TEST

START_TEST(normal_approximation_beyond_the_exact_range)
{
    /* 21 a side (42 values, past FNP_RANKTEST_EXACT_MAX): NEW all above BASE gives z far
     * out, p tiny; interleaved values give p near one half. */
    double b[21], x[21];
    for (int i = 0; i < 21; i++) {
        b[i] = i;
        x[i] = 100 + i;
    }
    double far = P(b, x);
    ck_assert(far > 0 && far < 1e-6);
    for (int i = 0; i < 21; i++) {
        b[i] = 2 * i;
        x[i] = 2 * i + 1;
    }
    /* W = 21 * 22, its mean 21 * 43 / 2 = 451.5, sd sqrt(21 * 21 * 43 / 12) = 39.75:
     * z = (462 - 451.5 - 0.5) / 39.75 = 0.2516, p = 0.4007. */
    ck_assert_double_eq_tol(P(b, x), 0.40068, 1e-4);
    /* The exact value at the last exact size (20 a side, alternating, W = 20 * 21 = 420):
     * close to the approximation's (mean 410, sd 36.97, z = 0.257, p = 0.3985). */
    double e = p_of(b, 20, x, 20);
    ck_assert_msg(e > 0.38 && e < 0.42, "exact p at 20 a side: %g", e);
}
END_TEST

START_TEST(smallest_p_and_runs_needed_under_holm)
{
    ck_assert_double_eq_tol(fnp_ranktest_min_p(3, 3), 0.05, 1e-15);
    ck_assert_double_eq_tol(fnp_ranktest_min_p(5, 5), 1.0 / 252, 1e-15);
    ck_assert_double_eq_tol(fnp_ranktest_min_p(3, 5), 1.0 / 56, 1e-15);
    ck_assert_double_eq_tol(fnp_ranktest_min_p(1, 1), 0.5, 1e-15);
    /* alpha 0.05: one test needs 3 runs a side (1/20 = 0.05 exactly); 10 tests 5
     * (C(10,5) = 252 >= 200); 30 tests 6 (924 >= 600); 100 tests 7 (3432 >= 2000); 1000
     * tests 9 (C(16, 8) = 12870 < 20000 <= 48620). */
    ck_assert_uint_eq(fnp_ranktest_runs_needed(0.05, 0), 0);
    ck_assert_uint_eq(fnp_ranktest_runs_needed(0.05, 1), 3);
    ck_assert_uint_eq(fnp_ranktest_runs_needed(0.05, 2), 4);
    ck_assert_uint_eq(fnp_ranktest_runs_needed(0.05, 10), 5);
    ck_assert_uint_eq(fnp_ranktest_runs_needed(0.05, 30), 6);
    ck_assert_uint_eq(fnp_ranktest_runs_needed(0.05, 100), 7);
    ck_assert_uint_eq(fnp_ranktest_runs_needed(0.05, 1000), 9);
    ck_assert_uint_eq(fnp_ranktest_runs_needed(0.01, 1), 5); /* 1/70 > 0.01 >= 1/252 */
}
END_TEST

START_TEST(holm_steps_down_and_stops_at_the_first_miss)
{
    /* alpha 0.05 over 4: bounds 0.0125, 0.0167, 0.025, 0.05 in p's order; adjusted p-values
     * 4 * 0.001, max(that, 3 * 0.016), max(that, 2 * 0.03), max(that, 0.04). */
    double p[] = {0.03, 0.001, 0.016, 0.04};
    unsigned char rej[4];
    double adj[4];
    ck_assert_int_eq(fnp_ranktest_holm(p, 4, 0.05, rej, adj), 0);
    ck_assert(rej[1] && rej[2] && !rej[0] && !rej[3]); /* 0.03 > 0.025 stops 0.03, 0.04 */
    ck_assert_double_eq_tol(adj[1], 0.004, 1e-15);
    ck_assert_double_eq_tol(adj[2], 0.048, 1e-15);
    ck_assert_double_eq_tol(adj[0], 0.06, 1e-15);
    ck_assert_double_eq_tol(adj[3], 0.06, 1e-15); /* never below an earlier one */
    /* 0.04 would pass its own bound (0.05), but the step-down stopped before it. */
    double q[] = {0.001, 0.03, 0.04};
    ck_assert_int_eq(fnp_ranktest_holm(q, 3, 0.05, rej, NULL), 0);
    ck_assert(rej[0] && !rej[1] && !rej[2]); /* 0.03 > 0.025 */
    /* Equal to the bound: rejected, despite the rounding of 1/20 and 0.05. */
    double e[] = {fnp_ranktest_min_p(3, 3)};
    ck_assert_int_eq(fnp_ranktest_holm(e, 1, 0.05, rej, adj), 0);
    ck_assert(rej[0]);
    /* Adjusted values stop at 1. */
    double big[] = {0.5, 0.6};
    ck_assert_int_eq(fnp_ranktest_holm(big, 2, 0.05, rej, adj), 0);
    ck_assert(!rej[0] && !rej[1] && adj[0] == 1 && adj[1] == 1);
    /* Nothing to test: nothing rejected, no memory touched. */
    ck_assert_int_eq(fnp_ranktest_holm(q, 0, 0.05, rej, NULL), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ranktest");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, exact_p_matches_the_u_tables);
    tcase_add_test(tc, exact_p_with_ties_matches_every_split_counted);
    tcase_add_test(tc, normal_approximation_beyond_the_exact_range);
    tcase_add_test(tc, smallest_p_and_runs_needed_under_holm);
    tcase_add_test(tc, holm_steps_down_and_stops_at_the_first_miss);
    suite_add_tcase(s, tc);
    return fnp_check_run(s);
}
/* SPDX-License-Identifier: MIT */
