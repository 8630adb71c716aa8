/* SPDX-License-Identifier: MIT */
/*
 * The pstats writer: the dict cProfile's dump_stats marshals (docs/pstats.md).
 *   {(file, line, name): (pcalls, ncalls, tottime, cumtime, {caller key: (ncalls, pcalls,
 *    tottime, cumtime)})}
 * Note the order flip: the function tuple puts primitive calls first, the edge tuple the
 * total first. Every caller is a function of the profile, hence also a top-level key.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "profile.h"

/* snakeviz pastes the numbers into a page: NaN or Inf break it, negatives hide subtrees. */
static double clean_time(double t)
{
    return isfinite(t) && t > 0 ? t : 0.0;
}

static void write_key(struct fnp_sink *s, const struct fnp_key *k)
{
    fnp_marshal_tuple(s, 3);
    fnp_marshal_str(s, k->file);
    fnp_marshal_int(s, k->line);
    fnp_marshal_str(s, k->name);
}

static int by_callee(const void *a, const void *b, void *edges_)
{
    const struct fnp_edge *edges = edges_;
    const struct fnp_edge *x = &edges[*(const uint32_t *)a], *y = &edges[*(const uint32_t *)b];
    if (x->callee != y->callee)
        return x->callee < y->callee ? -1 : 1;
    return x->caller < y->caller ? -1 : x->caller > y->caller;
}

int fnp_pstats_write(const struct fnp_profile *p, struct fnp_sink *s)
{
    uint32_t *order = malloc((p->nedges ? p->nedges : 1) * sizeof(*order));
    if (!order)
        return s->err = -ENOMEM;
    for (size_t i = 0; i < p->nedges; i++)
        order[i] = (uint32_t)i;
    qsort_r(order, p->nedges, sizeof(*order), by_callee, p->edges);

    fnp_marshal_dict_begin(s);
    size_t e = 0;
    for (size_t f = 0; f < p->nfuncs; f++) {
        const struct fnp_func *fn = &p->funcs[f];
        write_key(s, &fn->key);
        fnp_marshal_tuple(s, 5);
        fnp_marshal_int(s, fn->st.pcalls);
        fnp_marshal_int(s, fn->st.ncalls);
        fnp_marshal_float(s, clean_time(fn->st.tottime));
        fnp_marshal_float(s, clean_time(fn->st.cumtime));
        fnp_marshal_dict_begin(s);
        for (; e < p->nedges && p->edges[order[e]].callee == f; e++) {
            const struct fnp_edge *ed = &p->edges[order[e]];
            write_key(s, &p->funcs[ed->caller].key);
            fnp_marshal_tuple(s, 4);
            fnp_marshal_int(s, ed->st.ncalls);
            fnp_marshal_int(s, ed->st.pcalls);
            fnp_marshal_float(s, clean_time(ed->st.tottime));
            fnp_marshal_float(s, clean_time(ed->st.cumtime));
        }
        fnp_marshal_dict_end(s);
    }
    fnp_marshal_dict_end(s);
    free(order);
    return s->err;
}
