/* SPDX-License-Identifier: MIT */
/*
 * The one-sided rank-sum test (Wilcoxon-Mann-Whitney) and Holm's correction, for fnprof
 * diff's runs form (docs/diff.md, "Several runs a side"): is NEW's sample of a function's
 * times larger than BASE's beyond the spread the runs show on their own?
 *
 * The statistic is W, the sum of NEW's ranks in the pooled sample, tied values sharing
 * their mean rank. Its p-value is P(W >= w) when every choice of which n of the m + n
 * values are NEW's is equally likely: the permutation distribution, exact and conditional
 * on the ties, counted by a dynamic programme over the groups of tied values. Ranks are
 * doubled (a mean rank (i + j) / 2 becomes i + j) so that every sum is an integer. Counts
 * stay below C(40, 20) < 2^53, exact in a double; beyond FNP_RANKTEST_EXACT_MAX values the
 * normal approximation (tie-corrected variance, continuity correction) takes over.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"

void fnp_ranktest_init(struct fnp_ranktest *t)
{
    memset(t, 0, sizeof(*t));
}

void fnp_ranktest_free(struct fnp_ranktest *t)
{
    if (!t)
        return;
    free(t->pool);
    free(t->count);
    memset(t, 0, sizeof(*t));
}

double fnp_ranktest_min_p(size_t m, size_t n)
{
    /* 1 / C(m + n, n), the product kept as a ratio so that it never overflows. */
    double p = 1;
    for (size_t i = 1; i <= n; i++)
        p = p * (double)i / (double)(m + i);
    return p;
}

size_t fnp_ranktest_runs_needed(double alpha, size_t k)
{
    if (k == 0)
        return 0;
    for (size_t n = 1; n < 64; n++)
        if (fnp_ranktest_within(fnp_ranktest_min_p(n, n), alpha / (double)k))
            return n;
    return 64;
}

struct pooled {
    double v;
    int next; /* 1 for NEW's values */
};

static int cmp_pooled(const void *a, const void *b)
{
    double x = ((const struct pooled *)a)->v, y = ((const struct pooled *)b)->v;
    return x < y ? -1 : x > y;
}

/* Room for the pooled sample and, where exact, the counts: (n + 1) rows of sums. */
static int reserve(struct fnp_ranktest *t, size_t total, size_t cells)
{
    if (total > t->pool_cap) {
        struct pooled *p = realloc(t->pool, total * sizeof(*p));
        if (!p)
            return -ENOMEM;
        t->pool = p;
        t->pool_cap = total;
    }
    if (cells > t->count_cap) {
        double *c = realloc(t->count, cells * sizeof(*c));
        if (!c)
            return -ENOMEM;
        t->count = c;
        t->count_cap = cells;
    }
    return 0;
}

/*
 * P(W2 >= w2) by counting: count[j][s] is the number of ways to pick j of the values seen
 * so far with doubled ranks summing to s. A group of t tied values at doubled rank r adds,
 * for each c of them picked, C(t, c) ways and c * r to the sum. Rows are walked from the
 * top down so that each group is added once (as in a 0/1 knapsack).
 */
static double exact_tail(struct fnp_ranktest *t, size_t total, size_t n, long w2)
{
    const struct pooled *v = t->pool;
    size_t smax = n * (2 * total - n + 1); /* the n largest doubled ranks */
    size_t width = smax + 1;
    double *count = t->count;
    memset(count, 0, (n + 1) * width * sizeof(*count));
    count[0] = 1;
    size_t seen = 0;
    for (size_t i = 0; i < total;) {
        size_t j = i;
        while (j < total && v[j].v == v[i].v)
            j++;
        size_t tied = j - i;
        size_t r = (i + 1) + j; /* doubled mean rank of positions i+1 .. j */
        /* Sums reachable so far: at most the doubled ranks of everything seen. */
        size_t reach = seen * (seen + 1);
        if (reach > smax)
            reach = smax;
        for (size_t have = (seen < n ? seen : n) + 1; have-- > 0;) {
            double *row = count + have * width;
            for (size_t s = 0; s <= reach; s++) {
                if (row[s] == 0)
                    continue;
                double ways = 1; /* C(tied, c), built up as c grows */
                for (size_t c = 1; c <= tied && have + c <= n; c++) {
                    ways = ways * (double)(tied - c + 1) / (double)c;
                    size_t to = s + c * r;
                    if (to <= smax)
                        count[(have + c) * width + to] += row[s] * ways;
                }
            }
        }
        seen += tied;
        i = j;
    }
    double all = 0, tail = 0;
    const double *top = count + n * width;
    for (size_t s = 0; s <= smax; s++) {
        all += top[s];
        if ((long)s >= w2)
            tail += top[s];
    }
    return all > 0 ? tail / all : 1;
}

int fnp_ranktest_p(struct fnp_ranktest *t, const double *base, size_t m, const double *next,
                   size_t n, double *p)
{
    *p = 1;
    if (m == 0 || n == 0)
        return 0;
    size_t total = m + n;
    int exact = total <= FNP_RANKTEST_EXACT_MAX;
    size_t cells = exact ? (n + 1) * (n * (2 * total - n + 1) + 1) : 0;
    if (reserve(t, total, cells))
        return -ENOMEM;
    for (size_t i = 0; i < m; i++)
        t->pool[i] = (struct pooled){base[i], 0};
    for (size_t i = 0; i < n; i++)
        t->pool[m + i] = (struct pooled){next[i], 1};
    qsort(t->pool, total, sizeof(*t->pool), cmp_pooled);
    /* NEW's doubled rank sum, and the ties' correction of the variance. */
    long w2 = 0;
    double ties = 0;
    for (size_t i = 0; i < total;) {
        size_t j = i, picked = 0;
        while (j < total && t->pool[j].v == t->pool[i].v)
            picked += (size_t)t->pool[j++].next;
        w2 += (long)(picked * ((i + 1) + j));
        double tied = (double)(j - i);
        ties += tied * tied * tied - tied;
        i = j;
    }
    if (exact) {
        *p = exact_tail(t, total, n, w2);
        return 0;
    }
    double N = (double)total;
    double mean = (double)n * (N + 1) / 2;
    double var = (double)m * (double)n / 12 * ((N + 1) - ties / (N * (N - 1)));
    if (var <= 0) /* every value tied: no evidence either way */
        return 0;
    double z = ((double)w2 / 2 - mean - 0.5) / sqrt(var);
    *p = 0.5 * erfc(z / sqrt(2));
    return 0;
}

static int cmp_p(const void *a, const void *b, void *p_)
{
    const double *p = p_;
    double x = p[*(const size_t *)a], y = p[*(const size_t *)b];
    if (x != y)
        return x < y ? -1 : 1;
    /* Equal p-values: by index, so that the order never depends on the sort. */
    return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

int fnp_ranktest_holm(const double *p, size_t k, double alpha, unsigned char *reject,
                      double *adjusted)
{
    size_t *order = malloc((k + 1) * sizeof(*order));
    if (!order)
        return -ENOMEM;
    for (size_t i = 0; i < k; i++) {
        order[i] = i;
        reject[i] = 0;
    }
    qsort_r(order, k, sizeof(*order), cmp_p, (void *)p);
    /* Step down: the i-th smallest p (from 0) against alpha / (k - i), and the first
     * above its bound stops every later one. The same as adjusting each p to the largest
     * (k - j) * p_j of those up to it and rejecting those at most alpha: one number a
     * reader can hold against alpha. */
    double adj = 0;
    for (size_t i = 0; i < k; i++) {
        double a = (double)(k - i) * p[order[i]];
        adj = a > adj ? a : adj;
        adj = adj < 1 ? adj : 1;
        if (adjusted)
            adjusted[order[i]] = adj;
        reject[order[i]] = (unsigned char)fnp_ranktest_within(adj, alpha);
    }
    free(order);
    return 0;
}
