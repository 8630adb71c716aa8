/* SPDX-License-Identifier: MIT */
/*
 * Whether a profile's dict follows its tree: the tree's own times, in ticks of its
 * tick_seconds, add up to the dict's tottimes within rounding (docs/tree-format.md, "The
 * tick against the dict"). The reader holds every file to it (tree_read.c); compensation
 * (compensate.c) keeps to it what it writes, so that a compensated file reads back.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

/* The runs a merge added (its "merged" metadata), each of which may round its ticks when
 * rescaled to the first run's clock; 1 when not said. Bounded so that a crafted count
 * cannot switch the check off. */
static double runs_of(const struct fnp_profile *p)
{
    const char *v = fnp_profile_meta(p, "merged");
    if (!v || !*v || strspn(v, "0123456789") != strlen(v) || strlen(v) > 7)
        return 1;
    double n = strtod(v, NULL);
    return n >= 1 ? n : 1;
}

#define HUGE_TICKS (UINT64_C(1) << 62)

int fnp_tree_dict_gap(const struct fnp_profile *p, size_t nkeys, double *tree_s, double *dict_s)
{
    if (p->tree_kind == FNP_TREE_NONE || !p->ntree || nkeys > p->nfuncs)
        return 0;
    /* A function's tottime is the sum of its nodes' own ticks (ticks less back less the
     * children's ticks), 0 when that sum is negative (clock noise), times tick_seconds.
     * Summed as model.c sums them, in 64 bits that wrap: a crafted snapshot's wrapped sums
     * are what its dict was made from. */
    int64_t *own = calloc(nkeys ? nkeys : 1, sizeof(*own));
    /* the same sums without wrapping: where they differ, a function's sum passed 2^63 */
    __int128 *wide = calloc(nkeys ? nkeys : 1, sizeof(*wide));
    if (!own || !wide) {
        free(own);
        free(wide);
        return -ENOMEM;
    }
    for (size_t i = 0; i < p->ntree; i++) {
        const struct fnp_tree_node *nd = &p->tree[i];
        /* Saturated, or past 2^62 ticks (146 years at 1 ns: no real run, only crafted or
         * merged-past-2^64 files), where 64-bit sums wrap in one place and saturate in
         * another: the dict holds more than the tree can say. */
        uint64_t back = nd->back < 0 ? 0 - (uint64_t)nd->back : (uint64_t)nd->back;
        if (nd->ticks >= HUGE_TICKS || back >= HUGE_TICKS || nd->func >= nkeys) {
            free(own);
            free(wide);
            return 0;
        }
        own[nd->func] = (int64_t)((uint64_t)own[nd->func] + nd->ticks - nd->back);
        wide[nd->func] += (__int128)nd->ticks - nd->back;
        if (nd->parent != FNP_NO_PARENT) {
            int64_t *up = &own[p->tree[nd->parent].func];
            *up = (int64_t)((uint64_t)*up - nd->ticks);
            wide[p->tree[nd->parent].func] -= nd->ticks;
        }
    }
    /* A function's sum past 2^63 (nodes under 2^62 each, many of them: a merge of large
     * runs) wraps here; the dict, summed run by run, wrapped elsewhere or not at all. As
     * for a saturated node, the tree then says less than the dict, and nothing is held. */
    for (size_t f = 0; f < nkeys; f++)
        if (wide[f] != (__int128)own[f]) {
            free(own);
            free(wide);
            return 0;
        }
    free(wide);
    double ticks = 0, dict = 0;
    for (size_t f = 0; f < nkeys; f++) {
        ticks += own[f] > 0 ? (double)own[f] : 0;
        dict += p->funcs[f].st.tottime;
        /* a tottime past 2^62 ticks: a saturated sum (model.c), doubled by each merge,
         * which the tree's wrapped sums no longer follow */
        if (p->funcs[f].st.tottime >= (double)HUGE_TICKS * p->tick_seconds) {
            free(own);
            return 0;
        }
    }
    free(own);
    /* Past 2^61 ticks in all (73 years at 1 ns): no run's, only a crafted file's or sums of
     * merges near the 64-bit bounds, where the tree's wrapped or saturated sums and the
     * dict's doubles part ways in ways the slack below cannot follow. */
    if (ticks >= (double)(UINT64_C(1) << 61) ||
        dict >= (double)(UINT64_C(1) << 61) * p->tick_seconds)
        return 0;
    double tree = ticks * p->tick_seconds;
    /* The slack's ticks at the shorter of the trailer's tick and the one the dict implies:
     * a tick made 1000 times longer must not widen the slack 1000 times. */
    double unit = ticks > 0 && dict / ticks < p->tick_seconds ? dict / ticks : p->tick_seconds;
    /* Within rounding: the same sums in another order for one run; for a merge, each run's
     * ticks rescaled to the first's clock, to the nearest tick (a node's own time touches
     * its ticks, its back and its children's ticks: under 2 ticks a node a run), and
     * noise that one run's sum clamped at 0 and the merged one did not. */
    double slack = 1e-6 * (tree > dict ? tree : dict) + 2.0 * (double)p->ntree * runs_of(p) * unit;
    *tree_s = tree;
    *dict_s = dict;
    return fabs(tree - dict) > slack;
}
