/* The cProfile model on hand-built calling-context forests, and profile merging. */
#include <check.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "profile.h"

static uint32_t fn(struct fnp_profile *p, const char *name)
{
    struct fnp_key k = {"/src/x.c", 7, name};
    int64_t i = fnp_profile_func(p, &k);
    ck_assert_int_ge(i, 0);
    return (uint32_t)i;
}

static const struct fnp_stats *edge(const struct fnp_profile *p, uint32_t a, uint32_t b)
{
    int64_t e = fnp_profile_find_edge(p, a, b);
    ck_assert_int_ge(e, 0);
    return &p->edges[e].st;
}

START_TEST(same_key_is_one_function)
{
    struct fnp_profile p;
    fnp_profile_init(&p);
    uint32_t a = fn(&p, "f");
    struct fnp_key other_line = {"/src/x.c", 8, "f"}, other_file = {"/src/y.c", 7, "f"};
    ck_assert_uint_eq(fn(&p, "f"), a);
    ck_assert_int_ne(fnp_profile_func(&p, &other_line), a);
    ck_assert_int_ne(fnp_profile_func(&p, &other_file), a);
    ck_assert_uint_eq(p.nfuncs, 3);
    fnp_profile_free(&p);
}
END_TEST

START_TEST(many_functions_and_edges_survive_rehashing)
{
    struct fnp_profile p;
    fnp_profile_init(&p);
    char name[32];
    for (int i = 0; i < 20000; i++) {
        snprintf(name, sizeof(name), "f%d", i);
        ck_assert_uint_eq(fn(&p, name), (uint32_t)i);
    }
    for (uint32_t i = 0; i < 20000; i++)
        ck_assert_int_eq(fnp_profile_edge(&p, i, (i * 31) % 20000), i);
    for (uint32_t i = 0; i < 20000; i++) {
        snprintf(name, sizeof(name), "f%u", i);
        ck_assert_uint_eq(fn(&p, name), i);
        ck_assert_int_eq(fnp_profile_find_edge(&p, i, (i * 31) % 20000), i);
    }
    ck_assert_int_eq(fnp_profile_find_edge(&p, 1, 2), -1);
    ck_assert_int_eq(fnp_profile_edge(&p, 1, 20000), -EINVAL);
    fnp_profile_free(&p);
}
END_TEST

/* a -> b -> a -> b: the edge a->b is open twice on the deepest path. */
START_TEST(edge_recursion_counts_outermost_pair_only)
{
    struct fnp_profile p;
    fnp_profile_init(&p);
    uint32_t a = fn(&p, "a"), b = fn(&p, "b");
    struct fnp_tree_node t[] = {
        {a, FNP_NO_PARENT, 1, 100, 0, 0, 0},
        {b, 0, 2, 80, 0, 0, 0},
        {a, 1, 3, 50, 0, 0, 0},
        {b, 2, 4, 20, 0, 0, 0},
    };
    ck_assert_int_eq(fnp_profile_add_tree(&p, t, 4, 0.5), 0);
    ck_assert_uint_eq(p.funcs[a].st.ncalls, 4);
    ck_assert_uint_eq(p.funcs[a].st.pcalls, 1);
    ck_assert_double_eq(p.funcs[a].st.tottime, (20 + 30) * 0.5);
    ck_assert_double_eq(p.funcs[a].st.cumtime, 100 * 0.5);
    ck_assert_uint_eq(p.funcs[b].st.ncalls, 6);
    ck_assert_uint_eq(p.funcs[b].st.pcalls, 2);
    ck_assert_double_eq(p.funcs[b].st.cumtime, 80 * 0.5);
    const struct fnp_stats *ab = edge(&p, a, b), *ba = edge(&p, b, a);
    ck_assert_uint_eq(ab->ncalls, 6);
    ck_assert_uint_eq(ab->pcalls, 2);
    ck_assert_double_eq(ab->cumtime, 40);
    ck_assert_double_eq(ab->tottime, (30 + 20) * 0.5);
    ck_assert_uint_eq(ba->ncalls, 3);
    ck_assert_uint_eq(ba->pcalls, 3);
    ck_assert_double_eq(ba->cumtime, 25);
    fnp_profile_free(&p);
}
END_TEST

/* A function reached both inside a recursion of another function and directly. */
START_TEST(siblings_do_not_nest)
{
    struct fnp_profile p;
    fnp_profile_init(&p);
    uint32_t m = fn(&p, "main"), f = fn(&p, "f"), g = fn(&p, "g");
    struct fnp_tree_node t[] = {
        {m, FNP_NO_PARENT, 1, 10, 0, 0, 0},
        {f, 0, 1, 6, 0, 0, 0},
        {f, 1, 1, 4, 0, 0, 0},
        {g, 2, 1, 1, 0, 0, 0},
        {g, 0, 2, 3, 0, 0, 0},
        {f, 4, 1, 2, 0, 0, 0},
    };
    ck_assert_int_eq(fnp_profile_add_tree(&p, t, 6, 1.0), 0);
    ck_assert_uint_eq(p.funcs[f].st.ncalls, 3);
    ck_assert_uint_eq(p.funcs[f].st.pcalls, 2); /* main->f and main->g->f are outermost */
    ck_assert_double_eq(p.funcs[f].st.cumtime, 8);
    ck_assert_uint_eq(p.funcs[g].st.pcalls, 3);
    ck_assert_uint_eq(edge(&p, f, f)->pcalls, 1);
    ck_assert_uint_eq(edge(&p, g, f)->pcalls, 1);
    ck_assert_double_eq(p.funcs[m].st.tottime, 1);
    fnp_profile_free(&p);
}
END_TEST

START_TEST(bad_forest_is_rejected)
{
    struct fnp_profile p;
    fnp_profile_init(&p);
    uint32_t a = fn(&p, "a");
    struct fnp_tree_node child_first[] = {{a, 1, 1, 1, 0, 0, 0}, {a, FNP_NO_PARENT, 1, 1, 0, 0, 0}};
    struct fnp_tree_node bad_func[] = {{a + 5, FNP_NO_PARENT, 1, 1, 0, 0, 0}};
    ck_assert_int_eq(fnp_profile_add_tree(&p, child_first, 2, 1), -EINVAL);
    ck_assert_int_eq(fnp_profile_add_tree(&p, bad_func, 1, 1), -EINVAL);
    fnp_profile_free(&p);
}
END_TEST

START_TEST(negative_self_time_reads_as_zero)
{
    struct fnp_profile p;
    fnp_profile_init(&p);
    uint32_t a = fn(&p, "a"), b = fn(&p, "b");
    struct fnp_tree_node t[] = {{a, FNP_NO_PARENT, 1, 5, 0, 0, 0}, {b, 0, 1, 7, 0, 0, 0}};
    ck_assert_int_eq(fnp_profile_add_tree(&p, t, 2, 1), 0);
    ck_assert_double_eq(p.funcs[a].st.tottime, 0);
    ck_assert_double_eq(p.funcs[a].st.cumtime, 5);
    fnp_profile_free(&p);
}
END_TEST

START_TEST(merge_sums_functions_and_edges)
{
    struct fnp_profile x, y;
    fnp_profile_init(&x);
    fnp_profile_init(&y);
    uint32_t xa = fn(&x, "a"), xb = fn(&x, "b");
    uint32_t yc = fn(&y, "c"), yb = fn(&y, "b"), ya = fn(&y, "a");
    struct fnp_tree_node tx[] = {{xa, FNP_NO_PARENT, 1, 4, 0, 0, 0}, {xb, 0, 2, 2, 0, 0, 0}};
    struct fnp_tree_node ty[] = {
        {yc, FNP_NO_PARENT, 1, 9, 0, 0, 0}, {ya, 0, 1, 5, 0, 0, 0}, {yb, 1, 3, 3, 0, 0, 0}};
    ck_assert_int_eq(fnp_profile_add_tree(&x, tx, 2, 1), 0);
    ck_assert_int_eq(fnp_profile_add_tree(&y, ty, 3, 1), 0);
    ck_assert_int_eq(fnp_profile_merge(&x, &y), 0);
    ck_assert_uint_eq(x.nfuncs, 3);
    ck_assert_uint_eq(x.funcs[xb].st.ncalls, 5);
    ck_assert_double_eq(x.funcs[xa].st.cumtime, 9);
    ck_assert_uint_eq(edge(&x, xa, xb)->ncalls, 5);
    ck_assert_uint_eq(x.nedges, 2);
    fnp_profile_free(&x);
    fnp_profile_free(&y);
}
END_TEST

START_TEST(merge_saturates_counts_at_2_64_and_times_at_dbl_max)
{
    struct fnp_profile x, y;
    fnp_profile_init(&x);
    fnp_profile_init(&y);
    uint32_t xa = fn(&x, "a"), xb = fn(&x, "b");
    uint32_t ya = fn(&y, "a"), yb = fn(&y, "b");
    int64_t ex = fnp_profile_edge(&x, xa, xb), ey = fnp_profile_edge(&y, ya, yb);
    ck_assert_int_ge(ex, 0);
    ck_assert_int_ge(ey, 0);
    struct fnp_stats big = {UINT64_MAX - 1, UINT64_MAX, DBL_MAX / 4 * 3, DBL_MAX};
    struct fnp_stats two = {2, 1, DBL_MAX / 2, 1.0};
    x.funcs[xa].st = x.edges[ex].st = big;
    y.funcs[ya].st = y.edges[ey].st = two;
    ck_assert_int_eq(fnp_profile_merge(&x, &y), 0);
    const struct fnp_stats *sums[] = {&x.funcs[xa].st, &x.edges[ex].st};
    for (size_t i = 0; i < 2; i++) {
        /* wrapping would give 0 calls (and UINT64_MAX - 1 + 2 = 0); adding past DBL_MAX, inf */
        ck_assert_uint_eq(sums[i]->ncalls, UINT64_MAX);
        ck_assert_uint_eq(sums[i]->pcalls, UINT64_MAX);
        ck_assert(isfinite(sums[i]->tottime));
        ck_assert_double_eq(sums[i]->tottime, DBL_MAX);
        ck_assert_double_eq(sums[i]->cumtime, DBL_MAX);
    }
    fnp_profile_free(&x);
    fnp_profile_free(&y);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("model");
    TCase *tc = tcase_create("model");
    tcase_add_test(tc, same_key_is_one_function);
    tcase_add_test(tc, many_functions_and_edges_survive_rehashing);
    tcase_add_test(tc, edge_recursion_counts_outermost_pair_only);
    tcase_add_test(tc, siblings_do_not_nest);
    tcase_add_test(tc, bad_forest_is_rejected);
    tcase_add_test(tc, negative_self_time_reads_as_zero);
    tcase_add_test(tc, merge_sums_functions_and_edges);
    tcase_add_test(tc, merge_saturates_counts_at_2_64_and_times_at_dbl_max);
    suite_add_tcase(s, tc);
    return fnp_check_run(s);
}
/* SPDX-License-Identifier: MIT */
