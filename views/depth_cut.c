/* SPDX-License-Identifier: MIT */
/*
 * The depth cut: a tree whose paths are at most max_depth + 1 frames long, for the views
 * that write a path per calling context (collapsed stacks, speedscope's samples, pprof's
 * samples; struct fnp_view's paths). Their output grows with the sum of the contexts'
 * depths: a chain of 1e5 calls is 5e9 frames of collapsed text. Cut, it is at most
 * max_depth + 1 frames a context, and the cut itself is O(nodes).
 *
 * Every context deeper than max_depth is folded, with its subtree, into one frame per
 * context at depth max_depth - 1 (the cut's parent): a function named '[... N frames cut]'
 * ('~', 0, built-in as pstats names them), N the frames of the deepest folded path, whose
 * own value is the whole folded subtree's (fnp_tree_values' incl) and whose calls are the
 * folded contexts' calls. Totals, and every value above the cut, stay exact.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views.h"

static int by_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* The labels' functions after p's own: one per distinct N of folds[0, nfolds). */
static int add_labels(struct fnp_view_cut *c, const struct fnp_profile *p, const uint32_t *cut,
                      size_t nfolds, uint32_t **distinct, size_t *ndistinct)
{
    uint32_t *d = malloc((nfolds ? nfolds : 1) * sizeof(*d));
    if (!d)
        return -ENOMEM;
    memcpy(d, cut, nfolds * sizeof(*d));
    qsort(d, nfolds, sizeof(*d), by_u32);
    size_t n = 0;
    for (size_t i = 0; i < nfolds; i++)
        if (!n || d[n - 1] != d[i])
            d[n++] = d[i];
    *distinct = d;
    *ndistinct = n;
    c->view.funcs = malloc((p->nfuncs + n) * sizeof(*c->view.funcs));
    if (!c->view.funcs) {
        c->view.funcs = p->funcs;
        return -ENOMEM;
    }
    c->own_funcs = 1;
    c->first_label = p->nfuncs;
    memcpy(c->view.funcs, p->funcs, p->nfuncs * sizeof(*p->funcs));
    for (size_t i = 0; i < n; i++) {
        char name[64];
        snprintf(name, sizeof(name), "[... %u frame%s cut]", d[i], d[i] == 1 ? "" : "s");
        struct fnp_func *f = &c->view.funcs[p->nfuncs + i];
        memset(f, 0, sizeof(*f));
        f->key.file = "~";
        f->key.name = strdup(name);
        if (!f->key.name)
            return -ENOMEM;
        c->view.nfuncs++;
    }
    return 0;
}

int fnp_view_cut(const struct fnp_profile *p, uint32_t max_depth, struct fnp_view_cut *c)
{
    memset(c, 0, sizeof(*c));
    c->view = *p;
    c->max_depth = max_depth;
    size_t n = p->ntree;
    uint32_t *depth = malloc((n ? n : 1) * sizeof(*depth));
    if (!depth)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        uint32_t up = p->tree[i].parent;
        depth[i] = up == FNP_NO_PARENT ? 0 : depth[up] + 1; /* n < 2^32 levels */
        if (depth[i] + 1 > c->deepest)
            c->deepest = depth[i] + 1;
    }
    if (!max_depth || c->deepest <= max_depth) {
        free(depth);
        return 0; /* nothing to cut: c->view is p */
    }
    int rc = -ENOMEM;
    uint64_t *self = malloc(n * sizeof(*self));
    uint64_t *incl = malloc(n * sizeof(*incl));
    uint32_t *fold = malloc(n * sizeof(*fold)); /* a cut parent's fold node, in t */
    uint32_t *newidx = malloc(n * sizeof(*newidx));
    uint32_t *folds = malloc(n * sizeof(*folds));  /* the fold nodes, in t */
    uint32_t *frames = calloc(n, sizeof(*frames)); /* theirs: the frames cut */
    uint32_t *distinct = NULL;
    struct fnp_tree_node *t = malloc(n * sizeof(*t));
    if (!self || !incl || !fold || !newidx || !folds || !frames || !t)
        goto out;
    fnp_tree_values(p, self, incl);
    /* Pre-order: a node above the cut is copied; the first context at the cut under a
     * parent makes that parent's fold node, right after it (all the parent's children are
     * at the cut, so the order stays pre-order); every folded context adds to it. A folded
     * node's newidx is its fold node. */
    size_t nt = 0, nfolds = 0;
    for (size_t i = 0; i < n; i++) {
        const struct fnp_tree_node *nd = &p->tree[i];
        fold[i] = UINT32_MAX;
        if (depth[i] < max_depth) {
            newidx[i] = (uint32_t)nt;
            t[nt] = *nd;
            t[nt].parent = nd->parent == FNP_NO_PARENT ? FNP_NO_PARENT : newidx[nd->parent];
            nt++;
            continue;
        }
        uint32_t f;
        if (depth[i] == max_depth) {
            if (fold[nd->parent] == UINT32_MAX) {
                fold[nd->parent] = (uint32_t)nt;
                folds[nfolds++] = (uint32_t)nt;
                t[nt] = (struct fnp_tree_node){.parent = newidx[nd->parent], .thread = nd->thread};
                nt++;
            }
            f = fold[nd->parent];
            /* The fold's own value is the folded subtrees' incl: its ticks less its back
             * (it has no children); its ticks are the folded children's, so its parent's
             * own value is what it was. Wrapping, as fnp_tree_values. */
            t[f].ticks += nd->ticks;
            t[f].back = (int64_t)((uint64_t)t[f].back + (nd->ticks - incl[i]));
        } else {
            f = newidx[nd->parent];
        }
        newidx[i] = f;
        t[f].ncalls = fnp_sat_add(t[f].ncalls, nd->ncalls);
        if (depth[i] - max_depth + 1 > frames[f])
            frames[f] = depth[i] - max_depth + 1;
        c->contexts++;
    }
    /* One label function per distinct count of frames cut, after p's functions. */
    size_t nlabels;
    uint32_t *counts = malloc((nfolds ? nfolds : 1) * sizeof(*counts));
    if (!counts)
        goto out;
    for (size_t k = 0; k < nfolds; k++)
        counts[k] = frames[folds[k]];
    rc = add_labels(c, p, counts, nfolds, &distinct, &nlabels);
    free(counts);
    if (rc)
        goto out;
    for (size_t k = 0; k < nfolds; k++) {
        uint32_t *at = bsearch(&frames[folds[k]], distinct, nlabels, sizeof(*distinct), by_u32);
        t[folds[k]].func = (uint32_t)(p->nfuncs + (size_t)(at - distinct));
    }
    c->folds = nfolds;
    c->view.tree = t;
    c->view.ntree = c->view.tree_cap = nt;
    c->view.mem = NULL;        /* no view draws memory columns */
    c->view.func_slots = NULL; /* a lookup would not find the labels: none is made */
    c->cut = 1;
    t = NULL;
    rc = 0;
out:
    if (rc)
        fnp_view_cut_free(c);
    free(depth);
    free(self);
    free(incl);
    free(fold);
    free(newidx);
    free(folds);
    free(frames);
    free(distinct);
    free(t);
    return rc;
}

void fnp_view_cut_free(struct fnp_view_cut *c)
{
    if (!c)
        return;
    if (c->own_funcs) {
        for (size_t i = c->first_label; i < c->view.nfuncs; i++)
            free((char *)c->view.funcs[i].key.name);
        free(c->view.funcs);
    }
    if (c->cut)
        free(c->view.tree);
    memset(c, 0, sizeof(*c));
}
